"""What a hostile or broken search provider can no longer do through the seam.

- A provider that sends its body a byte at a time never trips a per-read timeout: the search
  timeout is the deadline of the whole provider call, so the search fails (or falls back) on
  time, and the provider's connection is closed.
- A provider's ``javascript:``, ``data:`` or ``file:`` URLs never leave the seam: only http(s)
  sources and image matches do, through the runtime, the web API and a chat turn.
- A wave of concurrent searches leaves at most a small pool of idle connections to a provider.

Every provider here is the real Exa client in front of a real local server.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from providers_for_tests import ScriptedImageSearch, ScriptedSearch, sources
from replay_server import ReplayServer, Reply
from scripted_upstream import Call, ScriptedUpstream, Step
from server_harness import LiveServer
from slow_provider import TricklingServer
from webreach.cache import MemoryStore
from webreach.net import create_client
from webreach.net.aio import IDLE_PER_HOST
from webreach.providers.search.exa import ExaSearchProvider
from webreach.providers.search.perplexity import PerplexitySearchProvider
from webreach.seam import (
    ImageMatch,
    ImageSearchRequest,
    ImageSearchResult,
    ImageUrl,
    SearchRequest,
    SearchResult,
    WebError,
    WebErrorCode,
    WebRuntime,
)
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

pytestmark = pytest.mark.slow  # waits out search deadlines of about a second

DEADLINE = 1.0
BOUND = 5.0
"""Generous: the trickled answers take over a minute."""
KEY = "web-key"


@pytest.fixture
def trickling() -> Iterator[TricklingServer]:
    with TricklingServer(interval=0.2) as server:
        assert server.seconds_per_answer > 60
        yield server


def exa_runtime(base_url: str, **options: Any) -> WebRuntime:
    """A runtime with Exa on ``base_url`` through a client whose per-read timeout is the
    deadline's, as ``build_runtime`` makes it."""
    client = create_client(timeout=DEADLINE)
    runtime = WebRuntime(search_timeout=DEADLINE, **options)
    runtime.own(client)
    runtime.register_search_provider(
        ExaSearchProvider(api_key="exa-key", client=client, base_url=base_url)
    )
    return runtime


# -- the search timeout is a deadline --------------------------------------------------------


async def test_a_trickled_answer_fails_at_the_search_timeout(trickling: TricklingServer) -> None:
    async with exa_runtime(trickling.url) as runtime:
        started = time.monotonic()
        with pytest.raises(WebError) as caught:
            await runtime.search(SearchRequest("slow"))
        elapsed = time.monotonic() - started
    assert caught.value.code is WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.provider == "exa"
    assert caught.value.message == f"exa: no answer within {DEADLINE:g} s"
    assert DEADLINE <= elapsed < BOUND
    # The connection was closed, not left trickling into the pool.
    assert await asyncio.to_thread(trickling.wait_until, 0, BOUND) == 0
    assert trickling.hung_up == 1


async def test_a_fallback_list_moves_on_at_the_deadline(trickling: TricklingServer) -> None:
    second = ScriptedSearch("second", answers={"slow": SearchResult(sources("https://b.example/"))})
    async with exa_runtime(trickling.url, search_provider="exa,second") as runtime:
        runtime.register_search_provider(second)
        started = time.monotonic()
        result = await runtime.search(SearchRequest("slow"))
    assert time.monotonic() - started < BOUND
    assert result.provider == "second"
    assert [s.url for s in result.sources] == ["https://b.example/"]


async def test_a_provider_that_raises_timeout_itself_still_names_the_provider() -> None:
    async def stuck(_: SearchRequest) -> SearchResult:
        await asyncio.sleep(30)
        raise AssertionError("unreachable")

    async with WebRuntime(search_timeout=0.2) as runtime:
        runtime.register_search_provider(ScriptedSearch("stuck", behaviour=stuck))
        with pytest.raises(WebError) as caught:
            await runtime.search(SearchRequest("q"))
    assert caught.value.code is WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.message == "stuck: no answer within 0.2 s"


async def test_a_model_backed_provider_keeps_its_longer_allowance(replay: ReplayServer) -> None:
    """Perplexity answers through the model client (120 s by default): the shorter search
    timeout of the index lookups does not cut it."""
    answer = {"choices": [{"message": {"content": "An answer."}}], "search_results": []}
    replay.route("POST", "/chat/completions", Reply(json=answer, delay=0.6))
    model_client = create_client(timeout=10)
    async with WebRuntime(search_timeout=0.2) as runtime:
        runtime.own(model_client)
        runtime.register_search_provider(
            PerplexitySearchProvider(api_key="k", client=model_client, base_url=replay.url)
        )
        result = await runtime.search(SearchRequest("q"))
    assert result.content == "An answer."


