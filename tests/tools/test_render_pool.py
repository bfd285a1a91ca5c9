"""The render pool: large pages render in worker processes exactly as in a thread, small pages
never reach it, and no worker outlives a close, a cancelled caller or a lost worker."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

import render_pool_hooks
from polling import until
from process_tree import descendants
from repo_paths import ROOT
from webreach.seam import FetchResult, HtmlBody, WebRuntime
from webreach.testing import ScriptedFetch
from webreach.tools.fetch import read_page, render_body
from webreach.tools.render import plain_page, render_page
from webreach.tools.render_pool import RenderPool, attach_render_pool, runtime_render_pool

CORPUS = ROOT.parent / "shared" / "corpus" / "pages"
BASE = "https://pages.example/article"


def _article(index: int, paragraphs: int) -> str:
    body = "".join(
        f"<p>Paragraph {n} of article {index} links <a href='/p/{n}'>page {n}</a> and says "
        f"<em>something</em> worth reading about topic {n % 7}.</p>"
        for n in range(paragraphs)
    )
    table = "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"
    nav = "<nav><a href='/'>Home</a> <a href='/about'>About</a></nav>"
    return (
        f"<html><head><title>Article {index}</title></head><body>{nav}<article>"
        f"<h1>Article {index}</h1>{body}{table}</article><footer>(c) site</footer></body></html>"
    )


def _pages() -> list[str]:
    pages = [_article(index, 60 + 40 * index) for index in range(4)]
    if CORPUS.is_dir():
        sources = sorted(CORPUS.glob("*/source.html"))[:12]
        pages += [path.read_text(encoding="utf-8", errors="replace") for path in sources]
    return pages


async def _running(pool: RenderPool) -> None:
    """Start the pool with a first page (rendered in a thread meanwhile) and wait for it."""
    await pool.render("<p>start</p>", None)
    await until(lambda: pool.running, "the pool's workers to start")


@pytest.fixture
async def helpers() -> set[int]:
    """The processes multiprocessing keeps for the whole run (its fork server and resource
    tracker), started by one pool opened and closed, so a count compares against them."""
    pool = RenderPool(1, min_chars=1)
    await _running(pool)
    await pool.aclose()
    return descendants()


async def test_pages_render_in_workers_exactly_as_in_threads(helpers: set[int]) -> None:
    pages = _pages()
    pool = RenderPool(2, min_chars=1)
    try:
        await _running(pool)
        before = pool.rendered
        got = await asyncio.gather(*(pool.render(html, BASE) for html in pages))
        assert pool.rendered - before == len(pages)
    finally:
        await pool.aclose()
    assert got == [render_page(html, base_url=BASE) for html in pages]


async def test_large_pages_go_to_the_pool_and_small_ones_stay_in_threads(
    helpers: set[int],
) -> None:
    large, small = _article(1, 3000), _article(2, 20)
    fetch = ScriptedFetch(
        pages={
            f"{BASE}/large": FetchResult(f"{BASE}/large", 200, HtmlBody(large)),
            f"{BASE}/small": FetchResult(f"{BASE}/small", 200, HtmlBody(small)),
        }
    )
    async with WebRuntime() as runtime:
        runtime.register_fetch_provider(fetch)
        pool = attach_render_pool(runtime, 1)
        assert pool is not None and runtime_render_pool(runtime) is pool
        assert pool.takes(large) and not pool.takes(small)
        await read_page(runtime, f"{BASE}/large")
        await until(lambda: pool.running, "the pool's workers to start")
        result, rendered = await read_page(runtime, f"{BASE}/large")
        assert pool.rendered == 1
        assert rendered == render_body(result)
        _, rendered = await read_page(runtime, f"{BASE}/small")
        assert pool.rendered == 1
        assert rendered.title == "Article 2"
    assert runtime_render_pool(runtime) is None
    assert not pool.running
    assert descendants() <= helpers


async def test_close_leaves_no_worker(helpers: set[int]) -> None:
    pool = RenderPool(2, min_chars=1)
    await _running(pool)
    workers = descendants() - helpers
    assert len(workers) == 2
    await pool.aclose()
    assert not descendants() & workers
    assert await pool.render(_article(0, 5), BASE) == render_page(_article(0, 5), base_url=BASE)
    assert not pool.running


async def test_a_worker_killed_mid_render_gives_the_pages_plain_text(
    helpers: set[int], tmp_path: Path
) -> None:
    pool = RenderPool(1, min_chars=1, worker=render_pool_hooks.hold_forever)
    try:
        await _running(pool)
        rendering = asyncio.ensure_future(pool.render(str(tmp_path), BASE))
        marker = tmp_path / "started"
        await until(marker.exists, "the worker to take the page")
        os.kill(int(marker.read_text()), signal.SIGKILL)
        page = await rendering
        assert page == plain_page(str(tmp_path))
        assert (pool.lost, pool.running) == (1, False)
    finally:
        await pool.aclose()
    assert descendants() <= helpers


async def test_a_worker_past_the_budget_is_killed_and_gives_the_plain_text(
    helpers: set[int], tmp_path: Path
) -> None:
    pool = RenderPool(1, min_chars=1, worker=render_pool_hooks.hold_forever, overrun=0.5)
    try:
        await _running(pool)
        worker = descendants() - helpers
        page = await pool.render(str(tmp_path), BASE)
        assert page == plain_page(str(tmp_path))
        assert pool.lost == 1
        await until(lambda: not descendants() & worker, "the stuck worker to be gone")
    finally:
        await pool.aclose()
    assert descendants() <= helpers


async def test_a_cancelled_caller_stops_its_render(helpers: set[int], tmp_path: Path) -> None:
    pool = RenderPool(1, min_chars=1, worker=render_pool_hooks.hold_until_stopped)
    try:
        await _running(pool)
        rendering = asyncio.ensure_future(pool.render(str(tmp_path), BASE))
        await until((tmp_path / "started").exists, "the worker to take the page")
        assert pool.in_flight == 1
        rendering.cancel()
        with pytest.raises(asyncio.CancelledError):
            await rendering
        await until(lambda: pool.in_flight == 0, "the worker to give the page up")
        assert pool.rendered == 0
    finally:
        await pool.aclose()
    assert descendants() <= helpers


async def test_pages_waiting_for_a_worker_are_dropped_with_their_caller(
    helpers: set[int], tmp_path: Path
) -> None:
    pool = RenderPool(1, min_chars=1, worker=render_pool_hooks.hold_until_stopped)
    try:
        await _running(pool)
        dirs = [tmp_path / str(n) for n in range(5)]
        for folder in dirs:
            folder.mkdir()
        callers = [asyncio.ensure_future(pool.render(str(d), BASE)) for d in dirs]
        await until(lambda: pool.in_flight == 2, "the pool's slots to fill")
        for caller in callers:
            caller.cancel()
        await asyncio.gather(*callers, return_exceptions=True)
        await until(lambda: pool.in_flight == 0, "the workers to give the pages up")
        assert sum((d / "started").exists() for d in dirs) <= 2
    finally:
        await pool.aclose()


def test_a_pool_needs_a_process() -> None:
    with pytest.raises(ValueError, match="at least one process"):
        RenderPool(0)
