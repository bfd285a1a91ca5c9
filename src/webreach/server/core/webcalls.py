"""Running the model's web calls through ``webreach.tools``, with sources numbered per round."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from ...seam import FetchRequest, WebError, WebRuntime
from ...tools import (
    ToolError,
    ToolOptions,
    fence,
    format_search,
    parse_queries,
    render_body,
    run_search,
)
from ...tools.fetch import page_piece
from ...tools.search import SearchToolResult, search_schema
from .events import CallFailed, Outcome, PageOutcome, SearchOutcome, WebSource
from .sealing import PageSealer, SealedPage
from .turn import ReadUrlSpec, SearchSpec

__all__ = [
    "DEEP_SEARCH_BUDGET",
    "READ_LINKS_LIMIT",
    "ModelTool",
    "OpenedPages",
    "SourceRegistry",
    "call_id",
    "links_in",
    "page_text",
    "page_tools",
    "parse_page_arguments",
    "parse_read_arguments",
    "parse_search_arguments",
    "read_tool",
    "run_find_call",
    "run_open_call",
    "run_read_call",
    "run_search_call",
    "search_tool",
]

CITE_WITH_MARKERS = (
    "Cite the sources you use with their numbers in 【n】 markers right after the statement "
    "they support, e.g. 【1】 or 【2】【5】; never cite a number that is not listed."
)


@dataclass(frozen=True, slots=True)
class ModelTool:
    """A function tool the server itself gives the upstream model."""

    name: str
    definition: dict[str, Any]


def search_tool(options: ToolOptions, name: str = "web_search") -> ModelTool:
    bound = options.search_max_queries
    description = (
        "Search the web for current information. Pass 1 to "
        f"{bound} distinct queries in `queries`; they run at the same time. Results are "
        "numbered sources; cite them as 【n】."
    )
    return ModelTool(
        name,
        {
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": search_schema(bound),
            },
        },
    )


def call_id(prefix: str, step: int) -> str:
    return f"srvtoolu_{prefix}_{step:02d}_{uuid.uuid4().hex}"


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
        result = await run_search(runtime, queries, max_results=options.search_max_results)
    except ToolError as error:
        return CallFailed("unavailable"), f"The search failed ({error.code}): {error.message}", 0
    kept = tuple(s for s in result.sources if spec.domains.admits(urlsplit(s.url).hostname))
    numbered = tuple(
        registry.add(
            WebSource(
                url=s.url,
                title=s.title,
                snippet=s.snippet,
                published_at=s.published_at,
                number=0,
                site_name=None,
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


READ_LINKS_LIMIT = 10
"""Distinct URLs of the last user message the model may read."""
_URL = re.compile(r"https?://[^\s<>\"'`{}|\\^\[\]（）「」【】]+", re.IGNORECASE)
_TRAILING = ".,;:!?)]}'\"。，；：！？、》"


def read_tool(max_links: int, name: str = "read_link") -> ModelTool:
    return ModelTool(
        name,
        {
            "type": "function",
            "function": {
                "name": name,
                "description": (
                    "Read a web page whose URL the user gave in their last message. Only those "
                    f"URLs can be read (at most {max_links} different ones)."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {"url": {"type": "string", "description": "The URL to read."}},
                    "required": ["url"],
                    "additionalProperties": False,
                },
            },
        },
    )


def links_in(message: dict[str, Any] | None) -> list[str]:
    """The first distinct URLs in a user message's text, in order."""
    if message is None:
        return []
    content = message.get("content")
    if isinstance(content, list):
        text = " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    else:
        text = str(content or "")
    found = (match.rstrip(_TRAILING) for match in _URL.findall(text))
    return list(dict.fromkeys(url for url in found if url))[:READ_LINKS_LIMIT]


def _same_link(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def parse_read_arguments(raw: str, allowed: list[str]) -> str:
    """The URL of a ``read_link`` call; it must be one of the user's links."""
    try:
        arguments = json.loads(raw or "{}")
    except ValueError:
        raise ToolError("INVALID_ARGUMENTS", "arguments are not valid JSON") from None
    url = arguments.get("url") if isinstance(arguments, dict) else None
    if not isinstance(url, str) or not url.strip():
        raise ToolError("INVALID_ARGUMENTS", "`url` is required")
    url = url.strip()
    for link in allowed:
        if _same_link(url, link):
            return link
    raise ToolError("WEB_BLOCKED_URL", f"{url} is not a link of the user's last message")


async def run_read_call(
    url: str,
    spec: ReadUrlSpec,
    runtime: WebRuntime,
    room: int,
    sealer: PageSealer,
) -> tuple[Outcome, str, int]:
    """Fetch and render one of the user's links; the model gets at most ``room`` characters."""
    if not spec.domains.admits(urlsplit(url).hostname):
        return CallFailed("url_not_allowed"), f"ERROR: reading {url} is not allowed.", 0
    try:
        result = await runtime.fetch(FetchRequest(url))
    except WebError as error:
        failed = CallFailed(
            "url_not_allowed" if error.code in _NOT_ALLOWED else "url_not_accessible"
        )
        return failed, f"ERROR: {url} could not be read: {error}", 0
    if result.status_code >= 400:
        text = f"ERROR: {url} answered HTTP {result.status_code}."
        return CallFailed("url_not_accessible"), text, 0
    rendered = render_body(result)
    piece = page_piece(result, rendered, 0, max(1, room))
    page = SealedPage(result.url, rendered.title, None, piece.content)
    outcome = PageOutcome(result.url, rendered.title, None, sealer.seal(page))
    return outcome, page_text(page, cut=piece.truncated), 1


_NOT_ALLOWED = frozenset({"WEB_BLOCKED_URL", "WEB_INVALID_URL", "WEB_REDIRECT_BLOCKED"})


def page_text(page: SealedPage, *, cut: bool = False) -> str:
    """A read page as the model sees it, now and when restored in a later round."""
    head = f"Page: {page.url}"
    inside = f"Title: {page.title}\n\n{page.text}" if page.title else page.text
    note = "\n\n[The page is longer; only its first part is shown.]" if cut else ""
    return f"{head}\n\n{fence(inside, source='read_link')}{note}"


DEEP_SEARCH_BUDGET = 20
"""Tool calls of a deep search before the answer is forced."""
_FIND_MATCHES = 12
_FIND_CONTEXT = 160


def page_tools(max_chars: int) -> list[ModelTool]:
    """``open_page`` and ``find_in_page``: the deep-search model reads what its searches found."""
    url = {"type": "string", "description": "The page's URL, e.g. from a search result."}
    return [
        ModelTool(
            "open_page",
            {
                "type": "function",
                "function": {
                    "name": "open_page",
                    "description": (
                        "Open a web page and read its main content as Markdown (the first "
                        f"{max_chars:,} characters)."
                    ),
                    "parameters": {
                        "type": "object",
                        "properties": {"url": url},
                        "required": ["url"],
                        "additionalProperties": False,
                    },
                },
            },
        ),
        ModelTool(
            "find_in_page",
            {
                "type": "function",
                "function": {
                    "name": "find_in_page",
                    "description": (
                        "Find a word or phrase in a web page (case-insensitive) and get the lines "
                        "around each match; the page is opened first if needed."
                    ),
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "url": url,
                            "pattern": {"type": "string", "minLength": 1},
                        },
                        "required": ["url", "pattern"],
                        "additionalProperties": False,
                    },
                },
            },
        ),
    ]


