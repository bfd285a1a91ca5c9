"""``web_fetch``: one URL, fetched safely through the seam, read as Markdown in bounded pieces."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, assert_never

from ..seam import (
    MAX_URL_LENGTH,
    FetchBody,
    FetchRequest,
    FetchResult,
    HtmlBody,
    PdfBody,
    TextBody,
    WebError,
    WebRuntime,
)
from .base import (
    INVALID_ARGUMENTS,
    Argument,
    ToolDefinition,
    ToolError,
    ToolOptions,
    ToolResult,
    json_type,
)
from .threads import in_render_thread
from .untrusted import fence

if TYPE_CHECKING:
    from .render import RenderedPage
    from .render_pool import RenderPool

__all__ = [
    "ARGUMENTS",
    "MAX_AGE",
    "PAGE_FORMATS",
    "START",
    "URL",
    "WEB_FETCH",
    "FetchToolResult",
    "PageFormat",
    "RenderedBody",
    "body_kind",
    "format_fetch",
    "limit_words",
    "page_piece",
    "parse_fetch_arguments",
    "parse_max_age",
    "read_page",
    "render_body",
    "render_off_loop",
    "web_fetch_tool",
]

WEB_FETCH = "web_fetch"
# Rendering a large page takes a while; past this size it runs in a worker thread.
_RENDER_IN_THREAD_CHARS = 200_000
# A cut prefers a paragraph or line end when one lies in the last fifth of the window.
_SOFT_CUT_SHARE = 0.8

Kind = Literal["html", "text", "pdf"]
PageFormat = Literal["markdown", "text", "raw"]
"""How a page is read: the renderer's Markdown, that Markdown as plain text, or the body."""
PAGE_FORMATS: tuple[PageFormat, ...] = ("markdown", "text", "raw")


@dataclass(frozen=True, slots=True)
class RenderedBody:
    kind: Kind
    title: str | None
    text: str
    published: str | None = None


@dataclass(frozen=True, slots=True)
class FetchToolResult:
    """One ``web_fetch`` call: which part of the rendered page was returned, and what is left."""

    url: str
    status_code: int
    kind: Kind
    title: str | None
    content: str
    start: int
    next_start: int | None
    total_chars: int
    truncated: bool
    """The page was not read whole: the body hit a fetch cap, or this piece ends before the page."""
    body_truncated: bool
    provider: str | None = None
    body_truncated_by: str | None = None
    """The limit that cut the body, when the provider named it (``2,000,000 characters …``)."""
    rendered_by: str | None = None
    """``http`` (the document as served) or ``browser`` (drawn by a headless browser)."""
    render_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "status_code": self.status_code,
            "kind": self.kind,
            "title": self.title,
            "content": self.content,
            "truncated": self.truncated,
            "start": self.start,
            "next_start": self.next_start,
            "total_chars": self.total_chars,
            "provider": self.provider,
            "rendered_by": self.rendered_by,
            "render_reason": self.render_reason,
        }


def fetch_description(max_chars: int) -> str:
    return (
        "Fetch one web page (http or https) and read its main content as Markdown, or a text "
        f"or PDF document as text. Returns at most {max_chars:,} characters per call; when a "
        "page is longer, the result says so and gives the `start` value that continues it. "
        "Use it to read a specific URL, such as a search result whose snippet is not enough."
    )


URL = Argument("url", "string", "The http(s) URL to read.", min_length=1, max_length=MAX_URL_LENGTH)
START = Argument(
    "start",
    "integer",
    "Character offset in the rendered page to continue from.",
    minimum=0,
    default=0,
)
MAX_AGE = Argument(
    "max_age",
    "integer",
    "Seconds: a cached copy older than this is fetched again; 0 always fetches.",
    minimum=0,
)
ARGUMENTS = (URL, START, MAX_AGE)
"""What a ``web_fetch`` call may pass, in the schema's order: the model's schema and the
``/v1/fetch`` body's fields (``server.web_api.body_fields``) read each from here."""


def fetch_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            argument.name: {
                "type": argument.type,
                "description": argument.description,
                **argument.rules(),
            }
            for argument in ARGUMENTS
        },
        "required": [URL.name],
        "additionalProperties": False,
    }


_NAMES = tuple(argument.name for argument in ARGUMENTS)


def _invalid(message: str) -> ToolError:
    return ToolError(INVALID_ARGUMENTS, message)


