"""Inbound keys as tenants: named keys in the access log (never the secret), per-key limits
answered 429 with ``Retry-After`` through the official SDKs, limits and usage shared by two
replicas on one redis-server, the admin usage endpoint, and Open WebUI's end user logged."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import anthropic
import httpx
import openai
import pytest

from providers_for_tests import ScriptedFetch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from server_harness import LiveServer, default_search
from webreach.cache import MemoryStore, RedisStore
from webreach.seam import CacheStore, WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.server.logs import JsonFormatter, TextFormatter
from webreach.settings.server import KeyLimits
from webreach.tools import ToolOptions

ALICE = "sk-alice-secret-4242"
PLAIN = "sk-plain-secret-9191"
ADMIN = "admin-secret-7777"
KEYS = f"alice:{ALICE}, {PLAIN}"
USER = [{"role": "user", "content": "hi"}]


def settings(upstream: ScriptedUpstream, **extra: Any) -> ServerSettings:
    return ServerSettings(
        upstream_base_url=upstream.url,
        upstream_api_key="upstream-key",
        signing_key="test-signing-key-of-32-bytes-or-more",
        server_api_keys=KEYS,
        **extra,
    )


def app_for(config: ServerSettings, store: CacheStore | None = None) -> Any:
    runtime = WebRuntime()
    runtime.register_search_provider(default_search())
    runtime.register_fetch_provider(ScriptedFetch())
    return create_app(config, runtime, ToolOptions(), store=store or MemoryStore())


class Captured(list[logging.LogRecord]):
    """The records caplog holds now (its list is a new one in each test phase)."""

    def __init__(self, caplog: pytest.LogCaptureFixture) -> None:
        super().__init__()
        self._caplog = caplog

    def __iter__(self) -> Iterator[logging.LogRecord]:
        return iter(list(self._caplog.records))

    def __len__(self) -> int:
        return len(self._caplog.records)


@pytest.fixture
def access(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The log records the servers write."""
    caplog.set_level(logging.INFO, logger="webreach.access")
    return Captured(caplog)


def fields_of(records: list[logging.LogRecord]) -> list[dict[str, Any]]:
    return [
        dict(r.fields)  # type: ignore[attr-defined]
        for r in records
        if getattr(r, "event", "") == "access"
    ]


def whole_log(records: list[logging.LogRecord]) -> str:
    text, as_json = TextFormatter(), JsonFormatter()
    return "\n".join(f(r) for r in records for f in (text.format, as_json.format))


def wait_for_access(records: list[logging.LogRecord], count: int) -> list[dict[str, Any]]:
    """The line is written when the response ends, a moment after the client has it."""
    deadline = time.monotonic() + 60
    while len(fields_of(records)) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return fields_of(records)


def clear_of_minute_edge() -> None:
    """Fixed one-minute windows: a test of a per-minute limit starts well inside one."""
    if time.time() % 60 > 50:
        time.sleep(61 - time.time() % 60)


def test_the_access_line_names_the_key_never_the_secret(
    upstream: ScriptedUpstream, access: list[logging.LogRecord]
) -> None:
    with LiveServer(app_for(settings(upstream))) as server:
        for key in (ALICE, PLAIN):
            answer = httpx.get(
                f"{server.url}/v1/models", headers={"authorization": f"Bearer {key}"}
            )
            assert answer.status_code == 200
        upstream.queue(Step(content="Hello."))
        chat = openai_client(server.url + "/v1", ALICE)
        chat.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        lines = wait_for_access(access, 3)
    assert [line["key"] for line in lines] == ["alice", "key-2", "alice"]
    log = whole_log(access)
    assert "key=alice" in log and '"key": "alice"' in log
    assert ALICE not in log and PLAIN not in log


