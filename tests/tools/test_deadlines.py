"""Deadlines that bound under load: a search moves on at its passage deadline though a page read
is still cleaning up, and a name lookup does not queue behind the loop's default executor.

Gates, not clocks: each slow step blocks until the test releases it, and the tests assert what
had happened by then.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from webreach.net.pinning import system_resolver
from webreach.seam import FetchRequest, FetchResult, SearchSource, WebRuntime
from webreach.tools.search.passages import read_passages

SAFETY = 20.0
"""Only how long a broken build waits before it fails; a working one never comes near it."""


class StuckFetch:
    """A fetch that never answers and, once cancelled, holds its clean-up (a connection's
    close under load, say) until ``release`` is set."""

    id = "http"

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.cleaned = asyncio.Event()
        self.cancels = 0

    def available(self) -> bool:
        return True

    async def fetch(self, request: FetchRequest) -> FetchResult:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancels += 1
            self.cancelled.set()
            await self.release.wait()
            self.cleaned.set()
            raise
        raise AssertionError("never answers")


async def test_the_passage_deadline_does_not_wait_for_a_reads_clean_up() -> None:
    fetch = StuckFetch()
    async with WebRuntime() as runtime:
        runtime.register_fetch_provider(fetch)
        source = SearchSource("https://stuck.example/", "Stuck", "A snippet.")
        search = asyncio.ensure_future(
            read_passages(runtime, [source], ["query"], size="medium", deadline=0.05)
        )
        done, _ = await asyncio.wait({search}, timeout=SAFETY)
        held = not fetch.release.is_set()
        fetch.release.set()  # a build that waits for the clean-up finishes now, and fails below
        assert await search == {}
        assert done == {search} and held, "the search waited for the read's clean-up"
        await fetch.cancelled.wait()  # the read was still cancelled, once
        await fetch.cleaned.wait()  # and its clean-up ran to the end on its own
        assert fetch.cancels == 1


async def test_a_lookup_does_not_queue_behind_a_busy_default_executor() -> None:
    loop = asyncio.get_running_loop()
    gate = threading.Event()
    busy = ThreadPoolExecutor(1)
    loop.set_default_executor(busy)
    try:
        blocked = loop.run_in_executor(None, gate.wait)  # a render that holds the only thread
        lookup = asyncio.ensure_future(system_resolver("127.0.0.1", 80))
        done, _ = await asyncio.wait({lookup}, timeout=SAFETY)
        waited = not done
        gate.set()
        assert await lookup == ["127.0.0.1"]
        assert not waited, "the lookup waited for the default executor's thread"
        await blocked
    finally:
        gate.set()
        busy.shutdown(wait=True)
