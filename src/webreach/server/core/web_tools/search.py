"""``web_search`` for the model: its definition, and one call run through ``webreach.tools``
with its sources numbered for the round."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from urllib.parse import urlsplit

from ....seam import Recency, WebRuntime
from ....tools import ToolError, ToolOptions, format_search, run_search
from ....tools.base import ContextSize, SearchTuning
from ....tools.search.inputs import SearchArguments, parse_search_call, search_schema
from ....tools.search.tool import shown_passages
from ..turn.events import Billing, CallFailed, Outcome, SearchAction, SearchOutcome, WebSource
from ..turn.operator_log import web_failure
from ..turn.shape import ForcedWeb, SearchSpec
from ..upstream.step import PendingCall
from ..wire.display import published, site_icon, site_name
from .base import (
    SEARCH_BILLING,
    SEARCH_BUDGET,
    Plan,
    Slot,
    SourceRegistry,
    ToolSetup,
    invalid_input,
    over_budget,
)
from .tool import ModelTool, function_tool
from .turn_searches import TurnSearches

__all__ = [
    "CITE_WITH_MARKERS",
    "SourceRegistry",
    "WebSearch",
    "parse_search_arguments",
    "run_search_call",
    "search_tool",
]


PASSAGE_SNIPPET_CHARS = 500
"""The most of a source's best passage shown to clients as its snippet."""
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
    return function_tool(name, description, search_schema(bound, options.search_max_results))


def parse_search_arguments(raw: str, options: ToolOptions) -> SearchArguments:
    """A ``web_search`` call's arguments (queries, recency, limit and the provider's tuning);
    raises ``ToolError`` for malformed arguments."""
    try:
        arguments = json.loads(raw or "{}")
    except ValueError:
        raise ToolError("INVALID_ARGUMENTS", "arguments are not valid JSON") from None
    return parse_search_call(arguments, options.search_max_queries)


async def run_search_call(
    queries: tuple[str, ...],
    spec: SearchSpec,
    runtime: WebRuntime,
    options: ToolOptions,
    registry: SourceRegistry,
    searches: TurnSearches | None = None,
    recency: Recency | None = None,
    context_size: ContextSize = "low",
    *,
    limit: int | None = None,
    tuning: SearchTuning | None = None,
) -> tuple[Outcome, str, int]:
    """Run one call with the request's filters and the model's ``recency`` (the narrower of it
    and the request's wins), and the model's ``limit`` within the request's and the server's;
    returns the client-facing outcome, the model's text and billed queries. The request's
    domains are also checked here, whoever applied them (a provider's citations too). A query
    ``searches`` already ran this turn is answered from its result, and not billed.

    At ``medium`` / ``high`` a source whose page gave passages shows its best one as its
    snippet, so a client's ``cited_text`` can quote what the model read."""
    memo = (searches or TurnSearches()).around(runtime)
    runtime = memo.runtime
    try:
        bound = min(spec.max_results or options.search_max_results, options.search_max_results)
        result = await run_search(
            runtime,
            queries,
            max_results=min(limit or bound, bound),
            filters=spec.filters.narrowed(recency),
            context_size=context_size,
            page_timeout=options.search_page_timeout,
            tuning=tuning,
        )
    except ToolError as error:
        web_failure("search", error)
        return CallFailed("unavailable"), f"The search failed ({error.code}): {error.message}", 0
    kept = tuple(s for s in result.sources if spec.domains.admits(urlsplit(s.url).hostname))
    cited = tuple(c for c in result.citations if spec.domains.admits(urlsplit(c.url).hostname))
    filtered = dataclasses.replace(result, sources=kept, citations=cited)
    best = shown_passages(filtered, cite_line=CITE_WITH_MARKERS)
    numbered = tuple(
        registry.add(
            WebSource(
                url=s.url,
                title=s.title,
                snippet=_passage_snippet(best[s.url].text) if s.url in best else s.snippet,
                published_at=published(s.published_at),
                number=0,
                site_name=site_name(s.url),
                site_icon=site_icon(s.url),
            )
        )
        for s in kept
    )
    text = format_search(
        filtered, numbers=[s.number for s in numbered], cite_line=CITE_WITH_MARKERS
    )
    billed = memo.ran if numbered or result.content else 0
    return SearchOutcome(numbered), text, billed


def _passage_snippet(text: str) -> str:
    """A passage as one line of at most ``PASSAGE_SNIPPET_CHARS``, ending at a word."""
    line = " ".join(text.split())
    if len(line) <= PASSAGE_SNIPPET_CHARS:
        return line
    return line[: PASSAGE_SNIPPET_CHARS - 1].rsplit(" ", 1)[0].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class WebSearch:
    """``web_search``: offered whenever the client declared a web search."""

    models: tuple[ModelTool, ...]
    declared: SearchSpec
    kind: str
    id_prefix: str
    setup: ToolSetup
    budget: str = SEARCH_BUDGET
    billing: Billing = SEARCH_BILLING
    forced_as: ForcedWeb = "search"

    @classmethod
    def offer(cls, setup: ToolSetup) -> WebSearch | None:
        spec = setup.turn.web.search
        if spec is None:
            return None
        model = search_tool(setup.context.options, setup.name("web_search", "webreach_search"))
        if setup.deep:
            return cls((model,), spec, "deep_search", "ds", setup)
        return cls((model,), spec, "search", "s", setup)

    def plan(self, call: PendingCall, slot: Slot) -> Plan:
        context = self.setup.context
        try:
            arguments = parse_search_arguments(call.arguments, context.options)
        except ToolError as error:
            return SearchAction(()), invalid_input(error)
        queries = arguments.queries
        if not slot.within_budget:
            return SearchAction(queries), over_budget("search")
        # Deep search opens pages itself; a quick search gets the pages' passages.
        size: ContextSize = "low"
        if self.kind == "search":
            size = self.declared.context_size or context.options.search_context_size
        work = run_search_call(
            queries,
            self.declared,
            context.runtime,
            context.options,
            self.setup.sources,
            self.setup.searches,
            arguments.recency,
            size,
            limit=arguments.limit,
            tuning=arguments.tuning,
        )
        return SearchAction(queries), work