def test_a_key_past_its_requests_per_minute_gets_429_with_retry_after_in_both_sdks(
    upstream: ScriptedUpstream, access: list[logging.LogRecord]
) -> None:
    limits = {"alice": KeyLimits(requests_per_minute=2), "key-2": KeyLimits(requests_per_minute=1)}
    clear_of_minute_edge()
    with LiveServer(app_for(settings(upstream, server_key_limits=limits))) as server:
        chat = openai_client(server.url + "/v1", ALICE)
        for _ in range(2):
            upstream.queue(Step(content="Hello."))
            chat.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        calls = len(upstream.requests)
        with pytest.raises(openai.RateLimitError) as refused:
            chat.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        assert len(upstream.requests) == calls  # refused before any upstream call
        wait = int(refused.value.response.headers["retry-after"])
        assert 1 <= wait <= 60
        assert "alice" in refused.value.message and ALICE not in refused.value.message

        messages = anthropic_client(server.url, PLAIN)
        upstream.queue(Step(content="Hello."))
        messages.messages.create(model="m", max_tokens=16, messages=USER)  # type: ignore[arg-type]
        with pytest.raises(anthropic.RateLimitError) as also:
            messages.messages.create(model="m", max_tokens=16, messages=USER)  # type: ignore[arg-type]
        assert 1 <= int(also.value.response.headers["retry-after"]) <= 60
        assert also.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
        lines = wait_for_access(access, 5)
    assert [line["status"] for line in lines if line["key"] == "alice"] == [200, 200, 429]


@pytest.fixture
def replicas(upstream: ScriptedUpstream, redis_url: str) -> Iterator[tuple[str, str]]:
    """Two servers, each with its own client of one redis-server (as two processes have)."""
    limits = {
        "alice": KeyLimits(searches_per_day=2),
        "key-2": KeyLimits(requests_per_minute=3),
    }
    config = settings(upstream, server_key_limits=limits, admin_api_key=ADMIN)
    with ExitStack() as stack:
        urls = [
            stack.enter_context(LiveServer(app_for(config, RedisStore(redis_url)))).url
            for _ in range(2)
        ]
        yield urls[0], urls[1]


def search(url: str, key: str) -> httpx.Response:
    return httpx.post(
        f"{url}/v1/search",
        json={"query": "iceland population"},
        headers={"authorization": f"Bearer {key}"},
        timeout=30,
    )


def usage(url: str) -> dict[str, Any]:
    answer = httpx.get(f"{url}/admin/usage", headers={"authorization": f"Bearer {ADMIN}"})
    assert answer.status_code == 200, answer.text
    keys: dict[str, Any] = answer.json()["keys"]
    return keys


def test_replicas_on_one_redis_share_limits_and_count_usage_once(
    replicas: tuple[str, str],
) -> None:
    a, b = replicas
    clear_of_minute_edge()
    assert search(a, ALICE).status_code == 200
    assert search(b, ALICE).status_code == 200
    # Two searches today: the quota is spent on both replicas.
    refused = search(a, ALICE)
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["retry-after"]) <= 86_400
    seen = usage(b)
    assert seen == usage(a)
    assert seen["alice"]["requests"] == 2
    assert seen["alice"]["searches"] == 2
    assert seen["key-2"]["requests"] == 0
    # Three requests a minute, counted across both replicas.
    plain = {"authorization": f"Bearer {PLAIN}"}
    for url in (a, b, a):
        assert httpx.get(f"{url}/v1/models", headers=plain).status_code == 200
    models = httpx.get(f"{b}/v1/models", headers=plain)
    assert models.status_code == 429
    assert "3 requests a minute" in models.text
    assert 1 <= int(models.headers["retry-after"]) <= 60
    assert usage(a)["key-2"]["requests"] == 3
    assert ALICE not in json.dumps(seen)


