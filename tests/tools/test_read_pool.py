"""A search's pages read in reader processes: the same passages as read in place, reads in place
until the readers are up, a read given up cancelled in its reader, a reader that dies
failing its reads at once and replaced, one that cannot start leaving reads in place, the reads
counted by the server's metrics, a page the browser must draw handed back to the owner, and no
reader outliving its runtime."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator

import pytest

import read_pool_hooks
from _servers import Exchange, LocalServer, respond
from browser_harness import Site, browser_env, browser_processes, needs_browser, shell
from cli_helpers import only_settings
from polling import PATIENCE, until
from process_tree import ancestors, command_line, descendants
from webreach.config import build_runtime, load_settings
from webreach.seam import SearchResult, SearchSource, WebRuntime
from webreach.server.metrics import MeteredRuntime, Metrics
from webreach.settings import Settings
from webreach.testing import ScriptedSearch
from webreach.tools import ToolOptions, web_search_tool
from webreach.tools.read_pool import ReadPool, runtime_read_pool
from webreach.tools.search.tool import SearchToolResult

QUERY = "harbour lighthouse ships winter"
FACT = "The lighthouse keeper counted four hundred and twelve ships in the winter of 1911."
FILLER = " Gulls wheeled over the harbour while the tide ran out across the flats." * 4
ANSWERS: dict[str, SearchResult] = {}
"""What the scripted search answers: each test's sources, set by :func:`search`."""


def article(number: int) -> bytes:
    paragraphs = "".join(
        f"<p>Paragraph {n} of page {number} is about tides, gulls and the harbour wall.</p>"
        for n in range(40)
    )
    return (
        f"<html><head><title>Page {number}</title></head><body><article><h1>Page {number}</h1>"
        f"{paragraphs}<p>{FACT} Page {number} says so.</p></article></body></html>"
    ).encode()


def route(body: bytes):  # type: ignore[no-untyped-def]
    async def answer(exchange: Exchange) -> None:
        await respond(exchange, 200, body, {"Content-Type": "text/html; charset=utf-8"})

    return answer


HUNG_UP: list[asyncio.Event] = []
"""The test's event, set when a client closes its connection to ``/held``, which never answers."""


async def held(exchange: Exchange) -> None:
    """Never answers; notices the client's hang-up, as a real site's server would."""
    await exchange.reader.read()
    HUNG_UP[-1].set()
    exchange.keep_alive = False


@pytest.fixture
async def site() -> AsyncIterator[LocalServer]:
    routes = {f"/page{n}": route(article(n)) for n in range(5)}
    routes["/held"] = held
    HUNG_UP.append(asyncio.Event())
    async with LocalServer(routes) as server:
        yield server