def parse_page_arguments(raw: str, *, pattern: bool) -> tuple[str, str]:
    """``(url, pattern)`` of an ``open_page`` / ``find_in_page`` call."""
    try:
        arguments = json.loads(raw or "{}")
    except ValueError:
        raise ToolError("INVALID_ARGUMENTS", "arguments are not valid JSON") from None
    if not isinstance(arguments, dict):
        raise ToolError("INVALID_ARGUMENTS", "arguments must be an object")
    url, wanted = arguments.get("url"), arguments.get("pattern", "")
    if not isinstance(url, str) or not url.strip():
        raise ToolError("INVALID_ARGUMENTS", "`url` is required")
    if pattern and (not isinstance(wanted, str) or not wanted.strip()):
        raise ToolError("INVALID_ARGUMENTS", "`pattern` is required")
    return url.strip(), str(wanted).strip()


@dataclass
class OpenedPages:
    """Pages opened during one deep search, so finding text in them fetches nothing again.

    Calls of one step run concurrently, so a page being opened is shared while in flight too.
    """

    pages: dict[str, asyncio.Future[tuple[str, str | None, str]]] = field(default_factory=dict)
    """url -> (final url, title, rendered text), once fetched."""

    async def open(self, url: str, runtime: WebRuntime) -> tuple[str, str | None, str, bool]:
        """``(final url, title, text, fetched now)``; raises ``WebError`` when unreadable."""
        known = self.pages.get(url)
        if known is not None:
            return (*await known, False)
        opening = asyncio.ensure_future(_open(url, runtime))
        self.pages[url] = opening
        try:
            return (*await opening, True)
        except BaseException:
            if self.pages.get(url) is opening:
                del self.pages[url]
            raise


async def _open(url: str, runtime: WebRuntime) -> tuple[str, str | None, str]:
    result = await runtime.fetch(FetchRequest(url))
    if result.status_code >= 400:
        raise WebError("WEB_PROVIDER_ERROR", f"{url} answered HTTP {result.status_code}")
    rendered = render_body(result)
    return result.url, rendered.title, rendered.text


async def run_open_call(
    url: str, pages: OpenedPages, runtime: WebRuntime, max_chars: int
) -> tuple[Outcome, str, int]:
    try:
        final, title, text, fetched = await pages.open(url, runtime)
    except WebError as error:
        return CallFailed("unavailable"), f"ERROR: {url} could not be opened: {error}", 0
    shown = text[:max_chars]
    page = SealedPage(final, title, None, shown)
    note = len(shown) < len(text)
    return PageOutcome(final, title, None), page_text(page, cut=note), int(fetched)


async def run_find_call(
    url: str, pattern: str, pages: OpenedPages, runtime: WebRuntime
) -> tuple[Outcome, str, int]:
    try:
        final, _title, text, fetched = await pages.open(url, runtime)
    except WebError as error:
        return CallFailed("unavailable"), f"ERROR: {url} could not be opened: {error}", 0
    lowered, wanted = text.lower(), pattern.lower()
    snippets: list[str] = []
    start = lowered.find(wanted)
    while start >= 0 and len(snippets) < _FIND_MATCHES:
        begin = max(0, start - _FIND_CONTEXT)
        end = min(len(text), start + len(wanted) + _FIND_CONTEXT)
        snippets.append(" ".join(text[begin:end].split()))
        start = lowered.find(wanted, end)
    if snippets:
        found = "\n\n".join(f"[{n}] …{s}…" for n, s in enumerate(snippets, 1))
        body = f"{len(snippets)} match(es) of {pattern!r}:\n\n{fence(found, source='find_in_page')}"
    else:
        body = f"No match for {pattern!r} in the page."
    return PageOutcome(final, None, None), f"Page: {final}\n\n{body}", int(fetched)
