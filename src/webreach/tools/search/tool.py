"""``web_search``: several queries in one call, run concurrently, merged fairly by rank."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from ...seam import (
    InvalidValueError,
    SearchCitation,
    SearchFilter,
    SearchResult,
    SearchSource,
    WebError,
    WebRuntime,
)
from ..base import (
    ContextSize,
    SearchFilters,
    SearchTuning,
    ToolDefinition,
    ToolError,
    ToolOptions,
    ToolResult,
)
from ..untrusted import fence
from .filters import filter_fates, filters_line
from .inputs import (
    invalid_arguments,
    parse_queries,
    parse_search_arguments,
    parse_search_call,
    search_description,
    search_schema,
)
from .merge import all_or_nothing, merge_sources
from .passages import CONTEXT_BUDGETS, Passage, read_passages, select_passages
from .sections import Sections, clip, merge_sections, section_lines

__all__ = [
    "WEB_SEARCH",
    "QueryDone",
    "SearchToolResult",
    "format_search",
    "parse_queries",
    "parse_search_arguments",
    "parse_search_call",
    "run_search",
    "shown_passages",
    "web_search_tool",
]

WEB_SEARCH = "web_search"
SNIPPET_CHARS = 240
ANSWER_CHARS = 4_000
"""The most of one provider-written answer the model reads."""
ANSWERS_CHARS = 8_000
"""The most of all the answers of one call the model reads."""
CITE_LINE = "Cite the URLs you use as Markdown links, e.g. [title](https://example.com/page)."


@dataclass(frozen=True, slots=True)
class SearchToolResult:
    """One ``web_search`` call: the distinct queries, the merged answer and sources."""

    queries: tuple[str, ...]
    content: str | None
    sources: tuple[SearchSource, ...]
    truncated: bool
    provider: str | None = None
    filters: SearchFilters = field(default_factory=SearchFilters)
    """The filters every query ran with."""
    filtered_by_provider: tuple[SearchFilter, ...] = ()
    """Those the provider's API applied (for every query)."""
    filtered_after: tuple[SearchFilter, ...] = ()
    """Those the seam applied to the provider's sources (for some query)."""
    unfiltered: tuple[SearchFilter, ...] = ()
    """Those nobody could apply (for some query): a ``country`` the provider cannot take."""
    context_size: ContextSize = "low"
    passages: Mapping[str, tuple[Passage, ...]] = field(default_factory=dict)
    """The ranked passages of each source whose page was read (``medium`` / ``high``), best
    first; :func:`format_search` prints those that fit the size's budget."""
    citations: tuple[SearchCitation, ...] = ()
    """What the providers' answers cite, over every query, each once, in order."""
    related: tuple[str, ...] = ()
    """Questions or searches the providers suggest next, each once (at most a few)."""
    provider_queries: tuple[str, ...] = ()
    """The searches model-backed providers ran to answer, each once."""

    def to_json(self) -> dict[str, Any]:
        return {
            "queries": list(self.queries),
            "content": self.content,
            "sources": [
                {
                    "url": s.url,
                    "title": s.title,
                    "snippet": s.snippet,
                    "published_at": s.published_at,
                    **self._passages_json(s.url),
                }
                for s in self.sources
            ],
            "truncated": self.truncated,
            "provider": self.provider,
            "filtered_by_provider": list(self.filtered_by_provider),
            "filtered_after": list(self.filtered_after),
            "unfiltered": list(self.unfiltered),
            "citations": [
                {"url": c.url, "title": c.title, "cited_text": c.cited_text} for c in self.citations
            ],
            "related": list(self.related),
            "provider_queries": list(self.provider_queries),
        }

    def _passages_json(self, url: str) -> dict[str, list[str]]:
        found = self.passages.get(url)
        return {"passages": [p.text for p in found]} if found else {}


QueryDone = Callable[[str, SearchResult], None]
"""Called as each query of a call finishes, for live progress displays."""


async def run_search(
    runtime: WebRuntime,
    queries: Sequence[str],
    *,
    max_results: int,
    filters: SearchFilters | None = None,
    on_query_done: QueryDone | None = None,
    context_size: ContextSize = "low",
    page_timeout: float = 3.0,
    tuning: SearchTuning | None = None,
) -> SearchToolResult:
    """Run validated queries through the seam, each with ``filters`` and ``tuning``, and
    combine their results; at ``medium`` / ``high``, also read the top sources' pages for
    passages (within ``page_timeout``)."""
    try:
        checked = (filters or SearchFilters()).check()
    except InvalidValueError as error:
        raise invalid_arguments(f"search filter `{error.field}`: {error}") from error
    merged = await _search(
        runtime, queries, max_results, checked, tuning or SearchTuning(), on_query_done
    )
    if context_size == "low" or not merged.sources:
        return merged
    finals: dict[str, str] = {}
    passages = await read_passages(
        runtime, merged.sources, queries, size=context_size, deadline=page_timeout, finals=finals
    )
    if finals:
        merged, passages = _cited_at_final_urls(merged, passages, finals)
    return replace(merged, context_size=context_size, passages=passages)


