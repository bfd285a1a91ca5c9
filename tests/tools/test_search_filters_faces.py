"""Filters on the model-facing ``web_search``: the model's ``recency``, a caller's filters, what
reaches the provider's request, and what the result says of them (text, JSON, MCP)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from providers_for_tests import ScriptedSearch, sources
from replay_server import ReplayServer, Reply
from test_mcp import EXA_RESPONSE, Connect, connect, http_servers, server_env, text_of
from webreach.seam import SearchFilter, SearchRequest, SearchResult, SearchSource, WebRuntime
from webreach.tools import (
    INVALID_ARGUMENTS,
    SearchFilters,
    ToolError,
    run_search,
    web_search_tool,
)
from webreach.tools.search.filters import filter_fates
from webreach.tools.search.inputs import parse_search_arguments, search_schema

__all__ = ["connect", "http_servers"]  # the MCP fixtures, used here too

MIXED = sources(
    "https://example.com/a",
    "https://www.python.org/downloads/",
    "https://spam.example/b",
    "https://docs.python.org/3/",
)


@dataclass
class DomainsNatively(ScriptedSearch):
    """A provider whose API takes domains and recency: it answers only python.org sources when
    asked to, as an engine would."""

    filters: frozenset[SearchFilter] = frozenset({"include_domains", "recency"})

    async def search(self, request: SearchRequest) -> SearchResult:
        await super().search(request)
        kept = [s for s in MIXED if not request.include_domains or "python.org" in s.url]
        return SearchResult(sources=tuple(kept))


def runtime_over(provider: ScriptedSearch) -> WebRuntime:
    runtime = WebRuntime()
    runtime.register_search_provider(provider)
    return runtime


def mixed() -> ScriptedSearch:
    return ScriptedSearch(answers={"q": SearchResult(sources=MIXED)})


def test_the_schema_offers_an_optional_recency() -> None:
    schema = search_schema(4)
    assert schema["properties"]["recency"]["enum"] == ["day", "week", "month", "year"]
    assert schema["required"] == ["queries"]
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"queries": ["a", "a", "b"]}, (("a", "b"), None)),
        ({"queries": ["a"], "recency": "week"}, (("a",), "week")),
        ({"queries": ["a"], "recency": None}, (("a",), None)),
    ],
)
def test_arguments_give_the_queries_and_the_recency(
    arguments: dict[str, Any], expected: tuple[Any, ...]
) -> None:
    assert parse_search_arguments(arguments, 4) == expected


@pytest.mark.parametrize(
    ("recency", "message"),
    [
        ("hour", "`recency` must be one of day, week, month, year, not 'hour'"),
        (7, "`recency` must be one of day, week, month, year, not a number"),
        ("Week", "not 'Week'"),
    ],
)
async def test_a_bad_recency_is_invalid_arguments_and_calls_no_provider(
    recency: object, message: str
) -> None:
    provider = mixed()
    tool = web_search_tool(runtime_over(provider))
    with pytest.raises(ToolError) as caught:
        await tool.execute({"queries": ["q"], "recency": recency})
    assert caught.value.code == INVALID_ARGUMENTS
    assert message in caught.value.message
    assert provider.calls == []


async def test_an_unknown_argument_names_both_known_ones() -> None:
    with pytest.raises(ToolError) as caught:
        await web_search_tool(runtime_over(mixed())).execute({"queries": ["q"], "site": "x"})
    assert "unknown argument(s) site" in caught.value.message
    assert "`recency`" in caught.value.message


async def test_the_models_recency_reaches_every_querys_request() -> None:
    provider = mixed()
    await web_search_tool(runtime_over(provider)).execute(
        {"queries": ["q", "r"], "recency": "month"}
    )
    assert sorted((c.query, c.recency) for c in provider.calls) == [("q", "month"), ("r", "month")]


async def test_run_search_builds_each_request_from_the_filters() -> None:
    provider = mixed()
    filters = SearchFilters(
        recency="year",
        include_domains=("Python.org",),
        exclude_domains=("docs.python.org",),
        country="de",
        language="DE",
    )
    result = await run_search(runtime_over(provider), ["q"], max_results=3, filters=filters)
    (request,) = provider.calls
    assert (request.recency, request.include_domains, request.exclude_domains) == (
        "year",
        ("python.org",),
        ("docs.python.org",),
    )
    assert (request.country, request.language) == ("DE", "de")
    assert [s.url for s in result.sources] == ["https://www.python.org/downloads/"]
    assert result.filtered_after == ("recency", "include_domains", "exclude_domains")
    assert result.unfiltered == ("country", "language")
    assert result.to_json()["unfiltered"] == ["country", "language"]


async def test_a_bad_filter_is_invalid_arguments_before_any_call() -> None:
    provider = mixed()
    with pytest.raises(ToolError) as caught:
        await run_search(
            runtime_over(provider), ["q"], max_results=3, filters=SearchFilters(country="Germany")
        )
    assert caught.value.code == INVALID_ARGUMENTS
    assert "`country`" in caught.value.message and "ISO 3166-1 alpha-2" in caught.value.message
    assert provider.calls == []


async def test_a_callers_filters_and_the_models_recency_combine_the_narrower_wins() -> None:
    provider = mixed()
    caller = SearchFilters(recency="week", include_domains=("python.org",))
    tool = web_search_tool(runtime_over(provider), filters=caller)
    await tool.execute({"queries": ["q"], "recency": "year"})
    await tool.execute({"queries": ["q"], "recency": "day"})
    assert [(c.recency, c.include_domains) for c in provider.calls] == [
        ("week", ("python.org",)),
        ("day", ("python.org",)),
    ]


async def test_the_text_says_which_filters_applied_and_who_applied_them() -> None:
    provider = DomainsNatively()
    tool = web_search_tool(
        runtime_over(provider), filters=SearchFilters(exclude_domains=("docs.python.org",))
    )
    result = await tool.execute({"queries": ["q"], "recency": "week"})
    head = result.text.splitlines()
    assert head[0] == 'Web search for "q": 3 sources'
    assert head[1] == "Filtered: recency week (provider), not site docs.python.org (after)"
    assert result.data.to_json()["filtered_by_provider"] == ["recency"]
    assert result.data.to_json()["filtered_after"] == ["exclude_domains"]


async def test_without_filters_the_text_is_as_before() -> None:
    result = await web_search_tool(runtime_over(mixed())).execute({"queries": ["q"]})
    assert "Filtered" not in result.text
    assert result.text.startswith('Web search for "q": 4 sources\n\nThe web_content block')
    data = result.data.to_json()
    assert (data["filtered_by_provider"], data["filtered_after"], data["unfiltered"]) == (
        [],
        [],
        [],
    )


async def test_no_results_under_a_filter_says_which_filter() -> None:
    result = await web_search_tool(
        runtime_over(mixed()), filters=SearchFilters(include_domains=("nowhere.example",))
    ).execute({"queries": ["q"]})
    assert result.text == (
        'Web search for "q": no results. Try other wording or fewer terms.\n'
        "Filtered: site nowhere.example (after)"
    )


async def test_a_narrow_site_filter_still_finds_sources_on_a_mixed_provider() -> None:
    """The seam asks for more when it filters after, so python.org sources ranked below the
    first few still come back."""
    many = tuple(SearchSource(f"https://other{n}.example/") for n in range(6)) + sources(
        "https://www.python.org/"
    )
    provider = ScriptedSearch(answers={"q": SearchResult(sources=many)})
    result = await run_search(
        runtime_over(provider),
        ["q"],
        max_results=3,
        filters=SearchFilters(include_domains=("python.org",)),
    )
    assert [s.url for s in result.sources] == ["https://www.python.org/"]
    assert provider.calls[0].max_results == 12


def test_filter_fates_over_several_queries_report_the_weakest() -> None:
    """A filter the engine applied for one query but the seam for another (a fallback provider
    answered it) is reported as applied after: some sources were not filtered by the engine."""
    native = SearchResult((), filtered_by_provider=frozenset({"include_domains", "recency"}))
    after = SearchResult(
        (),
        filtered_by_provider=frozenset({"recency"}),
        filtered_after=frozenset({"include_domains"}),
        unfiltered=frozenset({"country"}),
    )
    assert filter_fates([native, after]) == (("recency",), ("include_domains",), ("country",))
    assert filter_fates([native]) == (("recency", "include_domains"), (), ())


async def test_mcp_web_search_takes_recency_and_reports_the_filter_fates(
    connect: Connect, replay: ReplayServer
) -> None:
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    async with connect(server_env(replay)) as client:
        listed = await client.list_tools()
        (search,) = [tool for tool in listed.tools if tool.name == "web_search"]
        assert search.input_schema["properties"]["recency"]["enum"][1] == "week"

        found = await client.call_tool("web_search", {"queries": ["python"], "recency": "week"})
        assert not found.is_error
        data = found.structured_content
        assert data is not None
        assert "recency" in data["filtered_by_provider"] + data["filtered_after"]
        assert data["unfiltered"] == []
        assert "Filtered: recency week (" in text_of(found)

        bad = await client.call_tool("web_search", {"queries": ["python"], "recency": "hour"})
        assert bad.is_error
        assert bad.structured_content is None
        assert bad.meta is not None
        assert bad.meta["webreach/error"]["code"] == "INVALID_ARGUMENTS"
        assert len(replay.requests) == 1
