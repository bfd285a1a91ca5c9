"""The owner's side: the pool of workers, started in the background on the first read, each job
sent to the least busy one, a dead one replaced, and every one stopped at the close."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import socket
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ...seam import WebRuntime
from .wire import FORWARDED, Job, RuntimeFactory, receive, send
from .worker import worker_main

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

__all__ = ["ReadPool", "WorkerLost", "attach_read_pool", "runtime_read_pool"]

logger = logging.getLogger("webreach.tools")

_START_TIMEOUT: Final = 30.0
"""Seconds a worker may take to build its runtime and say so before it is judged broken."""
_RETRY_START_S: Final = 60.0
"""After a worker failed to start, none is started again for this long (each try costs
seconds); reads meanwhile run in the owner."""
_CLOSE_S: Final = 10.0
"""Seconds a worker has to close its runtime and exit once its socket closes."""
_PRELOAD: Final = ["webreach.tools.render_pool", "webreach.tools.read_pool", "webreach.config"]


class WorkerLost(Exception):
    """The worker running a job died or was closed before it answered."""


@dataclass(eq=False)
class _Worker:
    process: BaseProcess
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    waiting: dict[int, asyncio.Future[tuple[bool, Any]]] = field(default_factory=dict)
    listener: asyncio.Task[None] | None = None
    alive: bool = True

    async def listen(self) -> None:
        while (message := await receive(self.reader)) is not None:
            if _logged(message):
                continue
            number, outcome = message
            future = self.waiting.pop(number, None)
            if future is not None and not future.done():
                future.set_result(outcome)
        self.alive = False
        for future in self.waiting.values():
            if not future.done():
                future.set_exception(WorkerLost("the page reader process ended"))
        self.waiting.clear()


class ReadPool:
    """``processes`` workers, each with the runtime ``factory`` builds: ``run(job, *args)`` runs
    ``job(runtime, *args)`` in the least busy one, once :meth:`ready` says one is up."""

    def __init__(self, processes: int, factory: RuntimeFactory) -> None:
        if processes < 1:
            raise ValueError(f"a read pool needs at least one process, not {processes}")
        self.processes = processes
        self.started = 0
        """Workers started so far, a restarted one included."""
        self.ran = 0
        """Jobs a worker answered, so callers and tests see where the reads went."""
        self._factory = factory
        import multiprocessing  # here, not at import: a command that reads in place skips it

        self._context = multiprocessing.get_context("forkserver")
        # One fork server serves the render pool and this one: it imports what both run.
        self._context.set_forkserver_preload(_PRELOAD)
        self._workers: list[_Worker] = []
        self._starting: asyncio.Task[None] | None = None
        self._retry_at = 0.0
        self._numbers = itertools.count()
        self._closed = False

    @property
    def running(self) -> int:
        """Workers up and answering."""
        return sum(w.alive for w in self._workers)

    def ready(self) -> bool:
        """Whether a worker can take a job now; when one is missing (none started yet, or one
        died) it is started in the background, and until one is up the caller reads itself."""
        if self._closed:
            return False
        if self.running < self.processes:
            self._start()
        return self.running > 0

    async def run(self, job: Job, *args: Any) -> Any:
        """``job(runtime, *args)`` in the least busy worker; its exception is raised here, and
        a worker lost meanwhile is :class:`WorkerLost`. Cancelling the call cancels the job."""
        alive = [w for w in self._workers if w.alive]
        if not alive:
            raise WorkerLost("no page reader process is running")
        worker = min(alive, key=lambda w: len(w.waiting))
        number = next(self._numbers)
        future: asyncio.Future[tuple[bool, Any]] = asyncio.get_running_loop().create_future()
        worker.waiting[number] = future
        try:
            await send(worker.writer, ("run", number, job, args))
            ok, value = await future
            self.ran += 1
        except asyncio.CancelledError:
            worker.waiting.pop(number, None)
            if worker.alive:
                with contextlib.suppress(ConnectionError, RuntimeError):
                    await asyncio.shield(send(worker.writer, ("cancel", number)))
            raise
        except (ConnectionError, RuntimeError) as error:
            worker.waiting.pop(number, None)
            raise WorkerLost("the page reader process ended") from error
        if ok:
            return value
        raise value

    def _start(self) -> None:
        starting = self._starting is not None and not self._starting.done()
        if starting or time.monotonic() < self._retry_at:
            return
        self._workers = [w for w in self._workers if w.alive]
        self._starting = asyncio.ensure_future(self._launch(self.processes - len(self._workers)))

    async def _launch(self, count: int) -> None:
        for _ in range(count):
            worker = await self._spawn()
            if worker is None:
                self._retry_at = time.monotonic() + _RETRY_START_S
                logger.warning(
                    "a page reader process could not start; search pages are read in this "
                    "process, and another start is tried in %.0f s",
                    _RETRY_START_S,
                )
                return
            if self._closed:
                await _stop(worker)
                return
            self._workers.append(worker)

    async def _spawn(self) -> _Worker | None:
        """One worker, up and with its runtime built; None when it could not start."""
        ours, theirs = socket.socketpair()
        process = self._context.Process(
            target=worker_main, args=(theirs, self._factory, _level()), daemon=True
        )
        try:
            await asyncio.to_thread(process.start)
        except Exception:
            ours.close()
            return None
        finally:
            theirs.close()
        self.started += 1
        reader, writer = await asyncio.open_unix_connection(sock=ours)
        worker = _Worker(process, reader, writer)
        try:
            ready = await asyncio.wait_for(_readiness(reader), _START_TIMEOUT)
        except TimeoutError:
            ready = None
        except asyncio.CancelledError:
            await _stop(worker)
            raise
        if ready != ("ready",):
            await _stop(worker)
            return None
        worker.listener = asyncio.ensure_future(worker.listen())
        return worker

    async def aclose(self) -> None:
        """Stop the workers and wait for them to exit: no process outlives the pool."""
        self._closed = True
        if self._starting is not None:
            self._starting.cancel()
            with contextlib.suppress(BaseException):
                await self._starting
        workers, self._workers = self._workers, []
        await asyncio.gather(*(_stop(w) for w in workers))


async def _stop(worker: _Worker) -> None:
    """Close the worker's socket, which ends it (its jobs cancelled, its runtime closed), and
    wait for it to exit; one that does not within ``_CLOSE_S`` is killed."""
    worker.writer.close()
    if worker.listener is not None:
        with contextlib.suppress(BaseException):
            await worker.listener
    await asyncio.to_thread(_end, worker.process)


def _logged(message: Any) -> bool:
    """Log a worker's forwarded record as the owner's own; False for any other message."""
    if message[0] != "log":
        return False
    _, name, level, text = message
    logging.getLogger(name).log(level, "%s", text)
    return True


async def _readiness(reader: asyncio.StreamReader) -> Any:
    """The worker's first message other than a log record (``("ready",)``), or None."""
    while (message := await receive(reader)) is not None and _logged(message):
        pass
    return message


def _level() -> int:
    """The least level the owner logs at, which its workers send it from, but never below info:
    a reader's debug lines (several a page) cost the owner a tenth of a wave's CPU."""
    return max(logging.INFO, min(logging.getLogger(n).getEffectiveLevel() for n in FORWARDED))


def _end(process: BaseProcess) -> None:
    process.join(_CLOSE_S)
    if process.is_alive():
        process.kill()
        process.join()


_KEY: Final = "webreach.read_pool"


def attach_read_pool(runtime: WebRuntime, processes: int, factory: RuntimeFactory) -> None:
    """Give ``runtime`` a pool of ``processes`` page readers (none for 0), closed with it."""
    if processes >= 1:
        runtime.attach(_KEY, ReadPool(processes, factory))


def runtime_read_pool(runtime: WebRuntime) -> ReadPool | None:
    """The runtime's read pool, if its owner gave it one."""
    found = runtime.attached(_KEY)
    return found if isinstance(found, ReadPool) else None
