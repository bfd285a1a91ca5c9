"""``read_link`` for the model: the links of the user's last message, read and encrypted."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from ....seam import FetchRequest, WebError, WebRuntime
from ....tools import ToolError, fence, render_fetched
from ....tools.fetch import limit_words, page_piece
from ..review.reviewers import ReviewText, ReviewUnavailable
from ..state.page_cipher import PageCipher, ReadPage
from ..turn.events import Billing, CallFailed, Outcome, PageOutcome, ReadLinkAction, WebSource
from ..turn.operator_log import web_failure
from ..turn.shape import JSON, ForcedWeb, ReadUrlSpec
from ..upstream.step import PendingCall
from ..wire.display import published, site_icon, site_name
from .base import (
    FETCH_BILLING,
    READ_BUDGET,
    Plan,
    Slot,
    SourceRegistry,
    ToolSetup,
    argument_url,
    over_budget,
    ready,
)
from .tool import ModelTool, function_tool, json_object, required_string

__all__ = [
    "READ_LINKS_LIMIT",
    "ReadLink",
    "links_in",
    "numbered_page",
    "page_text",
    "parse_read_arguments",
    "read_tool",
    "run_read_call",
]


READ_LINKS_LIMIT = 10
"""Distinct URLs of the last user message the model may read."""
_URL = re.compile(r"https?://[^\s<>\"'`{}|\\^\[\]（）「」【】]+", re.IGNORECASE)
_TRAILING = ".,;:!?)]}'\"。，；：！？、》"


def read_tool(max_links: int, name: str = "read_link") -> ModelTool:
    description = (
        "Read a web page whose URL the user gave in their last message. Only those "
        f"URLs can be read (at most {max_links} different ones)."
    )
    parameters = {
        "type": "object",
        "properties": {"url": {"type": "string", "description": "The URL to read."}},
        "required": ["url"],
        "additionalProperties": False,
    }
    return function_tool(name, description, parameters)


def links_in(message: JSON | None) -> list[str]:
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
    url = required_string(json_object(raw), "url")
    for link in allowed:
        if _same_link(url, link):
            return link
    raise ToolError("WEB_BLOCKED_URL", f"{url} is not a link of the user's last message")


async def run_read_call(
    url: str,
    spec: ReadUrlSpec,
    runtime: WebRuntime,
    room: int,
    cipher: PageCipher,
    review: ReviewText | None = None,
    sources: SourceRegistry | None = None,
) -> tuple[Outcome, str, int]:
    """Fetch and render one of the user's links; the model gets at most ``room`` characters.
    Under ``safety_check`` the page is shown (to the model and the client) only once it passed
    ``review``; a page that fails, or could not be reviewed, is still a billed fetch. A page
    shown is numbered among the round's ``sources``, so the model can cite it."""
    if not spec.domains.admits(urlsplit(url).hostname):
        return CallFailed("url_not_allowed"), f"ERROR: reading {url} is not allowed.", 0
    try:
        result = await runtime.fetch(FetchRequest(url, obey_robots=True))
    except WebError as error:
        web_failure("fetch", error, url=url)
        failed = CallFailed(
            "url_not_allowed" if error.code in _NOT_ALLOWED else "url_not_accessible"
        )
        return failed, f"ERROR: {url} could not be read: {error}", 0
    if result.status_code >= 400:
        web_failure("fetch", url=url, status=result.status_code, provider=result.provider)
        text = f"ERROR: {url} answered HTTP {result.status_code}."
        return CallFailed("url_not_accessible"), text, 0
    rendered = await render_fetched(result, runtime)
    piece = page_piece(result, rendered, 0, max(1, room))
    date = published(rendered.published)
    if review is not None:
        refused = await _refused(url, piece.content, review)
        if refused is not None:
            return refused
    page = ReadPage(result.url, rendered.title, date, piece.content)
    outcome = PageOutcome(result.url, rendered.title, date, cipher.encrypt(page))
    number = numbered_page(page, sources)
    cut = limit_words(piece) if piece.body_truncated else ""
    if not cut and piece.truncated:
        cut = "the room for pages in one step (WEBREACH_FETCH_MAX_CHARS)"
    return outcome, page_text(page, cut=cut, number=number), 1