async def test_the_cache_is_not_bounded_by_the_deadline() -> None:
    """A hit costs no provider call, so nothing to time out; the cached answer comes back."""

    async def slow(request: SearchRequest) -> SearchResult:
        await asyncio.sleep(0.05)
        return SearchResult(sources("https://a.example/"))

    async with WebRuntime(search_timeout=1, cache=MemoryStore()) as runtime:
        provider = ScriptedSearch("a", behaviour=slow)
        runtime.register_search_provider(provider)
        first = await runtime.search(SearchRequest("q"))
        second = await runtime.search(SearchRequest("q"))
    assert first.sources == second.sources
    assert len(provider.calls) == 1


def test_build_runtime_applies_webreach_search_timeout(
    trickling: TricklingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from webreach.config import build_runtime

    monkeypatch.setenv("WEBREACH_SEARCH_TIMEOUT", "1")
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "exa")
    monkeypatch.setenv("EXA_API_KEY", "exa-key")
    monkeypatch.setenv("EXA_BASE_URL", trickling.url)
    monkeypatch.setenv("WEBREACH_CACHE", "none")

    async def run() -> float:
        async with build_runtime() as runtime:
            started = time.monotonic()
            with pytest.raises(WebError, match="no answer within 1 s"):
                await runtime.search(SearchRequest("slow"))
            return time.monotonic() - started

    assert asyncio.run(run()) < BOUND


# -- through the server ----------------------------------------------------------------------


@pytest.fixture
def slow_server(trickling: TricklingServer, upstream: ScriptedUpstream) -> Iterator[str]:
    config = ServerSettings(
        upstream_base_url=upstream.url,
        upstream_api_key="upstream-key",
        server_api_keys=KEY,
        signing_key="test-signing-key-of-32-bytes-or-more",
    )
    app = create_app(config, exa_runtime(trickling.url), ToolOptions(), store=MemoryStore())
    with LiveServer(app) as server:
        yield server.url


def test_v1_search_answers_the_timeout_at_the_deadline(slow_server: str) -> None:
    started = time.monotonic()
    reply = httpx.post(
        slow_server + "/v1/search",
        json={"queries": ["slow"]},
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=30,
    )
    assert time.monotonic() - started < BOUND
    assert reply.status_code >= 500, reply.text
    assert f"no answer within {DEADLINE:g} s" in reply.json()["error"]["message"]


def test_a_chat_turn_goes_on_without_the_timed_out_search(
    slow_server: str, upstream: ScriptedUpstream
) -> None:
    upstream.queue(Step(calls=[Call("web_search", {"queries": ["slow"]})]), Step(content="Sorry."))
    started = time.monotonic()
    reply = httpx.post(
        slow_server + "/v1/chat/completions",
        json={
            "model": "m",
            "messages": [{"role": "user", "content": "anything new?"}],
            "tools": [{"type": "deepseek_web_search"}],
        },
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=30,
    )
    assert time.monotonic() - started < BOUND
    assert reply.status_code == 200, reply.text
    message = reply.json()["choices"][0]["message"]
    assert message["content"] == "Sorry."
    calls = [c for step in message["server_tool_calls"] for c in step["calls"]]
    assert [(c["status"], c["error"]["code"]) for c in calls] == [("failed", "unavailable")]


# -- only http(s) sources leave the seam -----------------------------------------------------

HOSTILE = [
    "javascript:alert(document.cookie)",
    "JavaScript:alert(1)",
    " javascript:alert(2)",
    "java\tscript:alert(3)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "file:///etc/passwd",
    "vbscript:msgbox(1)",
    "https:alert(4)",
    "http://[::1",
    "//no-scheme.example/",
    "",
]
FINE = ["https://ok.example/a", "HTTP://Upper.Example/b", "http://127.0.0.1:8080/c"]


async def test_the_runtime_returns_only_http_sources() -> None:
    mixed = SearchResult(sources(*HOSTILE[:4], FINE[0], *HOSTILE[4:], *FINE[1:]), content="x")
    async with WebRuntime() as runtime:
        runtime.register_search_provider(ScriptedSearch("mixed", answers={"q": mixed}))
        every = await runtime.search(SearchRequest("q"))
        cut = await runtime.search(SearchRequest("q", max_results=2))
    assert [s.url for s in every.sources] == FINE
    assert not every.truncated
    assert every.content == "x"
    assert [s.url for s in cut.sources] == FINE[:2]
    assert cut.truncated


async def test_cached_results_are_filtered_too() -> None:
    """An entry written before the filter existed (or by another version) is filtered on the
    way out as well."""
    mixed = SearchResult(sources("javascript:alert(1)", "https://ok.example/"))
    cache = MemoryStore()
    async with WebRuntime(cache=cache) as runtime:
        provider = ScriptedSearch("mixed", answers={"q": mixed})
        runtime.register_search_provider(provider)
        await runtime.search(SearchRequest("q"))
        again = await runtime.search(SearchRequest("q"))
    assert len(provider.calls) == 1
    assert [s.url for s in again.sources] == ["https://ok.example/"]