def _cited_at_final_urls(
    result: SearchToolResult,
    passages: Mapping[str, tuple[Passage, ...]],
    finals: Mapping[str, str],
) -> tuple[SearchToolResult, dict[str, tuple[Passage, ...]]]:
    """Sources whose page was read after redirects, cited by the URL the page was read at (a
    redirector's or shortener's link is not where the words are); a final URL another source
    already has keeps that source alone."""
    taken = {s.url for s in result.sources}
    sources: list[SearchSource] = []
    moved: dict[str, tuple[Passage, ...]] = dict(passages)
    for source in result.sources:
        final = finals.get(source.url)
        if final is None or final in taken:
            sources.append(source)
            continue
        taken.add(final)
        sources.append(replace(source, url=final))
        if source.url in moved:
            moved[final] = moved.pop(source.url)
    return replace(result, sources=tuple(sources)), moved


def cap_answer(text: str, limit: int = ANSWER_CHARS) -> str:
    """A provider's answer cut to ``limit`` characters, saying so."""
    if len(text.strip()) <= limit:
        return text
    text = text.strip()
    note = f"\n[Answer cut to {limit:,} of its {len(text):,} characters.]"
    keep = text[: max(0, limit - len(note))]
    cut = keep.rfind("\n", int(len(keep) * 0.8))
    return (keep[:cut] if cut > 0 else keep).rstrip() + note


async def _search(
    runtime: WebRuntime,
    queries: Sequence[str],
    max_results: int,
    filters: SearchFilters,
    tuning: SearchTuning,
    on_query_done: QueryDone | None,
) -> SearchToolResult:
    """Run validated queries through the seam, each with ``filters`` (checked here), and
    combine their results."""

    def one(query: str) -> Callable[[], Awaitable[SearchResult]]:
        async def call() -> SearchResult:
            result = await runtime.search(filters.request(query, max_results, tuning))
            if on_query_done is not None:
                on_query_done(query, result)
            return result

        return call

    try:
        results = await all_or_nothing([one(q) for q in queries])
    except WebError as error:
        raise ToolError.from_web_error(error) from error
    providers = {r.provider for r in results if r.provider}
    fates = filter_fates(results)
    sections = merge_sections(results, queries)
    if len(results) == 1:
        content, sources, truncated = _one_answer(results[0], max_results)
    else:
        content, sources, truncated = _answers(queries, results, max_results)
    return SearchToolResult(
        queries=tuple(queries),
        content=content,
        sources=sources,
        truncated=truncated,
        provider=providers.pop() if len(providers) == 1 else None,
        filters=filters,
        filtered_by_provider=fates[0],
        filtered_after=fates[1],
        unfiltered=fates[2],
        citations=sections.citations,
        related=sections.related,
        provider_queries=sections.queries,
    )


_Answer = tuple[str | None, tuple[SearchSource, ...], bool]
"""The answer text, the sources and whether either was cut."""


def _one_answer(only: SearchResult, max_results: int) -> _Answer:
    """One query's answer as the provider wrote it (capped), its sources cut to the count."""
    sources, cut = only.sources[:max_results], len(only.sources) > max_results
    content = cap_answer(only.content) if only.content else only.content
    return content, sources, only.truncated or cut


