"""A fifth server tool (tests/site_search_tool.py) added through the registry alone: put in
``create_app(tools=...)``, it is offered, planned against the search budget, billed in
``tool_search``, and rendered in all three protocols (read through the official SDKs) with no
change to the loop, the planner or a renderer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anthropic
import pytest

from providers_for_tests import ScriptedFetch, ScriptedSearch, sources
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from server_harness import LiveServer
from site_search_tool import SiteSearch
from webreach.seam import SearchRequest, SearchResult, WebRuntime
from webreach.server import ServerSettings, create_app
from webreach.server.core.web_tools.registry import BUILT_IN_TOOLS
from webreach.tools import ToolOptions

QUERY = "site:docs.python.org asyncio timeout"
ON_SITE = "https://docs.python.org/3/library/asyncio-task.html"
ELSEWHERE = "https://blog.example/asyncio-timeouts"
SITE_CALL = Call("site_search", {"site": "docs.python.org", "query": "asyncio timeout"})
ANSWER = Step(content="Wrap the await in asyncio.timeout()【1】.")
ASK = "How do I put a timeout on an await?"


@pytest.fixture
def site_search() -> ScriptedSearch:
    """Finds one page on the site and one elsewhere (which the tool must drop)."""

    async def answer(request: SearchRequest) -> SearchResult:
        found = sources(ON_SITE, ELSEWHERE) if request.query == QUERY else sources(ELSEWHERE)
        return SearchResult(sources=found)

    return ScriptedSearch("scripted", behaviour=answer)


@contextmanager
def serving(upstream: ScriptedUpstream, search: ScriptedSearch, *, plugin: bool) -> Iterator[str]:
    """A server whose registry has the site search after the built-ins (``plugin``), or not."""
    runtime = WebRuntime()
    runtime.register_search_provider(search)
    runtime.register_fetch_provider(ScriptedFetch())
    settings = ServerSettings(upstream_base_url=upstream.url)
    tools = (*BUILT_IN_TOOLS, SiteSearch.offer) if plugin else BUILT_IN_TOOLS
    app = create_app(settings, runtime, ToolOptions(), keepalive_seconds=0.2, tools=tools)
    with LiveServer(app) as server:
        yield server.url + "/v1"


@pytest.fixture
def plugin_url(upstream: ScriptedUpstream, site_search: ScriptedSearch) -> Iterator[str]:
    with serving(upstream, site_search, plugin=True) as url:
        yield url


def offered(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_chat_shows_the_fifth_tool_under_its_own_action_name(
    plugin_url: str, upstream: ScriptedUpstream, site_search: ScriptedSearch, stream: bool
) -> None:
    upstream.queue(Step(calls=[SITE_CALL]), ANSWER)
    client = openai_client(plugin_url)
    request: dict[str, Any] = {
        "model": "m",
        "messages": [{"role": "user", "content": ASK}],
        "tools": [{"type": "deepseek_web_search"}],
    }
    if stream:
        with client.chat.completions.stream(**request) as events:
            for _ in events:
                pass
            completion = events.current_completion_snapshot
    else:
        completion = client.chat.completions.create(**request)
    assert offered(upstream.requests[0]) == ["web_search", "site_search"]
    assert [r.query for r in site_search.calls] == [QUERY]
    message = completion.choices[0].message
    assert message.content == "Wrap the await in asyncio.timeout()."
    (step,) = (message.model_extra or {})["server_tool_calls"]
    (call,) = step["calls"]
    assert call["id"].startswith("srvtoolu_ss_00_")
    assert (call["kind"], call["type"], call["status"]) == (
        "site_search",
        "deepseek_web_search",
        "completed",
    )
    assert call["action"] == {"type": "site_search", "queries": [QUERY], "query": QUERY}
    assert [s["url"] for s in call["sources"]] == [ON_SITE]
    assert message.annotations is not None
    assert message.annotations[0].url_citation.url == ON_SITE
    assert completion.usage is not None
    used = (completion.usage.model_extra or {})["server_tool_use"]
    assert (used["web_search_requests"], used["tool_search"], used["tool_fetch"]) == (1, 1, 0)
    told = upstream.requests[1]["messages"][-1]["content"]
    assert ON_SITE in told and ELSEWHERE not in told


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_responses_shows_the_fifth_tool_as_a_web_search_call(
    plugin_url: str, upstream: ScriptedUpstream, stream: bool
) -> None:
    upstream.queue(Step(calls=[SITE_CALL]), ANSWER)
    client = openai_client(plugin_url)
    request: dict[str, Any] = {
        "model": "m",
        "input": ASK,
        "tools": [{"type": "web_search"}],
    }
    if stream:
        with client.responses.stream(**request) as events:
            response = events.get_final_response()
    else:
        response = client.responses.create(**request)
    call, message = response.output
    assert call.type == "web_search_call"
    assert call.status == "completed"
    assert (call.model_extra or {})["kind"] == "site_search"
    action = call.action.model_dump()
    assert (action["type"], action["queries"]) == ("search", [QUERY])
    assert [s["url"] for s in action["sources"]] == [ON_SITE]
    assert message.type == "message"
    assert response.output_text == "Wrap the await in asyncio.timeout()."
    (annotation,) = message.content[0].annotations  # type: ignore[union-attr]
    assert annotation.url == ON_SITE  # type: ignore[union-attr]
    assert response.usage is not None
    used = (response.usage.model_extra or {})["server_tool_use"]
    assert (used["web_search_requests"], used["tool_search"]) == (1, 1)


def messages_client(url: str) -> anthropic.Anthropic:
    return anthropic_client(url.removesuffix("/v1"), strict=True)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_messages_shows_the_fifth_tool_as_a_search_block_pair(
    plugin_url: str, upstream: ScriptedUpstream, stream: bool
) -> None:
    upstream.queue(Step(calls=[SITE_CALL]), ANSWER)
    client = messages_client(plugin_url)
    request: dict[str, Any] = {
        "model": "m",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": ASK}],
        "tools": [{"type": "web_search_20250305", "name": "web_search"}],
    }
    if stream:
        with client.messages.stream(**request) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**request)
    use, result, cited, *rest = message.content
    assert use.type == "server_tool_use"
    assert use.name == "web_search"
    assert use.input == {"action": "site_search", "queries": [QUERY], "query": QUERY}
    assert (use.model_extra or {})["kind"] == "site_search"
    assert result.type == "web_search_tool_result"
    assert result.tool_use_id == use.id
    assert isinstance(result.content, list)
    assert [r.url for r in result.content] == [ON_SITE]
    assert cited.type == "text"
    assert cited.citations is not None
    assert cited.citations[0].url == ON_SITE  # type: ignore[union-attr]
    said = "".join(b.text for b in (cited, *rest) if b.type == "text")
    assert said == "Wrap the await in asyncio.timeout()."
    counted = message.usage.server_tool_use
    assert counted is not None
    assert counted.web_search_requests == 1
    assert (counted.model_extra or {})["tool_search"] == 1


def test_the_fifth_tool_draws_on_the_search_budget_after_the_searches(
    plugin_url: str, upstream: ScriptedUpstream, site_search: ScriptedSearch
) -> None:
    """Registered after the built-ins, its calls are planned after the step's searches and
    get what they left: with ``max_uses: 1`` the search runs and the site search is refused."""
    search = Call("web_search", {"queries": ["asyncio timeout"]})
    upstream.queue(Step(calls=[SITE_CALL, search]), ANSWER)
    request: dict[str, Any] = {
        "model": "m",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": ASK}],
        "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 1}],
    }
    message = messages_client(plugin_url).messages.create(**request)
    uses = [b for b in message.content if b.type == "server_tool_use"]
    assert [(b.model_extra or {})["kind"] for b in uses] == ["search", "site_search"]
    results = {
        (b.model_extra or {})["kind"]: b.content
        for b in message.content
        if b.type == "web_search_tool_result"
    }
    assert isinstance(results["search"], list)
    assert results["site_search"].error_code == "max_uses_exceeded"  # type: ignore[union-attr]
    assert [r.query for r in site_search.calls] == ["asyncio timeout"]
    assert "budget of this answer is spent" in str(upstream.requests[1]["messages"])


def test_the_fifth_tool_is_offered_only_where_its_factory_says(
    plugin_url: str, upstream: ScriptedUpstream, site_search: ScriptedSearch
) -> None:
    client = openai_client(plugin_url)
    client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": ASK}],
        tools=[{"type": "deepseek_read_url"}],  # type: ignore[list-item]
    )
    assert "site_search" not in offered(upstream.requests[-1])
    client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": ASK}],
        tools=[{"type": "deepseek_web_search"}],  # type: ignore[list-item]
        tool_choice="none",
    )
    assert "tools" not in upstream.requests[-1]


def test_a_server_without_the_plugin_does_not_offer_it(
    upstream: ScriptedUpstream, site_search: ScriptedSearch
) -> None:
    with serving(upstream, site_search, plugin=False) as url:
        client = openai_client(url)
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": ASK}],
            tools=[{"type": "deepseek_web_search"}],  # type: ignore[list-item]
        )
    assert offered(upstream.requests[0]) == ["web_search"]
