"""Page passages for ``web_search`` at ``medium`` / ``high``: the top sources' pages are read
concurrently under one deadline, cut into passages and ranked against the queries, so the model
gets the facts a snippet rarely holds. A page that fails, is slow or unreadable keeps its snippet.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from ...seam import FetchRequest, FetchResult, SearchSource, WebError, WebRuntime, cancel_and_wait
from ..base import ContextSize
from ..render.markdown.plain import markdown_to_text
from ..threads import in_ranking_thread
from .ranking import Chunk, chunk_page, rank_chunks

if TYPE_CHECKING:
    from ..fetch import RenderedBody

__all__ = [
    "CONTEXT_BUDGETS",
    "PAGES_READ",
    "Passage",
    "read_passages",
    "select_passages",
]

CONTEXT_BUDGETS: Mapping[ContextSize, int] = {"low": 0, "medium": 12_000, "high": 24_000}
"""The most characters a whole ``web_search`` output may take at each size."""
PAGES_READ: Mapping[ContextSize, int] = {"low": 0, "medium": 5, "high": 8}
"""How many of the top sources' pages each size reads."""
SELECTION: Literal["rounds", "score"] = "score"
"""How the budget is shared: each page in turn (``rounds``), or each page's best passage and
then the best of all (``score``, chosen by ``bench/search_substance.py``)."""
_PASSAGE_OVERHEAD = 12
"""Characters a passage costs beyond its text when printed (indent, separators)."""
_HEADING_COST = 20
"""Characters a source's first passage costs for the line that introduces them."""

logger = logging.getLogger("webreach.tools")


@dataclass(frozen=True, slots=True)
class Passage:
    """A piece of a source's page, its ``position`` in the page and its relevance ``score``."""

    text: str
    position: int
    score: float


@dataclass(frozen=True, slots=True)
class _Page:
    chunks: tuple[Chunk, ...]
    """The page cut into passages, each shown and scored as its words."""
    final: str
    """Where the page was read after its redirects: the URL its passages are cited by."""


@dataclass(frozen=True, slots=True)
class _Far:
    """One page as a reader process read it, with its fetch's outcome for the owner's count."""

    page: _Page | None
    handed_back: bool
    """The page is one a browser must draw, which the owner does (the reader draws nothing)."""
    provider: str | None
    outcome: str
    seconds: float


async def _read(runtime: WebRuntime, url: str) -> _Page | None:
    """The page cut into passages, or None when it cannot be used: read in one of the
    runtime's reader processes when it has them up, here otherwise.

    Nobody asked for this page by itself, so its redirects are followed to any origin (every
    hop through the guard), as a search result's link goes through a redirector or a
    shortener; its site's robots.txt is obeyed, and a bot wall is a failure like any other.
    """
    from ..read_pool import WorkerLost, runtime_read_pool

    pool = runtime_read_pool(runtime)
    if pool is not None and pool.ready():
        try:
            far: _Far = await pool.run(read_far, url)
        except WorkerLost:
            return None
        runtime.note_web_call("fetch", far.provider, far.outcome, far.seconds)
        if not far.handed_back:
            return far.page
    try:
        result = await runtime.fetch(_request(url))
    except WebError:
        return None
    return await _page(runtime, url, result)


def _request(url: str) -> FetchRequest:
    return FetchRequest(url, redirects="cross_origin", obey_robots=True)


async def read_far(runtime: WebRuntime, url: str) -> _Far:
    """In a reader process: :func:`_read`'s page, rendered and cut on this process's loop, as
    nothing else waits on it here."""
    began = time.perf_counter()
    try:
        result = await runtime.fetch(_request(url))
    except WebError as error:
        return _Far(None, False, error.provider, error.code.value.lower(), _since(began))
    seconds = _since(began)
    if result.rendered_by == "http" and result.render_reason:
        return _Far(None, True, result.provider, "ok", seconds)
    page = await _page(runtime, url, result, inline=True)
    return _Far(page, False, result.provider, "ok", seconds)


def _since(began: float) -> float:
    return time.perf_counter() - began


async def _page(
    runtime: WebRuntime, url: str, result: FetchResult, *, inline: bool = False
) -> _Page | None:
    """A successful read's page cut into passages; rendered and cut in threads (or processes,
    for a large page), or when ``inline`` here unless the page is large."""
    from ..fetch import render_fetched, render_off_loop
    from ..render_pool import runtime_render_pool

    if not 200 <= result.status_code < 300:
        return None
    if inline:
        from ..read_pool import cpu_turn

        async with cpu_turn():
            chunks = _cut(url, await render_fetched(result, runtime))
    else:
        rendered = await render_off_loop(result, runtime_render_pool(runtime))
        chunks = await in_ranking_thread(_cut, url, rendered)
    return _Page(chunks, result.url) if chunks else None


def _cut(url: str, rendered: RenderedBody) -> tuple[Chunk, ...]:
    """The rendered page's passages: cut by its Markdown structure, then shown and scored as
    their words, since link URLs and markup cost the budget and split a sentence's words, and
    a URL's words are not what the page says."""
    if not rendered.text:
        return ()
    chunks = chunk_page(url, rendered.text)
    if rendered.kind != "html":
        return tuple(chunks)
    plain = (replace(c, text=markdown_to_text(c.text).strip()) for c in chunks)
    return tuple(c for c in plain if c.text)


