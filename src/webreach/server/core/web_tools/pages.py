"""``open_page`` and ``find_in_page`` for a deep search: the model reads what it found."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from ....seam import FetchRequest, WebError, WebRuntime
from ....tools import ToolError, fence, render_fetched
from ..state.page_cipher import ReadPage
from ..turn.events import (
    Action,
    Billing,
    CallFailed,
    FindInPageAction,
    OpenPageAction,
    Outcome,
    PageOutcome,
)
from ..turn.operator_log import web_failure
from ..turn.shape import JSON, ForcedWeb, SearchSpec
from ..upstream.step import PendingCall
from ..wire.display import published
from .base import (
    FETCH_BILLING,
    SEARCH_BUDGET,
    Plan,
    Slot,
    SourceRegistry,
    ToolSetup,
    argument_url,
    invalid_input,
    over_budget,
)
from .links import numbered_page, page_text
from .tool import ModelTool, function_tool, json_object, required_string

__all__ = [
    "DEEP_SEARCH_BUDGET",
    "OpenedPages",
    "PageTools",
    "page_tools",
    "parse_page_arguments",
    "run_find_call",
    "run_open_call",
]


DEEP_SEARCH_BUDGET = 20
"""Tool calls of a deep search before the answer is forced."""
_FIND_MATCHES = 12
_FIND_CONTEXT = 160


def page_tools(max_chars: int) -> list[ModelTool]:
    """``open_page`` and ``find_in_page``: the deep-search model reads what its searches found."""
    url = {"type": "string", "description": "The page's URL, e.g. from a search result."}
    opening = (
        f"Open a web page and read its main content as Markdown (the first {max_chars:,} "
        "characters)."
    )
    finding = (
        "Find a word or phrase in a web page (case-insensitive) and get the lines around each "
        "match; the page is opened first if needed."
    )
    return [
        function_tool("open_page", opening, _object({"url": url})),
        function_tool(
            "find_in_page",
            finding,
            _object({"url": url, "pattern": {"type": "string", "minLength": 1}}),
        ),
    ]


def _object(properties: JSON) -> JSON:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def parse_page_arguments(raw: str, *, pattern: bool) -> tuple[str, str]:
    """``(url, pattern)`` of an ``open_page`` / ``find_in_page`` call."""
    arguments = json_object(raw)
    url = required_string(arguments, "url")
    return url, required_string(arguments, "pattern") if pattern else ""


@dataclass(frozen=True, slots=True)
class Opened:
    """A page opened for the model: where it ended up, its title and date, its text."""

    url: str
    title: str | None
    published_at: str | None
    text: str


@dataclass
class OpenedPages:
    """Pages opened during one deep search, so finding text in them fetches nothing again.

    Calls of one step run concurrently, so a page being opened is shared while in flight too.
    """

    pages: dict[str, asyncio.Future[Opened]] = field(default_factory=dict)

    async def open(self, url: str, runtime: WebRuntime) -> tuple[Opened, bool]:
        """The page, and whether it was fetched now; raises ``WebError`` when unreadable."""
        known = self.pages.get(url)
        if known is not None:
            return await known, False
        opening = asyncio.ensure_future(_open(url, runtime))
        self.pages[url] = opening
        try:
            return await opening, True
        except BaseException:
            if self.pages.get(url) is opening:
                del self.pages[url]
            raise


async def _open(url: str, runtime: WebRuntime) -> Opened:
    request = FetchRequest(url, redirects="cross_origin", obey_robots=True)
    result = await runtime.fetch(request)
    if result.status_code >= 400:
        message = f"{url} answered HTTP {result.status_code}"
        raise _PageStatus(
            "WEB_PROVIDER_ERROR", message, provider=result.provider, status=result.status_code
        )
    rendered = await render_fetched(result, runtime)
    return Opened(result.url, rendered.title, published(rendered.published), rendered.text)


class _PageStatus(WebError):
    """A page that answered an HTTP error: the site's answer, not a provider's failure."""


def _unopened(url: str, error: WebError) -> tuple[Outcome, str, int]:
    if isinstance(error, _PageStatus):
        web_failure("fetch", url=url, status=error.status, provider=error.provider)
    else:
        web_failure("fetch", error, url=url)
    return CallFailed("unavailable"), f"ERROR: {url} could not be opened: {error}", 0


async def run_open_call(
    url: str,
    pages: OpenedPages,
    runtime: WebRuntime,
    max_chars: int,
    sources: SourceRegistry | None = None,
) -> tuple[Outcome, str, int]:
    """Open a page for the model, numbered among the round's ``sources`` so it can be cited."""
    try:
        opened, fetched = await pages.open(url, runtime)
    except WebError as error:
        return _unopened(url, error)
    shown = opened.text[:max_chars]
    page = ReadPage(opened.url, opened.title, opened.published_at, shown)
    note = "the room for a page (WEBREACH_FETCH_MAX_CHARS)" if len(shown) < len(opened.text) else ""
    outcome = PageOutcome(opened.url, opened.title, opened.published_at)
    number = numbered_page(page, sources)
    return outcome, page_text(page, cut=note, number=number), int(fetched)


async def run_find_call(
    url: str,
    pattern: str,
    pages: OpenedPages,
    runtime: WebRuntime,
    sources: SourceRegistry | None = None,
) -> tuple[Outcome, str, int]:
    """Lines of a page around a pattern; the page is numbered as when opened."""
    try:
        opened, fetched = await pages.open(url, runtime)
    except WebError as error:
        return _unopened(url, error)
    final, text = opened.url, opened.text
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
    page = ReadPage(final, opened.title, opened.published_at, text)
    head = f"Page: {final}"
    number = numbered_page(page, sources)
    if number is not None:
        head += f"\nSource number: [{number}]"
        body += f"\n\nCite this page as 【{number}】 right after the statements it supports."
    return PageOutcome(final, None, None), f"{head}\n\n{body}", int(fetched)


@dataclass(frozen=True, slots=True)
class PageTools:
    """``open_page`` and ``find_in_page``: offered in a deep search; one page fetch serves
    both, billed once."""

    models: tuple[ModelTool, ...]
    declared: SearchSpec
    setup: ToolSetup
    opened: OpenedPages = field(default_factory=OpenedPages)
    kind: str = "deep_search"
    id_prefix: str = "ds"
    budget: str = SEARCH_BUDGET
    billing: Billing = FETCH_BILLING
    forced_as: ForcedWeb = None

    @classmethod
    def offer(cls, setup: ToolSetup) -> PageTools | None:
        spec = setup.turn.web.search
        if spec is None or not setup.deep:
            return None
        return cls(tuple(page_tools(setup.context.options.fetch_max_chars)), spec, setup)

    def plan(self, call: PendingCall, slot: Slot) -> Plan:
        finding = call.name == "find_in_page"

        def action(url: str, pattern: str) -> Action:
            return FindInPageAction(url, pattern) if finding else OpenPageAction(url)

        try:
            url, pattern = parse_page_arguments(call.arguments, pattern=finding)
        except ToolError as error:
            return action(argument_url(call.arguments), ""), invalid_input(error)
        if not slot.within_budget:
            return action(url, pattern), over_budget("search")
        runtime, sources = self.setup.context.runtime, self.setup.sources
        if finding:
            work = run_find_call(url, pattern, self.opened, runtime, sources)
            return action(url, pattern), work
        max_chars = self.setup.context.options.fetch_max_chars
        return action(url, pattern), run_open_call(url, self.opened, runtime, max_chars, sources)