async def test_image_matches_keep_only_http_links() -> None:
    page = "https://pages.example/p"
    result = ImageSearchResult(
        matches=(
            ImageMatch(url="javascript:alert(1)", title="script page"),
            ImageMatch(
                url=page,
                image_url="data:image/png;base64,AAAA",
                thumbnail_url="javascript:alert(2)",
            ),
            ImageMatch(
                url="https://pages.example/q",
                image_url="https://img.example/q.jpg",
                thumbnail_url="https://thumbs.example/q.jpg",
            ),
            ImageMatch(url="file:///etc/passwd"),
        )
    )
    async with WebRuntime() as runtime:
        runtime.register_image_search_provider(
            ScriptedImageSearch("lens", answers={"https://img.example/x.jpg": result})
        )
        found = await runtime.image_search(
            ImageSearchRequest(ImageUrl("https://img.example/x.jpg"))
        )
    assert found.matches == (
        ImageMatch(url=page),
        ImageMatch(
            url="https://pages.example/q",
            image_url="https://img.example/q.jpg",
            thumbnail_url="https://thumbs.example/q.jpg",
        ),
    )


def exa_mixed(_: Any) -> Reply:
    return Reply(json={"results": [{"url": u, "title": f"title {u}"} for u in [*HOSTILE, *FINE]]})


@pytest.fixture
def mixed_server(replay: ReplayServer, upstream: ScriptedUpstream) -> Iterator[str]:
    replay.route("POST", "/search", exa_mixed)
    client = create_client(timeout=10)
    runtime = WebRuntime()
    runtime.own(client)
    runtime.register_search_provider(
        ExaSearchProvider(api_key="exa-key", client=client, base_url=replay.url)
    )
    config = ServerSettings(
        upstream_base_url=upstream.url,
        upstream_api_key="upstream-key",
        server_api_keys=KEY,
        signing_key="test-signing-key-of-32-bytes-or-more",
    )
    with LiveServer(create_app(config, runtime, ToolOptions(), store=MemoryStore())) as server:
        yield server.url


@pytest.fixture
async def mixed_client(mixed_server: str) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(base_url=mixed_server, headers=headers, timeout=30) as client:
        yield client


async def test_v1_search_answers_only_http_sources(mixed_client: httpx.AsyncClient) -> None:
    reply = await mixed_client.post("/v1/search", json={"queries": ["q"]})
    assert reply.status_code == 200, reply.text
    assert [s["url"] for s in reply.json()["sources"]] == FINE


async def test_openwebui_search_answers_only_http_links(mixed_client: httpx.AsyncClient) -> None:
    reply = await mixed_client.post("/openwebui/search", json={"query": "q", "count": 10})
    assert reply.status_code == 200, reply.text
    assert [r["link"] for r in reply.json()] == FINE


def test_a_chat_turn_sees_and_cites_only_http_sources(
    mixed_server: str, upstream: ScriptedUpstream
) -> None:
    upstream.queue(Step(calls=[Call("web_search", {"queries": ["q"]})]), Step(content="Done."))
    reply = httpx.post(
        mixed_server + "/v1/chat/completions",
        json={
            "model": "m",
            "messages": [{"role": "user", "content": "find it"}],
            "tools": [{"type": "deepseek_web_search"}],
        },
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=30,
    )
    assert reply.status_code == 200, reply.text
    seen = json.dumps(upstream.requests[1]["messages"][-1])
    for url in FINE:
        assert json.dumps(url)[1:-1] in seen
    for text in (seen, reply.text):
        for scheme in ("javascript", "vbscript", "data:", "file:", "alert("):
            assert scheme not in text.lower()


# -- the idle pool ---------------------------------------------------------------------------

WAVE = 100


async def test_a_wave_of_searches_leaves_a_small_idle_pool() -> None:
    with TricklingServer(interval=0, delay=0.3) as server:
        async with create_client(timeout=10) as client:
            exa = ExaSearchProvider(api_key="k", client=client, base_url=server.url)
            await asyncio.gather(*(exa.search(SearchRequest(f"q{n}")) for n in range(WAVE)))
            # Each of them had a connection of its own while the server made them wait.
            assert server.peak_connections >= WAVE // 2
            # Well before the keep-alive expiry (5 s), the surplus is already closed.
            left = await asyncio.to_thread(server.wait_until, IDLE_PER_HOST, 1.0)
            assert left <= IDLE_PER_HOST
            # The idle ones are reused by the next wave.
            accepted = server.accepted
            await asyncio.gather(*(exa.search(SearchRequest(f"r{n}")) for n in range(5)))
            assert server.requests == WAVE + 5
            assert server.accepted == accepted