def test_the_usage_endpoint_needs_its_own_key_and_is_absent_without_one(
    upstream: ScriptedUpstream,
) -> None:
    with LiveServer(app_for(settings(upstream))) as server:
        assert httpx.get(f"{server.url}/admin/usage").status_code == 404
        with_alice = {"authorization": f"Bearer {ALICE}"}
        assert httpx.get(f"{server.url}/admin/usage", headers=with_alice).status_code == 404
    with LiveServer(app_for(settings(upstream, admin_api_key=ADMIN))) as server:
        upstream.queue(Step(content="Hello.", usage=(30, 7)))
        chat = openai_client(server.url + "/v1", ALICE)
        chat.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        assert httpx.get(f"{server.url}/admin/usage").status_code == 401
        # An inbound key is not the admin key: a tenant cannot read the others' usage.
        assert httpx.get(f"{server.url}/admin/usage", headers=with_alice).status_code == 401
        shown = usage(server.url)
    assert set(shown) == {"alice", "key-2"}
    assert shown["alice"] == {
        "requests": 1,
        "searches": 0,
        "fetches": 0,
        "input_tokens": 30,
        "output_tokens": 7,
    }
    assert ALICE not in json.dumps(shown) and PLAIN not in json.dumps(shown)


def test_open_webui_user_headers_are_logged_as_the_end_user(
    upstream: ScriptedUpstream, access: list[logging.LogRecord]
) -> None:
    headers = {
        "authorization": f"Bearer {ALICE}",
        "x-openwebui-user-name": b"Ada\tLovelace\x9b31m",
        "x-openwebui-user-email": "ada@example.com",
        "x-openwebui-user-id": "u-" + "7" * 300,
    }
    with LiveServer(app_for(settings(upstream))) as server:
        assert httpx.get(f"{server.url}/v1/models", headers=headers).status_code == 200
        (line,) = wait_for_access(access, 1)
    user = line["user"]
    assert user.startswith("AdaLovelace31m <ada@example.com> #u-777")
    assert len(user) <= 120
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in user)
    assert "user=" in whole_log(access)


def test_key_limits_are_read_from_webreach_toml_and_json_in_the_environment(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from webreach.config import load_settings

    (tmp_path / "webreach.toml").write_text(
        'server_api_keys = "alice:sk-a, sk-b"\n'
        "[server_key_limits.alice]\nrequests_per_minute = 60\nsearches_per_day = 500\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WEBREACH_SERVER_KEY_LIMITS", '{"key-2": {"fetches_per_day": 3}}')
    loaded = load_settings()
    assert [name for name, _ in loaded.named_api_keys()] == ["alice", "key-2"]
    assert loaded.api_keys() == ("sk-a", "sk-b")
    assert loaded.server_key_limits["alice"] == KeyLimits(
        requests_per_minute=60, searches_per_day=500
    )
    assert loaded.server_key_limits["key-2"].fetches_per_day == 3


def test_a_limit_for_a_name_no_key_has_is_refused() -> None:
    with pytest.raises(ValueError, match="names bob, which no key"):
        ServerSettings(server_api_keys=KEYS, server_key_limits={"bob": KeyLimits()})


def test_a_turn_spends_at_most_what_its_key_has_left_of_the_day(
    upstream: ScriptedUpstream,
) -> None:
    """Inside a turn a search past the key's day is the tool's error the model reads; the
    next request of the key is a 429."""
    limits = {"alice": KeyLimits(searches_per_day=2)}
    config = settings(upstream, server_key_limits=limits, admin_api_key=ADMIN)
    calls = [Call("web_search", {"queries": [f"q{n}"]}) for n in range(4)]
    upstream.queue(Step(calls=calls), Step(content="ok"))
    with LiveServer(app_for(config)) as server:
        chat = openai_client(server.url + "/v1", ALICE)
        web = [{"type": "deepseek_web_search"}]
        reply = chat.chat.completions.create(model="m", messages=USER, tools=web)  # type: ignore[arg-type, list-item]
        ran = reply.choices[0].message.model_extra["server_tool_calls"][0]["calls"]  # type: ignore[index]
        assert [c["status"] for c in ran] == ["completed"] * 2 + ["failed"] * 2
        assert ran[-1]["error"]["code"] == "max_uses_exceeded"
        assert usage(server.url)["alice"]["searches"] == 2
        with pytest.raises(openai.RateLimitError) as refused:
            chat.chat.completions.create(model="m", messages=USER, tools=web)  # type: ignore[arg-type, list-item]
        assert "2 searches for today" in refused.value.message
