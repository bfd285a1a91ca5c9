"""Renders and passage ranking run on webreach's own threads, and a server's collector skips
what its startup built: the loop's default executor, held by other blocking work (a search
library's calls, the cache file), delays neither a page's render nor a search's ranking."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import AsyncIterator

import pytest

from _servers import Exchange, LocalServer, respond
from providers_for_tests import register_owned
from webreach.providers.fetch.http import HttpFetchProvider
from webreach.seam import SearchResult, SearchSource, WebRuntime
from webreach.server.heap import YOUNGEST_THRESHOLD, settle_heap
from webreach.testing import ScriptedSearch
from webreach.tools import ToolOptions, web_fetch_tool, web_search_tool

QUERY = "geyser eruption interval"
FACT = "Strokkur erupts every six to ten minutes, up to twenty metres high."
SAFETY_NET = 60.0
"""Only for a broken tree, where the call would wait for the held executor forever."""


def article(paragraphs: int) -> bytes:
    body = "".join(
        f"<p>Paragraph {n} is about hot springs, hiking trails and the weather in Haukadalur.</p>"
        if n != paragraphs // 2
        else f"<p>The geyser eruption interval is short. {FACT}</p>"
        for n in range(paragraphs)
    )
    head = "<html><head><title>Geysir</title></head><body>"
    return f"{head}<article>{body}</article></body></html>".encode()


@pytest.fixture
async def site() -> AsyncIterator[LocalServer]:
    async def small(exchange: Exchange) -> None:
        await respond(exchange, 200, article(60), {"Content-Type": "text/html"})

    async def large(exchange: Exchange) -> None:  # past the size a fetch renders inline
        await respond(exchange, 200, article(3_000), {"Content-Type": "text/html"})

    async with LocalServer({"/small": small, "/large": large}) as server:
        yield server


@pytest.fixture
async def held_default_executor() -> AsyncIterator[None]:
    """Every thread of the loop's default executor busy, and more work queued behind them."""
    loop = asyncio.get_running_loop()
    release = threading.Event()
    held = [loop.run_in_executor(None, release.wait) for _ in range(64)]
    try:
        yield
    finally:
        release.set()
        await asyncio.gather(*held)


@pytest.mark.usefixtures("held_default_executor")
async def test_a_searchs_passages_do_not_wait_for_the_default_executor(site: LocalServer) -> None:
    found = SearchResult((SearchSource(site.url("/small"), "Geysir", "Hot springs."),))
    async with WebRuntime() as runtime:
        runtime.register_search_provider(ScriptedSearch(answers={QUERY: found}))
        register_owned(runtime, HttpFetchProvider(allow=["127.0.0.1"]))
        tool = web_search_tool(runtime, ToolOptions(search_context_size="medium"))
        out = await asyncio.wait_for(tool.execute({"queries": [QUERY]}), SAFETY_NET)
    assert FACT in out.text


@pytest.mark.usefixtures("held_default_executor")
async def test_a_large_page_renders_without_the_default_executor(site: LocalServer) -> None:
    async with WebRuntime() as runtime:
        register_owned(runtime, HttpFetchProvider(allow=["127.0.0.1"]))
        tool = web_fetch_tool(runtime, ToolOptions())
        out = await asyncio.wait_for(tool.execute({"url": site.url("/large")}), SAFETY_NET)
    assert "Paragraph 1 is about hot springs" in out.text


def test_a_settled_heap_is_frozen_and_collected_less_often() -> None:
    before = gc.get_threshold()
    try:
        settle_heap()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (YOUNGEST_THRESHOLD, before[1], before[2])
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
