"""What every HTTP search provider shares: failures are ``WEB_PROVIDER_ERROR`` naming the
provider, the key never leaks, cancellation closes the connection. Each runs against a local
replay server; the per-provider files test the mapping of each API's own shape."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from _servers import LocalServer, tls_contexts
from replay_server import ReplayServer, Reply
from webreach.net import create_client
from webreach.providers.search.brave import BraveSearchProvider
from webreach.providers.search.deepseek import DeepSeekSearchProvider
from webreach.providers.search.exa import ExaSearchProvider
from webreach.providers.search.jina import JinaSearchProvider
from webreach.providers.search.kagi import KagiSearchProvider
from webreach.providers.search.perplexity import PerplexitySearchProvider
from webreach.providers.search.searxng import SearxngSearchProvider
from webreach.providers.search.tavily import TavilySearchProvider
from webreach.seam import SearchProvider, SearchRequest, WebError, WebErrorCode

Factory = Callable[[str, httpx.AsyncClient, str], SearchProvider]
"""``(base_url, client, secret) -> provider``."""


@dataclass(frozen=True)
class Case:
    id: str
    method: str
    path: str
    ok: Any
    """A minimal valid response with one result."""
    make: Factory
    results_key: str

    @property
    def canary(self) -> str:
        return f"{self.id}-canary-key-5e0b1f"


_ONE = {"url": "https://example.org/", "title": "Example"}

_DEEPSEEK_MESSAGE = {
    "type": "message",
    "role": "assistant",
    "content": [
        {
            "type": "web_search_tool_result",
            "tool_use_id": "t",
            "content": [{"type": "web_search_result", **_ONE}],
        },
        {"type": "text", "text": "An answer."},
    ],
}

CASES = [
    Case(
        "exa",
        "POST",
        "/search",
        {"results": [_ONE]},
        lambda base, client, key: ExaSearchProvider(api_key=key, base_url=base, client=client),
        "results",
    ),
    Case(
        "perplexity",
        "POST",
        "/chat/completions",
        {"choices": [{"message": {"content": "An answer."}}], "search_results": [_ONE]},
        lambda base, client, key: PerplexitySearchProvider(
            api_key=key, base_url=base, client=client
        ),
        "choices",
    ),
    Case(
        "deepseek",
        "POST",
        "/anthropic/v1/messages",
        _DEEPSEEK_MESSAGE,
        lambda base, client, key: DeepSeekSearchProvider(api_key=key, base_url=base, client=client),
        "content",
    ),
    Case(
        "brave",
        "GET",
        "/res/v1/web/search",
        {"type": "search", "web": {"type": "search", "results": [_ONE]}},
        lambda base, client, key: BraveSearchProvider(api_key=key, base_url=base, client=client),
        "web",
    ),
    Case(
        "tavily",
        "POST",
        "/search",
        {"query": "q", "answer": None, "results": [_ONE]},
        lambda base, client, key: TavilySearchProvider(api_key=key, base_url=base, client=client),
        "results",
    ),
    Case(
        "searxng",
        "GET",
        "/search",
        {"query": "q", "results": [_ONE]},
        lambda base, client, key: SearxngSearchProvider(base_url=base, token=key, client=client),
        "results",
    ),
    Case(
        "jina",
        "GET",
        "/",
        {"code": 200, "status": 20000, "data": [_ONE]},
        lambda base, client, key: JinaSearchProvider(api_key=key, base_url=base, client=client),
        "data",
    ),
    Case(
        "kagi",
        "POST",
        "/api/v1/search",
        {"meta": {"trace": "x"}, "data": {"search": [_ONE]}},
        lambda base, client, key: KagiSearchProvider(api_key=key, base_url=base, client=client),
        "data",
    ),
]


@pytest.fixture(params=CASES, ids=[case.id for case in CASES])
def case(request: pytest.FixtureRequest) -> Case:
    chosen: Case = request.param
    return chosen


def provider(case: Case, replay: ReplayServer, client: httpx.AsyncClient) -> SearchProvider:
    return case.make(replay.url, client, case.canary)


async def test_the_minimal_response_is_one_source(
    case: Case, replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route(case.method, case.path, Reply(json=case.ok))
    result = await provider(case, replay, client).search(SearchRequest("q"))
    assert [(s.url, s.title) for s in result.sources] == [("https://example.org/", "Example")]


async def test_the_key_travels_in_a_header_only(
    case: Case, replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route(case.method, case.path, Reply(json=case.ok))
    await provider(case, replay, client).search(SearchRequest("q"))
    sent = replay.requests[0]
    assert any(case.canary in value for value in sent.headers.values())
    assert case.canary not in repr(sent.query) + sent.path + sent.body.decode()


FAILURES = [
    pytest.param(
        Reply(401, json={"error": "bad key"}), "authorization failed (HTTP 401)", id="401"
    ),
    pytest.param(Reply(403, json={}), "authorization failed (HTTP 403)", id="403"),
    pytest.param(
        Reply(429, json={}, headers={"retry-after": "2"}),
        "rate limited (HTTP 429), retry after 2 s",
        id="429-retry-after",
    ),
    pytest.param(Reply(429, json={}), "rate limited (HTTP 429)", id="429"),
    pytest.param(Reply(500, json={}), "server error (HTTP 500)", id="500"),
    pytest.param(Reply(400, json={}), "request rejected (HTTP 400)", id="400"),
    pytest.param(Reply(body=b"<html>oops</html>"), "the response is not valid JSON", id="bad-json"),
    pytest.param(Reply(json={"unrelated": []}), "unexpected response shape", id="missing-field"),
    pytest.param(Reply(json=["not", "an", "object"]), "unexpected response shape", id="not-object"),
]


@pytest.mark.parametrize(("reply", "expected"), FAILURES)
async def test_failures_are_provider_errors_naming_the_provider(
    case: Case, replay: ReplayServer, client: httpx.AsyncClient, reply: Reply, expected: str
) -> None:
    replay.route(case.method, case.path, reply)
    with pytest.raises(WebError) as caught:
        await provider(case, replay, client).search(SearchRequest("q"))
    error = caught.value
    assert error.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert error.provider == case.id
    assert error.message.startswith(f"{case.id}: {expected}")
    if reply.status >= 400:
        assert error.status == reply.status
    if "retry-after" in reply.headers:
        assert error.retry_after == 2.0


async def test_a_mistyped_results_field_is_a_provider_error(
    case: Case, replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route(case.method, case.path, Reply(json={**case.ok, case.results_key: "nope"}))
    with pytest.raises(WebError) as caught:
        await provider(case, replay, client).search(SearchRequest("q"))
    assert caught.value.message == (
        f"{case.id}: unexpected response shape (no valid {case.results_key!r})"
    )


async def test_an_echoed_key_never_reaches_messages_repr_or_logs(
    case: Case,
    replay: ReplayServer,
    client: httpx.AsyncClient,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = {"error": f"invalid key {case.canary}", "detail": case.canary}
    for status in (401, 429, 500):
        replay.route(case.method, case.path, Reply(status, json=echo))
        with pytest.raises(WebError) as caught:
            await provider(case, replay, client).search(SearchRequest("q"))
        error = caught.value
        assert case.canary not in error.message + repr(error) + str(error)
    assert case.canary not in repr(provider(case, replay, client))
    assert case.canary not in caplog.text


async def test_unreachable_endpoint(case: Case, client: httpx.AsyncClient) -> None:
    unreachable = case.make("http://127.0.0.1:9", client, case.canary)
    with pytest.raises(WebError) as caught:
        await unreachable.search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.provider == case.id
    assert caught.value.message == f"{case.id}: request failed (connection refused by 127.0.0.1:9)"
    assert case.canary not in repr(caught.value)


async def test_an_untrusted_certificate_is_named_as_tls(
    case: Case, client: httpx.AsyncClient
) -> None:
    """A TLS failure says so, with the library's short reason, not as a generic failure."""
    server_tls, _ = tls_contexts("127.0.0.1")
    async with LocalServer({}, tls=server_tls) as server:
        base = f"https://127.0.0.1:{server.port}"
        with pytest.raises(WebError) as caught:
            await case.make(base, client, case.canary).search(SearchRequest("q"))
    message = caught.value.message
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert message.startswith(f"{case.id}: request failed (TLS handshake with 127.0.0.1:")
    assert message.endswith(" failed (self-signed certificate))")
    assert case.canary not in repr(caught.value)


async def test_timeout_is_a_provider_error(case: Case, replay: ReplayServer) -> None:
    gate = threading.Event()
    replay.route(case.method, case.path, Reply(json=case.ok, hold=gate))
    try:
        async with create_client(timeout=0.2) as short:
            with pytest.raises(WebError) as caught:
                await case.make(replay.url, short, case.canary).search(SearchRequest("q"))
    finally:
        gate.set()
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.message == f"{case.id}: the request timed out"


async def test_cancellation_closes_the_connection(
    case: Case, replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    gate = threading.Event()
    replay.route(case.method, case.path, Reply(json=case.ok, hold=gate))
    task = asyncio.create_task(provider(case, replay, client).search(SearchRequest("q")))
    while not replay.requests:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(500):
        if replay.disconnects:
            break
        await asyncio.sleep(0.01)
    gate.set()
    assert replay.disconnects == 1