async def _refused(url: str, text: str, review: ReviewText) -> tuple[Outcome, str, int] | None:
    try:
        passed = await review(text)
    except ReviewUnavailable:
        return CallFailed("unavailable"), f"ERROR: {url} could not be reviewed.", 1
    if passed:
        return None
    return CallFailed("url_not_allowed"), f"ERROR: {url} did not pass the content review.", 1


_NOT_ALLOWED = frozenset(
    {"WEB_BLOCKED_URL", "WEB_INVALID_URL", "WEB_REDIRECT_BLOCKED", "WEB_ROBOTS_DISALLOWED"}
)


_PAGE_SNIPPET = 240
"""Characters of a page's start that stand for it where a source's snippet is shown."""


def numbered_page(page: ReadPage, sources: SourceRegistry | None) -> int | None:
    """The page's number among the round's sources (a page the search found keeps its own)."""
    if sources is None:
        return None
    snippet = " ".join(page.text[: _PAGE_SNIPPET * 2].split())[:_PAGE_SNIPPET]
    source = WebSource(
        url=page.url,
        title=page.title,
        snippet=snippet or None,
        published_at=page.published_at,
        number=0,
        site_name=site_name(page.url),
        site_icon=site_icon(page.url),
    )
    return sources.add(source).number


def page_text(page: ReadPage, *, cut: str = "", number: int | None = None) -> str:
    """A read page as the model sees it, now and, without a number, when restored in a later
    round; its number and date stand outside the fence, as the server's own words. ``cut``
    names the limit that cut it, when one did."""
    head = [f"Page: {page.url}"]
    if number is not None:
        head.append(f"Source number: [{number}]")
    if page.published_at:
        head.append(f"Published: {page.published_at}")
    inside = f"Title: {page.title}\n\n{page.text}" if page.title else page.text
    note = f"\n\n[The page is longer than {cut}; only its first part is shown.]" if cut else ""
    if number is not None:
        note += f"\n\nCite this page as 【{number}】 right after the statements it supports."
    lines = "\n".join(head)
    return f"{lines}\n\n{fence(inside, source='read_link')}{note}"


@dataclass(frozen=True, slots=True)
class ReadLink:
    """``read_link``: offered when the client declared URL reading and its last message has
    links, outside a deep search (which opens pages itself)."""

    models: tuple[ModelTool, ...]
    declared: ReadUrlSpec
    links: tuple[str, ...]
    setup: ToolSetup
    kind: str = "read_link"
    id_prefix: str = "rl"
    budget: str = READ_BUDGET
    billing: Billing = FETCH_BILLING
    forced_as: ForcedWeb = "read"

    @classmethod
    def offer(cls, setup: ToolSetup) -> ReadLink | None:
        spec = setup.turn.web.read_url
        if spec is None or setup.deep:
            return None
        links = links_in(setup.last_user)
        if not links:
            return None
        model = read_tool(READ_LINKS_LIMIT, setup.name("read_link", "webreach_read"))
        return cls((model,), spec, tuple(links), setup)

    def plan(self, call: PendingCall, slot: Slot) -> Plan:
        """Links read in one step share the page room (``WEBREACH_FETCH_MAX_CHARS``)."""
        try:
            url = parse_read_arguments(call.arguments, list(self.links))
        except ToolError as error:
            failed = CallFailed(
                "url_not_allowed" if error.code == "WEB_BLOCKED_URL" else "invalid_tool_input"
            )
            action = ReadLinkAction(argument_url(call.arguments))
            return action, ready((failed, f"ERROR: {error}", 0))
        if not slot.within_budget:
            return ReadLinkAction(url), over_budget("link")
        context = self.setup.context
        room = context.options.fetch_max_chars // slot.count
        work = run_read_call(
            url,
            self.declared,
            context.runtime,
            room,
            context.cipher,
            self.setup.review,
            self.setup.sources,
        )
        return ReadLinkAction(url), work