@pytest.fixture
def env(site: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    only_settings(
        monkeypatch,
        {
            "WEBREACH_FETCH_ALLOW": f"127.0.0.1:{site.port}",
            "WEBREACH_FETCH_PROVIDER": "http",
            "WEBREACH_CACHE": "none",
            "WEBREACH_READ_PROCESSES": "2",
            "WEBREACH_RENDER_PROCESSES": "0",
        },
    )


def sources(site: LocalServer, *paths: str) -> SearchResult:
    return SearchResult(
        tuple(SearchSource(site.url(p), f"Page {p}", f"Snippet of {p}.") for p in paths)
    )


def readers_runtime(site: LocalServer, *, readers: bool = True) -> WebRuntime:
    """A runtime built from the settings, as the servers build theirs, with a scripted search."""
    return readers_runtime_for(load_settings(search_provider="scripted"), readers=readers)


def readers_runtime_for(settings: Settings, *, readers: bool = True) -> WebRuntime:
    runtime = build_runtime(settings, readers=readers)
    runtime.register_search_provider(ScriptedSearch(answers=ANSWERS))
    return runtime


async def search(
    runtime: WebRuntime,
    found: SearchResult,
    deadline: float = 3 * PATIENCE,
    metered: WebRuntime | None = None,
) -> SearchToolResult:
    """``web_search`` at ``medium`` on ``runtime`` (or the ``metered`` one over it), the scripted
    provider answering with ``found``."""
    ANSWERS[QUERY] = found
    options = ToolOptions(search_context_size="medium", search_page_timeout=deadline)
    out = await web_search_tool(metered or runtime, options).execute({"queries": [QUERY]})
    assert isinstance(out.data, SearchToolResult)
    return out.data


async def up(runtime: WebRuntime) -> ReadPool:
    """The runtime's readers, started and all answering."""
    pool = runtime_read_pool(runtime)
    assert pool is not None
    pool.ready()
    await until(lambda: pool.running == pool.processes, "the readers to start")
    return pool


def reader_pids(pool: ReadPool) -> list[int]:
    return [w.process.pid for w in pool._workers if w.alive]


async def test_pages_read_in_readers_give_the_passages_read_in_place(
    site: LocalServer, env: None
) -> None:
    found = sources(site, *(f"/page{n}" for n in range(5)))
    async with readers_runtime(site, readers=False) as runtime:
        assert runtime_read_pool(runtime) is None
        in_place = await search(runtime, found)
    async with readers_runtime(site) as runtime:
        pool = await up(runtime)
        far = await search(runtime, found)
        assert pool.ran == 5
    assert len(in_place.passages) == 5
    assert far.passages == in_place.passages
    assert all(FACT in passages[0].text for passages in far.passages.values())


async def test_reads_run_in_place_until_the_readers_are_up(site: LocalServer, env: None) -> None:
    async with readers_runtime(site) as runtime:
        pool = runtime_read_pool(runtime)
        assert pool is not None and pool.running == 0
        first = await search(runtime, sources(site, "/page0", "/page1"))
        assert len(first.passages) == 2
        assert pool.ran == 0  # read here, while the readers started
        await until(lambda: pool.running == 2, "the first read to start the readers")


async def test_a_read_given_up_is_cancelled_in_its_reader(site: LocalServer, env: None) -> None:
    async with readers_runtime(site) as runtime:
        pool = await up(runtime)
        found = sources(site, "/held")
        searching = asyncio.ensure_future(search(runtime, found, deadline=3 * PATIENCE))
        await until(lambda: any(r.target == "/held" for r in site.requests), "the held read")
        searching.cancel()  # as the passage deadline or a client's hang-up gives it up
        with pytest.raises(asyncio.CancelledError):
            await searching
        # The reader hung up on the held page: its read was cancelled there too, not left to
        # run until the runtime closes.
        await asyncio.wait_for(HUNG_UP[-1].wait(), PATIENCE)
        assert pool.running == 2


async def test_a_reader_that_dies_fails_its_reads_at_once_and_is_replaced(
    site: LocalServer, env: None
) -> None:
    async with readers_runtime(site) as runtime:
        pool = await up(runtime)
        found = sources(site, "/held")
        searching = asyncio.ensure_future(search(runtime, found, deadline=3 * PATIENCE))
        await until(lambda: any(r.target == "/held" for r in site.requests), "the held read")
        holder = next(w for w in pool._workers if w.waiting)
        os.kill(holder.process.pid, signal.SIGKILL)
        data = await asyncio.wait_for(searching, PATIENCE)  # not at the deadline
        assert data.passages == {}
        assert pool.running == 1  # the dead one is known dead
        assert pool.ready()  # the other takes reads while another starts
        await until(lambda: pool.running == 2, "a reader in place of the dead one")
        assert pool.started == 3
        again = await search(runtime, sources(site, "/page2", "/page3"))
        assert len(again.passages) == 2


async def test_a_reader_that_cannot_start_leaves_the_reads_in_place(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pool = ReadPool(1, read_pool_hooks.broken_runtime)
    try:
        assert not pool.ready()
        await until(lambda: pool.started == 1 and pool._starting.done(), "the failed start")  # type: ignore[union-attr]
        assert pool.running == 0
        assert not pool.ready()  # not tried again at once: each try costs a process
        assert pool.started == 1
    finally:
        await pool.aclose()
    said = [r.getMessage() for r in caplog.records]
    assert (
        "a page reader process could not build its runtime: this reader cannot build its runtime"
        in said
    )  # the reader's own line, in the owner's log
    assert any(m.startswith("a page reader process could not start") for m in said)


async def test_a_readers_log_lines_reach_the_owners_log(
    site: LocalServer, env: None, caplog: pytest.LogCaptureFixture
) -> None:
    async with readers_runtime(site) as runtime:
        pool = await up(runtime)
        pid = await pool.run(read_pool_hooks.log_a_warning)
        assert pid in reader_pids(pool)
        line = f"a reader's warning, from {pid}"
        await until(lambda: line in [r.getMessage() for r in caplog.records], "the reader's line")
    (record,) = [r for r in caplog.records if r.getMessage() == line]
    assert (record.name, record.levelname) == ("webreach.tools", "WARNING")


async def test_the_servers_metrics_count_the_readers_fetches(site: LocalServer, env: None) -> None:
    metrics = Metrics()
    async with readers_runtime(site) as runtime:
        pool = await up(runtime)
        metered = MeteredRuntime(runtime, metrics).runtime
        await search(runtime, sources(site, "/page0", "/page1", "/page2"), metered=metered)
        assert pool.ran == 3
    exposition = metrics.exposition().decode()
    fetches = [
        line
        for line in exposition.splitlines()
        if line.startswith("webreach_web_calls_total") and 'tool="fetch"' in line
    ]
    assert fetches and 'outcome="ok"' in fetches[0] and fetches[0].endswith(" 3.0")


async def test_closing_the_runtime_leaves_no_reader(site: LocalServer, env: None) -> None:
    before = descendants()
    async with readers_runtime(site) as runtime:
        pool = await up(runtime)
        pids = set(reader_pids(pool))
        assert len(pids) == 2 and pids <= descendants()
        await search(runtime, sources(site, "/page0"))
    assert not pids & descendants()
    left = descendants() - before  # multiprocessing's fork server, kept for the whole run
    assert all(b"multiprocessing" in command_line(pid) for pid in left)


def test_a_pool_needs_a_process() -> None:
    with pytest.raises(ValueError, match="at least one process"):
        ReadPool(0, read_pool_hooks.broken_runtime)


@needs_browser
async def test_a_page_the_browser_must_draw_is_handed_back_and_drawn_by_the_owner(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with Site() as served:
        served.html("/shell", shell())
        served.json("/api/log", {"title": "Harbour log", "body": FACT + FILLER})
        only_settings(monkeypatch, {**browser_env(served), "WEBREACH_READ_PROCESSES": "1"})
        url = served.url + "/shell"
        async with readers_runtime_for(load_settings(search_provider="scripted")) as runtime:
            pool = await up(runtime)
            (reader,) = reader_pids(pool)
            found = SearchResult((SearchSource(url, "Harbour log", "A log of the harbour."),))
            data = await search(runtime, found, deadline=120.0)
            assert FACT in data.passages[url][0].text
            assert pool.ran == 1  # the reader read it first, and handed it back
            drawing = browser_processes()
            assert drawing and not any(reader in ancestors(pid) for pid in drawing)
        assert served.hits["/shell"] == 2  # once by the reader, once by the owner's browser


async def test_a_readers_rendering_goes_oldest_job_first() -> None:
    from webreach.tools.read_pool import worker

    turns = worker._Turns()
    order: list[int | None] = []
    release = asyncio.Event()

    async def job(number: int | None, hold: bool = False) -> None:
        if number is not None:
            worker._job_number.set(number)
        async with turns.turn():
            order.append(number)
            if hold:
                await release.wait()

    first = asyncio.ensure_future(job(5, hold=True))
    await until(lambda: order == [5], "the first job's turn")
    queued = {n: asyncio.ensure_future(job(n)) for n in (9, 7, 8, 6)}
    await until(lambda: len(turns._waiting) == 4, "the later jobs to queue")
    await job(None)  # not a reader's job: it never waits
    queued[6].cancel()  # a job given up leaves the queue
    release.set()
    await asyncio.gather(first, *queued.values(), return_exceptions=True)
    assert order == [5, None, 7, 8, 9]
    assert not turns._busy and not turns._waiting


async def test_a_server_that_draws_every_page_has_no_readers(site: LocalServer, env: None) -> None:
    drawing = build_runtime(load_settings(fetch_provider="browser"), readers=True)
    async with drawing, readers_runtime(site) as reading:
        assert runtime_read_pool(drawing) is None  # each page would come back to be drawn
        assert runtime_read_pool(reading) is not None
