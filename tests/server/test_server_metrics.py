"""Prometheus metrics at ``/metrics``: requests driven through the official openai SDK, the page
scraped and read by the Prometheus client's own parser."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.types import Receive, Scope, Send

from providers_for_tests import ScriptedFetch, ScriptedSearch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import openai_client
from server_harness import LiveServer, default_search
from webreach.cache import MemoryStore
from webreach.seam import SearchRequest, SearchResult, WebError, WebErrorCode, WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.server.metrics import KEY_NAME_STATE
from webreach.tools import ToolOptions

USER = [{"role": "user", "content": "How many people live in Iceland?"}]
WEB = [{"type": "deepseek_web_search"}]
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@contextmanager
def serving(
    upstream: ScriptedUpstream, search: ScriptedSearch | None = None, **settings: object
) -> Iterator[str]:
    given: dict[str, object] = {
        "upstream_base_url": upstream.url,
        "upstream_api_key": "upstream-key",
        "signing_key": "test-signing-key-of-32-bytes-or-more",
        **settings,
    }
    config = ServerSettings(**given)  # type: ignore[arg-type]
    runtime = WebRuntime()
    runtime.register_search_provider(search or default_search())
    runtime.register_fetch_provider(ScriptedFetch())
    app = create_app(config, runtime, ToolOptions(), store=MemoryStore())
    with LiveServer(app) as server:
        yield server.url


def scrape(url: str, key: str | None = None) -> Samples:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    response = httpx.get(url + "/metrics", headers=headers, timeout=10)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_requests_searches_upstream_calls_and_tokens_are_counted(
    upstream: ScriptedUpstream,
) -> None:
    with serving(upstream) as url:
        client = openai_client(url + "/v1")
        upstream.queue(
            Step(calls=[Call("web_search", {"queries": ["Iceland population"]})]),
            Step(content="About 390,000 people.", usage=(100, 7)),
        )
        reply = client.chat.completions.create(model="m", messages=USER, tools=WEB)  # type: ignore[list-item]
        assert reply.choices[0].message.content
        upstream.queue(Step(content="Streamed.", usage=(3, 2)))
        chunks = list(
            client.chat.completions.create(model="m", messages=USER, tools=WEB, stream=True)  # type: ignore[list-item]
        )
        assert chunks
        with_bad_model = httpx.post(url + "/v1/chat/completions", json={"messages": "no"})
        assert with_bad_model.status_code == 400
        assert httpx.get(url + "/no/such/path").status_code == 404
        samples = scrape(url)

    requests = "webreach_requests_total"
    chat = {"path": "/v1/chat/completions", "protocol": "chat", "key": "-"}
    assert value(samples, requests, **chat, status="200", stream="false") == 1
    assert value(samples, requests, **chat, status="200", stream="true") == 1
    assert value(samples, requests, **chat, status="400", stream="-") == 1
    assert value(samples, requests, path="other", protocol="-", status="404", stream="-", key="-")
    seconds = "webreach_request_duration_seconds_count"
    assert value(samples, seconds, protocol="chat", key="-") == 3
    search = {"tool": "search", "provider": "replay", "key": "-"}
    assert value(samples, "webreach_web_calls_total", **search, outcome="ok")
    assert value(samples, "webreach_web_call_duration_seconds_count", **search) == 1
    assert value(samples, "webreach_upstream_requests_total", call="chat", status="200") >= 3
    # the default step's usage is (10, 5): the search step, then the answer, then the stream
    assert value(samples, "webreach_upstream_tokens_total", kind="prompt", key="-") == 10 + 100 + 3
    assert value(samples, "webreach_upstream_tokens_total", kind="completion", key="-") == 5 + 7 + 2


def test_failed_searches_count_under_their_error_code(upstream: ScriptedUpstream) -> None:
    async def failing(request: SearchRequest) -> SearchResult:
        raise WebError(WebErrorCode.WEB_PROVIDER_ERROR, "scripted outage", provider="down")

    with serving(upstream, ScriptedSearch("down", behaviour=failing)) as url:
        answer = httpx.post(url + "/v1/search", json={"queries": ["x"]}, timeout=10)
        assert answer.status_code >= 400
        samples = scrape(url)
    outcome = "web_provider_error"
    assert value(
        samples,
        "webreach_web_calls_total",
        tool="search",
        provider="down",
        outcome=outcome,
        key="-",
    )
    assert value(samples, "webreach_requests_total", path="/v1/search", protocol="search",
                 status=str(answer.status_code), stream="-", key="-") == 1  # fmt: skip


def test_upstream_failures_count_by_status(upstream: ScriptedUpstream) -> None:
    with serving(upstream) as url:
        upstream.queue(Step(status=503, error="overloaded"))
        client = openai_client(url + "/v1")
        with pytest.raises(openai.APIStatusError) as failed:
            client.chat.completions.create(model="m", messages=USER, tools=WEB)  # type: ignore[list-item]
        assert failed.value.status_code >= 500
        samples = scrape(url)
    assert value(samples, "webreach_upstream_requests_total", call="chat", status="503") == 1


def test_metrics_need_an_inbound_key_when_the_server_has_keys(upstream: ScriptedUpstream) -> None:
    with serving(upstream, server_api_keys="secret-one,secret-two") as url:
        assert httpx.get(url + "/metrics").status_code == 401
        samples = scrape(url, "secret-two")
    assert value(samples, "webreach_requests_total", path="/metrics", protocol="metrics",
                 status="401", stream="-", key="-") == 1  # fmt: skip
    assert all("secret" not in str(labels) for _, labels in samples)


def test_metrics_turned_off_has_no_route(upstream: ScriptedUpstream) -> None:
    with serving(upstream, metrics=False) as url:
        assert httpx.get(url + "/metrics").status_code == 404
        assert httpx.get(url + "/healthz").status_code == 200


def test_two_apps_in_one_process_count_apart(upstream: ScriptedUpstream) -> None:
    with serving(upstream) as first, serving(upstream) as second:
        assert httpx.get(first + "/healthz").status_code == 200
        one, other = scrape(first), scrape(second)
    health = {"path": "/healthz", "protocol": "health", "status": "200", "stream": "-", "key": "-"}
    assert value(one, "webreach_requests_total", **health) == 1
    assert value(other, "webreach_requests_total", **health) == 0


def test_the_key_label_is_the_name_the_key_check_leaves_in_the_scope_state(
    upstream: ScriptedUpstream,
) -> None:
    """The inbound-key check names the request's key in ``scope["state"]`` (never the secret);
    here a wrapper stands in for it."""
    config = ServerSettings(upstream_base_url=upstream.url, upstream_api_key="upstream-key")
    runtime = WebRuntime()
    runtime.register_search_provider(default_search())
    app = create_app(config, runtime, ToolOptions())

    async def named(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope.setdefault("state", {})[KEY_NAME_STATE] = "alice"
        await app(scope, receive, send)

    with LiveServer(named) as server:
        assert httpx.get(server.url + "/v1/models").status_code == 200
        samples = scrape(server.url)
    models = {"path": "/v1/models", "protocol": "models", "status": "200", "stream": "-"}
    assert value(samples, "webreach_requests_total", **models, key="alice") == 1


def test_a_named_inbound_key_labels_its_requests(upstream: ScriptedUpstream) -> None:
    """The key check names the request's key; the metrics take that name, never the secret."""
    secret = "alice-secret-key-4d1f"
    settings = ServerSettings(upstream_base_url=upstream.url, server_api_keys=f"alice:{secret}")
    app = create_app(settings, WebRuntime(), ToolOptions(), store=MemoryStore())
    with LiveServer(app) as server:
        client = openai_client(server.url + "/v1", secret)
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        scraped = httpx.get(server.url + "/metrics", headers={"Authorization": f"Bearer {secret}"})
    assert secret not in scraped.text
    requests = next(
        f for f in text_string_to_metric_families(scraped.text) if f.name == "webreach_requests"
    )
    keys = {
        s.labels["key"] for s in requests.samples if s.labels.get("path") == "/v1/chat/completions"
    }
    assert keys == {"alice"}