def parse_fetch_arguments(arguments: object) -> tuple[str, int]:
    """Validate ``{"url": …, "start": …}``; the provider checks the URL itself in full."""
    if not isinstance(arguments, Mapping):
        raise _invalid('arguments must be an object like {"url": "https://…"}')
    extra = sorted(str(key) for key in arguments if key not in _NAMES)
    if extra:
        raise _invalid(
            f"unknown argument(s) {', '.join(extra)}; web_fetch takes `url`, `start` and `max_age`"
        )
    if "url" not in arguments:
        raise _invalid("`url` is required: a non-empty http(s) URL string")
    url = arguments["url"]
    if not isinstance(url, str):
        raise _invalid(f"`url` must be a string, an http(s) URL, not {json_type(url)}")
    if not url.strip():
        raise _invalid("`url` is empty; pass a non-empty http(s) URL string")
    start = arguments.get(START.name)
    if start is None:
        start = START.default
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise _invalid("`start` must be a whole number of characters, 0 or more")
    return url.strip(), start


def parse_max_age(arguments: Mapping[str, Any]) -> int | None:
    """``max_age`` of a ``web_fetch`` call: whole seconds, 0 or more, or None when not given."""
    value = arguments.get("max_age")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _invalid("`max_age` must be a whole number of seconds, 0 or more")
    return value


def body_kind(body: FetchBody) -> Kind:
    match body:
        case HtmlBody():
            return "html"
        case TextBody():
            return "text"
        case PdfBody():
            return "pdf"
        case _:
            assert_never(body)


def render_body(result: FetchResult) -> RenderedBody:
    """The body as text for a reader: Markdown for HTML, page-marked text for PDF."""
    from .render import render_page

    body = result.body
    match body:
        case HtmlBody(content=html):
            return _html_body(render_page(html, base_url=result.url))
        case TextBody(content=text):
            return RenderedBody("text", None, text)
        case PdfBody(content=text, page_count=count):
            pages = text.split("\f")
            total = count or len(pages)
            marked = [
                f"--- page {number} of {total} ---\n{page.strip()}"
                for number, page in enumerate(pages, 1)
            ]
            return RenderedBody("pdf", None, "\n\n".join(marked))
        case _:
            assert_never(body)


def _html_body(page: RenderedPage) -> RenderedBody:
    return RenderedBody("html", page.title, page.markdown.strip(), page.published)


def render_text(result: FetchResult) -> RenderedBody:
    """Like :func:`render_body`, with an HTML page's Markdown reduced to plain text."""
    return _as_text(render_body(result))


def _as_text(rendered: RenderedBody) -> RenderedBody:
    from .render.markdown.plain import markdown_to_text

    if rendered.kind != "html":
        return rendered
    return replace(rendered, text=markdown_to_text(rendered.text))


async def render_off_loop(
    result: FetchResult, pool: RenderPool | None, form: PageFormat = "markdown"
) -> RenderedBody:
    """:func:`render_body` (``text``: :func:`render_text`) away from the event loop: an HTML page
    the pool takes in a worker process, any other in a worker thread."""
    body = result.body
    if pool is not None and isinstance(body, HtmlBody) and pool.takes(body.content):
        rendered = _html_body(await pool.render(body.content, result.url))
        return _as_text(rendered) if form == "text" else rendered
    return await in_render_thread(render_text if form == "text" else render_body, result)


def _cut(text: str, start: int, limit: int) -> int:
    """Where a piece from ``start`` ends: at most ``limit`` characters, at a line end if near."""
    end = start + limit
    if end >= len(text):
        return len(text)
    floor = start + int(limit * _SOFT_CUT_SHARE)
    for mark in ("\n\n", "\n", " "):
        found = text.rfind(mark, floor, end)
        if found > start:
            return found + len(mark)
    return end


def page_piece(
    result: FetchResult, rendered: RenderedBody, start: int, max_chars: int
) -> FetchToolResult:
    total = len(rendered.text)
    if start and start >= total:
        raise _invalid(f"`start` {start} is past the end of the page ({total:,} characters)")
    end = _cut(rendered.text, start, max_chars)
    next_start = end if end < total else None
    return FetchToolResult(
        url=result.url,
        status_code=result.status_code,
        kind=rendered.kind,
        title=rendered.title,
        content=rendered.text[start:end],
        start=start,
        next_start=next_start,
        total_chars=total,
        truncated=result.truncated or next_start is not None,
        body_truncated=result.truncated,
        body_truncated_by=result.truncated_by if result.truncated else None,
        provider=result.provider,
        rendered_by=result.rendered_by,
        render_reason=result.render_reason,
    )


