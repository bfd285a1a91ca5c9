"""A query the model repeats within one turn is answered from that turn's results: the provider
sees it once and it is billed once (the runtime's cache is off here)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from providers_for_tests import ScriptedSearch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import openai_client
from webreach.seam import SearchRequest, SearchResult, WebError, WebErrorCode, WebRuntime
from webreach.server.core.web_tools.turn_searches import TurnSearches
from webreach.testing import sources

USER = [{"role": "user", "content": "How many people live in Iceland?"}]
WEB = [{"type": "deepseek_web_search"}]


def search_step(*query_lists: list[str]) -> Step:
    return Step(calls=[Call("web_search", {"queries": q}) for q in query_lists])


def ask(url: str) -> Any:
    client = openai_client(url)
    return client.chat.completions.create(model="m", messages=USER, tools=WEB)  # type: ignore[arg-type]


def tool_texts(upstream: ScriptedUpstream) -> list[str]:
    return [m["content"] for m in upstream.requests[-1]["messages"] if m["role"] == "tool"]


def test_a_query_repeated_in_a_later_step_is_not_run_again(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    upstream.queue(
        search_step(["iceland population"]),
        search_step(["iceland population", "reykjavik population"]),
        Step(content="About 390,000【1】."),
    )
    reply = ask(webreach_url)

    assert [r.query for r in search.calls] == ["iceland population", "reykjavik population"]
    first, second = tool_texts(upstream)
    assert "[1] iceland population — result 1" in first
    assert "[1] iceland population — result 1" in second  # the same sources, the same numbers
    assert "[4] reykjavik population — result 1" in second
    assert reply.choices[0].message.annotations[0].url_citation.url == (
        "https://iceland-population.example/1"
    )
    assert reply.usage.model_extra["server_tool_use"] == {
        "web_search_requests": 2,
        "web_fetch_requests": 0,
        "tool_search": 2,  # the repeated query is not billed again
        "tool_fetch": 0,
        "tool_image_search": 0,
    }


def test_a_call_of_only_repeated_queries_is_not_billed(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    upstream.queue(
        search_step(["iceland population"]),
        search_step(["iceland population"]),
        Step(content="About 390,000."),
    )
    reply = ask(webreach_url)
    assert [r.query for r in search.calls] == ["iceland population"]
    used = reply.usage.model_extra["server_tool_use"]
    assert (used["web_search_requests"], used["tool_search"]) == (2, 1)
    first, second = tool_texts(upstream)
    assert first == second


def test_the_same_query_in_two_calls_of_one_step_runs_once(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    upstream.queue(
        search_step(["iceland population"], ["iceland population"]),
        Step(content="About 390,000."),
    )
    reply = ask(webreach_url)
    assert [r.query for r in search.calls] == ["iceland population"]
    used = reply.usage.model_extra["server_tool_use"]
    assert (used["web_search_requests"], used["tool_search"]) == (2, 1)


def test_a_new_turn_searches_again(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    for _ in range(2):
        upstream.queue(search_step(["iceland population"]), Step(content="About 390,000."))
        ask(webreach_url)
    assert [r.query for r in search.calls] == ["iceland population"] * 2


def found(request: SearchRequest) -> SearchResult:
    return SearchResult(sources=sources(f"https://{request.query}.example/"))


async def test_other_filters_are_another_search_and_failures_are_not_kept() -> None:
    failures = [WebError(WebErrorCode.WEB_PROVIDER_ERROR, "down", provider="scripted")]

    async def answer(request: SearchRequest) -> SearchResult:
        if failures:
            raise failures.pop()
        return found(request)

    provider = ScriptedSearch(behaviour=answer)
    runtime = WebRuntime()
    runtime.register_search_provider(provider)
    turn = TurnSearches()
    call = turn.around(runtime)
    with pytest.raises(WebError):
        await call.search(SearchRequest("iceland", max_results=5))
    assert call.ran == 0
    await call.search(SearchRequest("iceland", max_results=5))
    again = turn.around(runtime)
    await again.search(SearchRequest("iceland", max_results=5))
    await again.search(SearchRequest("iceland", max_results=5, recency="week"))
    assert [(r.query, r.recency) for r in provider.calls] == [
        ("iceland", None),
        ("iceland", None),
        ("iceland", "week"),
    ]
    assert (call.ran, again.ran) == (1, 1)


async def test_a_waiter_runs_the_query_itself_when_the_first_caller_is_cancelled() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def slow(request: SearchRequest) -> SearchResult:
        started.set()
        await release.wait()
        return found(request)

    provider = ScriptedSearch(behaviour=slow)
    runtime = WebRuntime()
    runtime.register_search_provider(provider)
    turn = TurnSearches()
    first = asyncio.ensure_future(turn.around(runtime).search(SearchRequest("iceland")))
    await started.wait()
    second_call = turn.around(runtime)
    second = asyncio.ensure_future(second_call.search(SearchRequest("iceland")))
    await asyncio.sleep(0)
    first.cancel()
    await asyncio.sleep(0.01)
    release.set()
    result = await asyncio.wait_for(second, 5)
    assert result.sources[0].url == "https://iceland.example/"
    assert first.cancelled()
    assert second_call.ran == 1
    assert len(provider.calls) == 2