def _answers(queries: Sequence[str], results: Sequence[SearchResult], max_results: int) -> _Answer:
    """Several queries' answers, each under its query's heading and a share of the room, and
    their sources merged by rank."""
    answered = [
        (query, result.content)
        for query, result in zip(queries, results, strict=True)
        if result.content and result.content.strip()
    ]
    share = max(ANSWERS_CHARS // max(len(answered), 1), 1)
    answers = [
        f"### {query}\n\n{cap_answer(content.strip(), min(ANSWER_CHARS, share))}"
        for query, content in answered
    ]
    sources, cut = merge_sources(results, max_results)
    return "\n\n".join(answers) or None, sources, cut or any(r.truncated for r in results)


def _label(source: SearchSource) -> str:
    if source.title:
        return " ".join(source.title.split())
    return urlsplit(source.url).hostname or source.url


def format_search(
    result: SearchToolResult,
    *,
    numbers: Sequence[int] | None = None,
    cite_line: str = CITE_LINE,
) -> str:
    """The text the model reads: answers first, then numbered sources, fenced as web content.

    ``numbers`` gives each source its citation number when a caller numbers sources across
    several searches (the API server does); by default they count from 1. At ``medium`` /
    ``high`` each source whose page was read shows its best passages, as many as the size's
    budget for the whole text allows.
    """
    return _choose(result, numbers, cite_line)[0]


def shown_passages(
    result: SearchToolResult,
    *,
    numbers: Sequence[int] | None = None,
    cite_line: str = CITE_LINE,
) -> dict[str, Passage]:
    """The best passage of each source that :func:`format_search` shows passages for."""
    if not result.passages:
        return {}
    chosen = _choose(result, numbers, cite_line)[1]
    return {url: max(found, key=lambda p: p.score) for url, found in chosen.items()}


def _choose(
    result: SearchToolResult, numbers: Sequence[int] | None, cite_line: str
) -> tuple[str, dict[str, tuple[Passage, ...]]]:
    """The text and the passages in it: as many as keep the whole within the size's budget."""
    text = _layout(result, numbers, cite_line, {})
    if not result.passages:
        return text, {}
    budget = CONTEXT_BUDGETS[result.context_size]
    left = budget - len(text)
    order = [s.url for s in result.sources]
    while left > 0:
        chosen = select_passages(result.passages, order, left)
        if not chosen:
            break
        fuller = _layout(result, numbers, cite_line, chosen)
        if len(fuller) <= budget:
            return fuller, chosen
        left -= len(fuller) - budget
    return text, {}


def _layout(
    result: SearchToolResult,
    numbers: Sequence[int] | None,
    cite_line: str,
    passages: Mapping[str, tuple[Passage, ...]],
) -> str:
    quoted = " · ".join(f'"{q}"' for q in result.queries)
    filtered = filters_line(result)
    if not result.sources and not result.content:
        empty = f"Web search for {quoted}: no results. Try other wording or fewer terms."
        return f"{empty}\n{filtered}" if filtered else empty
    count = len(result.sources)
    head = f"Web search for {quoted}: {count} source{'s' if count != 1 else ''}"
    if result.truncated:
        head += " (more were found; the list was cut)"
    if filtered:
        head += f"\n{filtered}"
    parts: list[str] = []
    if result.content:
        parts.append(result.content.strip())
    labels = list(numbers) if numbers is not None else list(range(1, len(result.sources) + 1))
    if result.sources:
        lines = ["Sources:"]
        for number, source in zip(labels, result.sources, strict=True):
            when = f" ({source.published_at})" if source.published_at else ""
            lines.append(f"[{number}] {_label(source)}{when}")
            lines.append(f"    {source.url}")
            if source.snippet:
                lines.append(f"    {clip(source.snippet, SNIPPET_CHARS)}")
            lines.extend(_passage_lines(passages.get(source.url, ())))
        parts.append("\n".join(lines))
    numbered = dict(zip((s.url for s in result.sources), labels, strict=True))
    extras = Sections(result.citations, result.related, result.provider_queries)
    parts.extend(section_lines(extras, numbered))
    body = fence("\n\n".join(parts), source=WEB_SEARCH)
    return f"{head}\n\n{body}\n\n{cite_line}"


def _passage_lines(passages: Sequence[Passage]) -> list[str]:
    """A source's passages in page order, indented under it, ``…`` between pieces."""
    if not passages:
        return []
    lines = ["    From the page:"]
    for index, passage in enumerate(passages):
        if index:
            lines.append("    …")
        lines.extend(f"    {line}".rstrip() for line in passage.text.splitlines())
    return lines


def web_search_tool(
    runtime: WebRuntime,
    options: ToolOptions | None = None,
    *,
    on_query_done: QueryDone | None = None,
    filters: SearchFilters | None = None,
) -> ToolDefinition:
    """``filters`` are the caller's, applied to every call (``webreach search --site``); the
    model's ``recency`` narrows them."""
    options = options or ToolOptions()
    given = filters or SearchFilters()

    async def execute(arguments: Mapping[str, Any]) -> ToolResult:
        call = parse_search_call(arguments, options.search_max_queries)
        bound = options.search_max_results
        result = await run_search(
            runtime,
            call.queries,
            max_results=min(call.limit or bound, bound),
            filters=given.narrowed(call.recency),
            on_query_done=on_query_done,
            context_size=options.search_context_size,
            page_timeout=options.search_page_timeout,
            tuning=call.tuning,
        )
        return ToolResult(text=format_search(result), data=result)

    return ToolDefinition(
        name=WEB_SEARCH,
        description=search_description(options.search_max_queries),
        input_schema=search_schema(options.search_max_queries, options.search_max_results),
        execute=execute,
    )