def _scored(
    urls: Sequence[str], pages: Mapping[str, _Page], queries: Sequence[str]
) -> list[tuple[Chunk, float]]:
    """The pages' passages, in the order of ``urls``, each with its score: off the loop, since
    ranking them takes milliseconds a search."""
    chunks = [c for url in urls if (page := pages.get(url)) for c in page.chunks]
    return list(zip(chunks, rank_chunks(chunks, queries), strict=True)) if chunks else []


async def _read_all(runtime: WebRuntime, urls: Sequence[str], deadline: float) -> dict[str, _Page]:
    """Every page that arrives and renders within ``deadline`` seconds, all together.

    At the deadline the reads still running are cancelled once and let go: their clean-up (a
    connection's close) finishes on its own and a render already in its thread runs out with
    its result discarded, since under load waiting for either held a search well past its
    deadline. A cancelled caller still waits for the reads' clean-up, as everywhere else.
    """
    tasks = {url: asyncio.ensure_future(_read(runtime, url)) for url in urls}
    try:
        if tasks:
            await asyncio.wait(tasks.values(), timeout=deadline)
    except BaseException:
        await cancel_and_wait(tasks.values())
        raise
    _let_go(task for task in tasks.values() if not task.done())
    pages: dict[str, _Page] = {}
    for url, task in tasks.items():
        if task.done() and not task.cancelled() and task.exception() is None:
            page = task.result()
            if page:
                pages[url] = page
    return pages


_settling: set[asyncio.Task[_Page | None]] = set()
"""Reads cut at their deadline and still cleaning up; held here, as the loop holds tasks weakly."""


def _let_go(tasks: Iterable[asyncio.Task[_Page | None]]) -> None:
    for task in tasks:
        task.cancel()
        _settling.add(task)
        task.add_done_callback(_settled)


def _settled(task: asyncio.Task[_Page | None]) -> None:
    _settling.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved, so a failed clean-up is not reported as never retrieved


async def read_passages(
    runtime: WebRuntime,
    sources: Sequence[SearchSource],
    queries: Sequence[str],
    *,
    size: ContextSize,
    deadline: float,
    finals: dict[str, str] | None = None,
) -> dict[str, tuple[Passage, ...]]:
    """The ranked passages of each readable top source's page, best first, by URL.

    All the pages are read concurrently, through the runtime's safe fetcher and cache, and
    bounded together by ``deadline`` seconds; ranking is over all the pages at once, so
    scores compare. ``finals`` receives, for each page read at another URL after its
    redirects, the source's URL → the final one.
    """
    count = PAGES_READ[size]
    if not count or not sources:
        return {}
    urls = list(dict.fromkeys(s.url for s in sources[:count]))
    began = time.monotonic()
    pages = await _read_all(runtime, urls, deadline)
    if finals is not None:
        finals.update((url, page.final) for url, page in pages.items() if page.final != url)
    read = time.monotonic()
    scored = await in_ranking_thread(_scored, urls, pages, queries) if pages else []
    if logger.isEnabledFor(logging.DEBUG):
        _log_reads(len(urls), len(pages), deadline, read - began, time.monotonic() - read)
    ranked: dict[str, list[Passage]] = {}
    for chunk, score in scored:
        if score > 0:
            ranked.setdefault(chunk.url, []).append(Passage(chunk.text, chunk.position, score))
    return {
        url: tuple(sorted(found, key=lambda p: (-p.score, p.position)))
        for url, found in ranked.items()
    }


def _log_reads(asked: int, read: int, deadline: float, seconds: float, ranking: float) -> None:
    """How long the page reads took against their deadline (under load the deadline fires
    only when the event loop gets to it, and ``late`` says by how much), then the cutting and
    ranking of what they read."""
    fields = {
        "pages": asked,
        "read": read,
        "deadline_s": deadline,
        "seconds": round(seconds, 4),
        "late_s": round(max(0.0, seconds - deadline), 4),
        "ranking_s": round(ranking, 4),
    }
    message = f"passages: {read} of {asked} pages read in {seconds:.3f} s"
    logger.debug("%s", message, extra={"event": "passages_read", "fields": fields})


def passage_cost(passage: Passage) -> int:
    return len(passage.text) + _PASSAGE_OVERHEAD + 4 * passage.text.count("\n")


def select_passages(
    ranked: Mapping[str, Sequence[Passage]], order: Sequence[str], budget: int
) -> dict[str, tuple[Passage, ...]]:
    """Passages within ``budget`` characters: round by round, each source in rank order takes
    its next best passage that still fits, so every read page gets its best one first."""
    queues = {url: list(ranked.get(url, ())) for url in order}
    chosen: dict[str, list[Passage]] = {url: [] for url in order}
    left = budget
    if SELECTION == "score":
        firsts = [(url, queues[url].pop(0)) for url in order if queues[url]]
        rest = sorted(
            ((url, p) for url in order for p in queues[url]), key=lambda item: -item[1].score
        )
        for url, passage in [*firsts, *rest]:
            cost = passage_cost(passage) + (0 if chosen[url] else _HEADING_COST)
            if cost <= left:
                chosen[url].append(passage)
                left -= cost
        queues = {}
    while any(queues.values()):
        for url in order:
            queue = queues[url]
            while queue:
                passage = queue.pop(0)
                cost = passage_cost(passage) + (0 if chosen[url] else _HEADING_COST)
                if cost <= left:
                    chosen[url].append(passage)
                    left -= cost
                    break
    return {
        url: tuple(sorted(picked, key=lambda p: p.position))
        for url, picked in chosen.items()
        if picked
    }