def test_an_upstream_call_without_an_answer_counts_under_its_cause(
    upstream: ScriptedUpstream,
) -> None:
    """A refused connection has no HTTP status: it counts under why there was none, for the
    server's own turn and for a relayed request alike."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        nobody = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    with serving(upstream, upstream_base_url=nobody) as url:
        body = {"model": "m", "messages": USER}
        for extra in ({"tools": WEB}, {}):
            answer = httpx.post(url + "/v1/chat/completions", json={**body, **extra}, timeout=10)
            assert answer.status_code == 502, answer.text
        samples = scrape(url)
    assert value(samples, "webreach_upstream_requests_total", call="chat", status="refused") == 2


def test_with_an_admin_key_metrics_are_the_operators_and_label_web_calls_by_key(
    upstream: ScriptedUpstream,
) -> None:
    """Metrics name every key and its usage: with an admin key set, only it reads them, and a
    tenant's inbound key is refused as it is at /admin/usage."""
    secret, admin = "alice-secret-key-4d1f", "admin-secret-9e2a"
    keys = f"alice:{secret}"
    with serving(upstream, server_api_keys=keys, admin_api_key=admin) as url:
        client = openai_client(url + "/v1", secret)
        upstream.queue(
            Step(calls=[Call("web_search", {"queries": ["Iceland population"]})]),
            Step(content="About 390,000 people.", usage=(100, 7)),
        )
        client.chat.completions.create(model="m", messages=USER, tools=WEB)  # type: ignore[list-item]
        assert httpx.get(url + "/metrics").status_code == 401
        as_tenant = httpx.get(url + "/metrics", headers={"Authorization": f"Bearer {secret}"})
        assert as_tenant.status_code == 401
        assert "alice" not in as_tenant.text
        samples = scrape(url, admin)
    search = {"tool": "search", "provider": "replay", "key": "alice"}
    assert value(samples, "webreach_web_calls_total", **search, outcome="ok") == 1
    assert value(samples, "webreach_web_call_duration_seconds_count", **search) == 1
    chat_seconds = "webreach_request_duration_seconds_count"
    assert value(samples, chat_seconds, protocol="chat", key="alice") == 1
    assert all(secret not in str(labels) and admin not in str(labels) for _, labels in samples)
