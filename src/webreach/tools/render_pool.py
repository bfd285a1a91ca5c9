"""Large pages rendered in worker processes, so a wave of searches renders on every core and no
render holds the event loop's GIL; smaller pages stay in threads, where a process costs more in
copying than it gives back (``bench/render_pool.py`` measures both).

The pool starts in the background on the first large page (that page and those that follow it
until the workers are up render in threads), and the runtime it is attached to closes it. A worker
renders with the same depth caps and time budget as a thread; a caller that gives up stops its
render at the budget's next check, and a worker that dies or overruns the budget gives the page's
plain text, as a spent budget does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Final

from ..seam import WebRuntime
from .render import RenderedPage, plain_page, render_page
from .render.budget import RENDER_BUDGET
from .threads import in_render_thread

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

__all__ = [
    "POOL_MIN_CHARS",
    "RenderPool",
    "WorkerRender",
    "attach_render_pool",
    "render_in_worker",
    "runtime_render_pool",
    "stopped",
]

POOL_MIN_CHARS: Final = 150_000
"""Pages of at least this many characters render in the pool; below it the copy to a worker and
back costs about as much as the second core gives (measured on 2 cores)."""
_OVERRUN: Final = 5.0
"""Seconds past the render budget after which a worker is judged stuck and killed."""
_SLOTS_PER_PROCESS: Final = 2
"""Pages handed to the pool at once per worker: one rendering and one waiting, so a worker never
idles between pages, while the rest wait in the caller, where cancelling them costs nothing."""

WorkerRender = Callable[[str, str | None, int], RenderedPage]
"""What a worker runs for one page: ``(html, base_url, slot)``; ``stopped(slot)`` says when the
caller has given the page up."""

_worker_flags: Any = None
_worker_pids: Any = None


def _init_worker(flags: Any, pids: Any) -> None:
    global _worker_flags, _worker_pids
    _worker_flags, _worker_pids = flags, pids
    # The owner's Ctrl-C is its to handle; a worker ends when the pool shuts down.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def stopped(slot: int) -> bool:
    """In a worker: whether the caller of the page in ``slot`` has given it up."""
    return bool(_worker_flags is not None and _worker_flags[slot])


def render_in_worker(html: str, base_url: str | None, slot: int) -> RenderedPage:
    """The renderer as a thread runs it, stopping early once the caller gives the page up."""
    return render_page(html, base_url=base_url, stop=lambda: stopped(slot))


def _run(render: WorkerRender, html: str, base_url: str | None, slot: int) -> RenderedPage:
    _worker_pids[slot] = os.getpid()
    try:
        return render(html, base_url, slot)
    finally:
        _worker_pids[slot] = 0


def _warm() -> int:
    return os.getpid()


class RenderPool:
    """At most ``processes`` worker processes rendering large pages; ``render()`` is the one call.

    ``rendered`` counts the pages the workers rendered, ``lost`` those whose worker died or
    overran (given as plain text), so callers and tests see where pages went.
    """

    def __init__(
        self,
        processes: int,
        *,
        min_chars: int = POOL_MIN_CHARS,
        worker: WorkerRender = render_in_worker,
        overrun: float = RENDER_BUDGET + _OVERRUN,
    ) -> None:
        if processes < 1:
            raise ValueError(f"a render pool needs at least one process, not {processes}")
        self.processes = processes
        self.min_chars = min_chars
        self.rendered = 0
        self.lost = 0
        self._worker = worker
        self._overrun = overrun
        import multiprocessing  # here, not at import: a command that renders in threads skips it

        self._context = multiprocessing.get_context("forkserver")
        # The workers fork from a server that has imported the renderer once.
        self._context.set_forkserver_preload(["webreach.tools.render_pool"])
        slots = processes * _SLOTS_PER_PROCESS
        self._flags = self._context.RawArray("b", slots)
        self._pids = self._context.RawArray("q", slots)
        self._free = list(range(slots))
        self._slots = asyncio.Semaphore(slots)
        self._executor: ProcessPoolExecutor | None = None
        self._starting: asyncio.Future[ProcessPoolExecutor | None] | None = None
        self._lost: list[ProcessPoolExecutor] = []
        self._closed = False

    @property
    def running(self) -> bool:
        """Whether the workers are up (they start on the first large page)."""
        return self._executor is not None

    @property
    def in_flight(self) -> int:
        """Pages handed to workers and not yet given back."""
        return len(self._flags) - len(self._free)

    def takes(self, html: str) -> bool:
        """Whether ``html`` is large enough to render here rather than in a thread."""
        return not self._closed and len(html) >= self.min_chars

    async def render(self, html: str, base_url: str | None) -> RenderedPage:
        """The page rendered in a worker; in a thread while the workers start or once closed."""
        executor = self._executor
        if executor is None:
            self._start()
            return await in_render_thread(render_page, html, base_url=base_url)
        await self._slots.acquire()
        if self._executor is not executor:  # lost or closed while this page waited
            self._slots.release()
            return await self.render(html, base_url)
        from concurrent.futures.process import BrokenProcessPool

        slot = self._free.pop()
        self._flags[slot] = 0
        try:
            future = executor.submit(_run, self._worker, html, base_url, slot)
        except (BrokenProcessPool, RuntimeError):
            self._give_back(slot)
            self._lose(executor)
            return await self.render(html, base_url)
        loop = asyncio.get_running_loop()
        future.add_done_callback(lambda _: self._give_back_from(loop, slot))
        return await self._result(executor, future, slot, html)

    async def _result(
        self, executor: ProcessPoolExecutor, future: Future[RenderedPage], slot: int, html: str
    ) -> RenderedPage:
        from concurrent.futures.process import BrokenProcessPool

        waiting = asyncio.wrap_future(future)
        try:
            done, _ = await asyncio.wait({waiting}, timeout=self._overrun)
        except asyncio.CancelledError:
            self._flags[slot] = 1  # a render under way stops at its next budget check
            waiting.cancel()  # one not yet under way never starts
            raise
        if done:
            try:
                page = waiting.result()
            except BrokenProcessPool:
                self._lose(executor)
            else:
                self.rendered += 1
                return page
        else:
            waiting.cancel()
            pid = self._pids[slot]
            if pid:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            self._lose(executor)
        self.lost += 1
        return await in_render_thread(plain_page, html)

    def _give_back_from(self, loop: asyncio.AbstractEventLoop, slot: int) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone: so is every caller
            loop.call_soon_threadsafe(self._give_back, slot)

    def _give_back(self, slot: int) -> None:
        self._free.append(slot)
        self._slots.release()

    def _lose(self, executor: ProcessPoolExecutor) -> None:
        """Drop a pool a worker of which died; the next large page starts another."""
        if self._executor is executor:
            self._executor = None
            self._starting = None
        if executor not in self._lost:
            self._lost.append(executor)
            executor.shutdown(wait=False, cancel_futures=True)

    def _start(self) -> None:
        if self._starting is None and not self._closed:
            self._starting = asyncio.ensure_future(asyncio.to_thread(self._launch))
            self._starting.add_done_callback(self._started)

    def _launch(self) -> ProcessPoolExecutor | None:
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        executor = ProcessPoolExecutor(
            self.processes,
            mp_context=self._context,
            initializer=_init_worker,
            initargs=(self._flags, self._pids),
        )
        try:
            for future in [executor.submit(_warm) for _ in range(self.processes)]:
                future.result()
        except BrokenProcessPool:
            executor.shutdown(wait=True, cancel_futures=True)
            return None
        return executor

    def _started(self, starting: asyncio.Future[ProcessPoolExecutor | None]) -> None:
        if starting.cancelled() or starting.exception() is not None:
            return
        executor = starting.result()
        if executor is None:
            return
        if self._starting is starting and not self._closed:
            self._executor = executor
        else:
            self._lose(executor)

    async def aclose(self) -> None:
        """Stop the workers and wait for them to exit: no process outlives the pool."""
        self._closed = True
        starting, self._starting = self._starting, None
        if starting is not None:
            with contextlib.suppress(Exception):
                started = await asyncio.shield(starting)
                if started is not None and started not in self._lost:
                    self._lost.append(started)
        executors = [e for e in (self._executor, *self._lost) if e is not None]
        self._executor, self._lost = None, []
        for slot in range(len(self._flags)):
            self._flags[slot] = 1
        for executor in executors:
            await asyncio.to_thread(executor.shutdown, wait=True, cancel_futures=True)


_KEY: Final = "webreach.render_pool"


def attach_render_pool(runtime: WebRuntime, processes: int) -> RenderPool | None:
    """Give ``runtime`` a render pool of ``processes`` workers (none for 0), made now, started on
    the first large page and closed with the runtime; every tool on the runtime shares it."""
    if processes < 1:
        return None
    pool = RenderPool(processes)
    runtime.attach(_KEY, pool)
    return pool


def runtime_render_pool(runtime: WebRuntime) -> RenderPool | None:
    """The runtime's render pool, if its owner gave it one."""
    found = runtime.attached(_KEY)
    return found if isinstance(found, RenderPool) else None
