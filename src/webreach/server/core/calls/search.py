"""``web_search`` for the model: its definition, and one call run through ``webreach.tools``
with its sources numbered for the round."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

from ....seam import WebRuntime
from ....tools import ToolError, ToolOptions, format_search, parse_queries, run_search
from ....tools.search import SearchToolResult, search_schema
from ..display import published, site_icon, site_name
from ..events import CallFailed, Outcome, SearchOutcome, WebSource
from ..journal import web_failure
from ..turn import SearchSpec
from .tool import ModelTool, function_tool

__all__ = [
    "CITE_WITH_MARKERS",
    "SourceRegistry",
    "parse_search_arguments",
    "run_search_call",
    "search_tool",
]


CITE_WITH_MARKERS = (
    "Cite the sources you use with their numbers in 【n】 markers right after the statement "
    "they support, e.g. 【1】 or 【2】【5】; never cite a number that is not listed."
)


def search_tool(options: ToolOptions, name: str = "web_search") -> ModelTool:
    bound = options.search_max_queries
    description = (
        "Search the web for current information. Pass 1 to "
        f"{bound} distinct queries in `queries`; they run at the same time. Results are "
        "numbered sources; cite them as 【n】."
    )
    return function_tool(name, description, search_schema(bound))


@dataclass
class SourceRegistry:
    """Numbers every source of a round once, by URL, so 【n】 means the same thing throughout."""

    by_url: dict[str, WebSource] = field(default_factory=dict)
    by_number: dict[int, WebSource] = field(default_factory=dict)

    def add(self, source: WebSource) -> WebSource:
        known = self.by_url.get(source.url)
        if known is not None:
            return known
        numbered = replace(source, number=len(self.by_number) + 1)
        self.by_url[source.url] = numbered
        self.by_number[numbered.number] = numbered
        return numbered

    def lookup(self, number: int) -> WebSource | None:
        return self.by_number.get(number)


def parse_search_arguments(raw: str, options: ToolOptions) -> tuple[str, ...]:
    """The queries of a ``web_search`` call; raises ``ToolError`` for malformed arguments."""
    try:
        arguments = json.loads(raw or "{}")
    except ValueError:
        raise ToolError("INVALID_ARGUMENTS", "arguments are not valid JSON") from None
    return parse_queries(arguments, options.search_max_queries)


async def run_search_call(
    queries: tuple[str, ...],
    spec: SearchSpec,
    runtime: WebRuntime,
    options: ToolOptions,
    registry: SourceRegistry,
) -> tuple[Outcome, str, int]:
    """Run one call; returns the client-facing outcome, the model's text and billed queries."""
    try:
        limit = min(spec.max_results or options.search_max_results, options.search_max_results)
        result = await run_search(runtime, queries, max_results=limit)
    except ToolError as error:
        web_failure("search", error)
        return CallFailed("unavailable"), f"The search failed ({error.code}): {error.message}", 0
    kept = tuple(s for s in result.sources if spec.domains.admits(urlsplit(s.url).hostname))
    numbered = tuple(
        registry.add(
            WebSource(
                url=s.url,
                title=s.title,
                snippet=s.snippet,
                published_at=published(s.published_at),
                number=0,
                site_name=site_name(s.url),
                site_icon=site_icon(s.url),
            )
        )
        for s in kept
    )
    filtered = SearchToolResult(
        queries=result.queries,
        content=result.content,
        sources=kept,
        truncated=result.truncated,
        provider=result.provider,
    )
    text = format_search(
        filtered, numbers=[s.number for s in numbered], cite_line=CITE_WITH_MARKERS
    )
    billed = len(queries) if numbered or result.content else 0
    return SearchOutcome(numbered), text, billed
