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
from typing import Literal

from ...seam import FetchRequest, FetchResult, SearchSource, WebError, WebRuntime, cancel_and_wait
from ..base import ContextSize
from ..render.markdown.plain import markdown_to_text
from ..threads import in_ranking_thread
from .ranking import Chunk, chunk_page, rank_chunks

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
    text: str
    markdown: bool
    final: str
    """Where the page was read after its redirects: the URL its passages are cited by."""


async def _read(runtime: WebRuntime, url: str) -> _Page | None:
    """The page as text (Markdown for HTML), or None when it cannot be used.

    Nobody asked for this page by itself, so its redirects are followed to any origin (every
    hop through the guard), as a search result's link goes through a redirector or a
    shortener; its site's robots.txt is obeyed, and a bot wall is a failure like any other.
    """
    from ..fetch import render_off_loop
    from ..render_pool import runtime_render_pool

    request = FetchRequest(url, redirects="cross_origin", obey_robots=True)
    try:
        result: FetchResult = await runtime.fetch(request)
    except WebError:
        return None
    if not 200 <= result.status_code < 300:
        return None
    rendered = await render_off_loop(result, runtime_render_pool(runtime))
    return _Page(rendered.text, rendered.kind == "html", result.url) if rendered.text else None


def _scored(
    urls: Sequence[str], pages: Mapping[str, _Page], queries: Sequence[str]
) -> list[tuple[Chunk, float]]:
    """The pages cut into passages, in the order of ``urls``, each with its score: off the loop,
    since the cutting alone takes milliseconds a search."""
    chunks: list[Chunk] = []
    for url in urls:
        page = pages.get(url)
        if page:
            cut = chunk_page(url, page.text)
            chunks.extend(_plain(cut) if page.markdown else cut)
    return list(zip(chunks, rank_chunks(chunks, queries), strict=True)) if chunks else []


def _plain(chunks: list[Chunk]) -> list[Chunk]:
    """Chunks cut by the page's Markdown structure, shown and scored as its words: link URLs
    and markup cost the budget and split a sentence's words, and a URL's words are not what
    the page says."""
    plain = (replace(c, text=markdown_to_text(c.text).strip()) for c in chunks)
    return [c for c in plain if c.text]


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