def format_fetch(piece: FetchToolResult) -> str:
    """Header, the fenced page text, and a note for any cut, which is never silent."""
    head = [f"URL: {piece.url}"]
    if piece.status_code != 200:
        head.append(f"Status: HTTP {piece.status_code}")
    head.append(f"Kind: {piece.kind}")
    if piece.rendered_by == "browser" or piece.render_reason:
        why = f" ({piece.render_reason})" if piece.render_reason else ""
        head.append(f"Rendered by: {piece.rendered_by or piece.provider}{why}")
    if piece.start or piece.next_start is not None:
        end = piece.start + len(piece.content)
        head.append(f"Characters {piece.start:,}–{end:,} of {piece.total_chars:,}")
    inside = piece.content if piece.content.strip() else "(the page has no readable text)"
    if piece.title:
        inside = f"Title: {piece.title}\n\n{inside}"
    parts = ["\n".join(head), fence(inside, source=WEB_FETCH)]
    if piece.next_start is not None:
        left = piece.total_chars - piece.next_start
        parts.append(
            f"[Cut: {left:,} more characters follow. To continue, call web_fetch with "
            f'{{"url": "{piece.url}", "start": {piece.next_start}}}.]'
        )
    if piece.body_truncated:
        parts.append(
            f"[The document was larger than {limit_words(piece)}; only its first part was read.]"
        )
    return "\n\n".join(parts)


def limit_words(piece: FetchToolResult) -> str:
    """The limit that cut the piece's body, as a truncation note names it."""
    by = piece.body_truncated_by
    return f"the fetch limit of {by}" if by else "a fetch limit"


def _tool_error(error: WebError) -> ToolError:
    tool_error = ToolError.from_web_error(error)
    if error.code == "WEB_REDIRECT_BLOCKED":
        tool_error.message += " (to read the target, call web_fetch again with that URL)"
    return tool_error


async def read_page(
    runtime: WebRuntime,
    url: str,
    form: PageFormat = "markdown",
    *,
    obey_robots: bool = True,
    max_age: float | None = None,
) -> tuple[FetchResult, RenderedBody]:
    """One page through the seam, failing as ``web_fetch`` does, in ``form``: what the tool
    reads (``markdown``), the same as plain text (``text``), or the decoded body (``raw``).

    Same-site redirects only (the model decides on another site's URL). ``obey_robots``: a
    model asked for it, so the site's robots.txt is obeyed (a person's ``webreach fetch``
    passes False); ``max_age``: a cached copy older than this many seconds is fetched again.
    A large page is rendered away from the event loop (in the runtime's render pool when it
    has one, else a thread), so one big page does not stall a server.
    """
    request = FetchRequest(url, obey_robots=obey_robots, max_age=max_age)
    try:
        result = await runtime.fetch(request)
    except WebError as error:
        raise _tool_error(error) from error
    if form == "raw":
        return result, RenderedBody(body_kind(result.body), None, result.body.content)
    return result, await render_fetched(result, runtime, form)


async def render_fetched(
    result: FetchResult, runtime: WebRuntime, form: PageFormat = "markdown"
) -> RenderedBody:
    """The page read as ``form``: a small one right here, a large one away from the event loop
    (in the runtime's render pool when it has one, else a render thread), so no page a server
    reads stalls the other requests."""
    from .render_pool import runtime_render_pool

    pool = runtime_render_pool(runtime)
    content = result.body.content
    if len(content) > _RENDER_IN_THREAD_CHARS or (pool is not None and pool.takes(content)):
        return await render_off_loop(result, pool, form)
    return render_text(result) if form == "text" else render_body(result)


def web_fetch_tool(runtime: WebRuntime, options: ToolOptions | None = None) -> ToolDefinition:
    options = options or ToolOptions()

    async def execute(arguments: Mapping[str, Any]) -> ToolResult:
        url, start = parse_fetch_arguments(arguments)
        result, rendered = await read_page(runtime, url, max_age=parse_max_age(arguments))
        piece = page_piece(result, rendered, start, options.fetch_max_chars)
        return ToolResult(text=format_fetch(piece), data=piece)

    return ToolDefinition(
        name=WEB_FETCH,
        description=fetch_description(options.fetch_max_chars),
        input_schema=fetch_schema(),
        execute=execute,
    )
