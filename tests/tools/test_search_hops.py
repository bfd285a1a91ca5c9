"""A search provider pointed back at the webreach server that runs it cannot search forever:
every provider request says how many webreach servers the search has passed through
(``X-Webreach-Hops``), and a server refuses past three with a 508 its caller moves on from."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from replay_server import ReplayServer, Reply
from scripted_upstream import Call, ScriptedUpstream, Step
from server_harness import LiveServer
from webreach.cache import MemoryStore
from webreach.config import build_runtime, load_settings
from webreach.net import create_client
from webreach.net.client import stamp_hops
from webreach.providers.search.anthropic import AnthropicSearchProvider
from webreach.seam import HOPS_HEADER, MAX_HOPS, SearchRequest, WebRuntime, arrived_after
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

EXA_ANSWER = {"results": [{"url": "https://a.example/", "title": "A", "highlights": ["a"]}]}


async def test_every_provider_request_counts_the_servers_passed(
    replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay.route("POST", "/search", Reply(json=EXA_ANSWER))
    monkeypatch.setenv("EXA_API_KEY", "exa-key")
    monkeypatch.setenv("EXA_BASE_URL", replay.url)
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "exa")
    monkeypatch.setenv("WEBREACH_CACHE", "none")
    async with build_runtime(load_settings()) as runtime:
        await runtime.search(SearchRequest("first"))
        with arrived_after(2):
            await runtime.search(SearchRequest("second"))
    assert [r.headers[HOPS_HEADER.lower()] for r in replay.requests] == ["1", "3"]


@pytest.fixture
async def plain_server() -> AsyncIterator[str]:
    with ScriptedUpstream() as upstream:
        settings = ServerSettings(upstream_base_url=upstream.url, upstream_api_key="k")
        app = create_app(settings, WebRuntime(), ToolOptions(), store=MemoryStore())
        with LiveServer(app) as server:
            yield server.url


@pytest.mark.parametrize("hops", [str(MAX_HOPS), "7"])
async def test_a_request_past_the_limit_is_a_508_in_the_protocols_shape(
    plain_server: str, hops: str
) -> None:
    async with openai.AsyncOpenAI(
        base_url=plain_server + "/v1",
        api_key="x",
        max_retries=0,
        default_headers={HOPS_HEADER: hops},
    ) as client:
        with pytest.raises(openai.APIStatusError) as caught:
            await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "q"}]
            )
    assert caught.value.status_code == 508
    assert "passed through" in caught.value.message
    async with anthropic.AsyncAnthropic(
        base_url=plain_server, api_key="x", max_retries=0, default_headers={HOPS_HEADER: hops}
    ) as messages:
        with pytest.raises(anthropic.APIStatusError) as refused:
            await messages.messages.create(
                model="m", max_tokens=10, messages=[{"role": "user", "content": "q"}]
            )
    assert refused.value.status_code == 508
    assert refused.value.body["error"]["type"]  # type: ignore[index]


@pytest.mark.parametrize("hops", ["0", str(MAX_HOPS - 1), "-1", "lots", "9" * 40])
async def test_a_request_within_the_limit_or_with_a_nonsense_count_is_served(
    plain_server: str, hops: str
) -> None:
    async with httpx.AsyncClient(base_url=plain_server) as client:
        reply = await client.post(
            "/v1/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "q"}]},
            headers={HOPS_HEADER: hops},
        )
    assert reply.status_code == 200, reply.text


class _Forward:
    """An ASGI app that serves the one it is given later (the server's own URL comes first)."""

    app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


async def test_a_provider_pointed_at_its_own_server_stops_after_three_servers() -> None:
    forward = _Forward()
    live = LiveServer(forward)  # bound now, started below: the provider needs its URL first
    client = create_client(timeout=20)
    client.event_hooks["request"].append(stamp_hops)
    runtime = WebRuntime(search_provider="anthropic")
    runtime.own(client)
    runtime.register_search_provider(
        AnthropicSearchProvider(api_key="own-key", client=client, base_url=live.url)
    )
    with ScriptedUpstream() as upstream:
        search = Step(calls=[Call("web_search", {"queries": ["loop"]})])
        upstream.queue(search, search, search, *(Step(content=f"answer {n}") for n in (3, 2, 1)))
        settings = ServerSettings(upstream_base_url=upstream.url, upstream_api_key="k")
        forward.app = create_app(settings, runtime, ToolOptions(), store=MemoryStore())
        async with runtime:
            with live:
                async with anthropic.AsyncAnthropic(
                    base_url=live.url, api_key="x", max_retries=0
                ) as caller:
                    reply = await caller.messages.create(
                        model="m",
                        max_tokens=100,
                        messages=[{"role": "user", "content": "search forever"}],
                        tools=[{"type": "web_search_20250305", "name": "web_search"}],
                    )
    last = reply.content[-1]
    assert last.type == "text"
    assert last.text == "answer 1"
    assert len(upstream.requests) == 6  # three servers searched; the fourth refused; 3 answers
