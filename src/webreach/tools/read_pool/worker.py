"""A worker process: its runtime, its jobs on one event loop, the oldest job's rendering first,
and its log records sent to the owner."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import heapq
import logging
import signal
import socket
from collections.abc import AsyncIterator
from typing import Any

from .wire import FORWARDED, Job, RuntimeFactory, frame, receive, send

__all__ = ["cpu_turn", "worker_main"]

logger = logging.getLogger("webreach.tools")

_job_number: contextvars.ContextVar[int] = contextvars.ContextVar("webreach_read_job")


class _Turns:
    """The CPU-bound steps of a worker's jobs, one at a time and the oldest job first, so
    under load the earliest searches finish first instead of every search finishing late."""

    def __init__(self) -> None:
        self._waiting: list[tuple[int, asyncio.Future[None]]] = []
        self._busy = False

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        number = _job_number.get(None)
        if number is None:  # not a worker's job
            yield
            return
        if self._busy or self._waiting:
            waiter = asyncio.get_running_loop().create_future()
            heapq.heappush(self._waiting, (number, waiter))
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._next()  # handed the turn as it was cancelled: pass it on
                raise
        self._busy = True
        try:
            yield
        finally:
            self._next()

    def _next(self) -> None:
        while self._waiting:
            _, waiter = heapq.heappop(self._waiting)
            if not waiter.done():
                waiter.set_result(None)
                return
        self._busy = False


_turns = _Turns()
cpu_turn = _turns.turn
"""``async with cpu_turn():`` around a job's CPU-bound step (rendering a page): in a worker it
waits until the older jobs' steps are done; anywhere else it does nothing."""


class _Forward(logging.Handler):
    """A worker's log records, sent to the owner to be written in its log's format and through
    its redaction; from any of the worker's threads."""

    def __init__(self, writer: asyncio.StreamWriter, level: int) -> None:
        super().__init__(level)
        self._writer = writer
        self._loop = asyncio.get_running_loop()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            data = frame(("log", record.name, record.levelno, self.format(record)))
            self._loop.call_soon_threadsafe(self._writer.write, data)
        except RuntimeError:  # the loop is closed: the worker is ending
            pass
        except Exception:
            self.handleError(record)


def _forward_logs(writer: asyncio.StreamWriter, level: int) -> None:
    handler = _Forward(writer, level)
    for name in FORWARDED:
        forwarded = logging.getLogger(name)
        forwarded.handlers[:] = [handler]
        forwarded.propagate = False
        forwarded.setLevel(level)


def worker_main(sock: socket.socket, factory: RuntimeFactory, level: int) -> None:
    # The owner's Ctrl-C is its to handle; a worker ends when its socket closes.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    asyncio.run(_serve(sock, factory, level))


async def _serve(sock: socket.socket, factory: RuntimeFactory, level: int) -> None:
    reader, writer = await asyncio.open_unix_connection(sock=sock)
    _forward_logs(writer, level)
    try:
        runtime = factory()
    except Exception as error:  # the owner sees the worker end, this line says why
        logger.error("a page reader process could not build its runtime: %s", error)
        await asyncio.sleep(0)  # the line's write, scheduled from the handler
        await writer.drain()
        writer.close()
        return
    running: dict[int, asyncio.Task[None]] = {}

    async def run(number: int, job: Job, args: tuple[Any, ...]) -> None:
        _job_number.set(number)
        try:
            outcome: tuple[bool, Any] = (True, await job(runtime, *args))
        except asyncio.CancelledError:
            return
        except Exception as error:  # the owner raises it in the caller
            outcome = (False, error)
        finally:
            running.pop(number, None)
        try:
            await send(writer, (number, outcome))
        except ConnectionError:
            pass
        except Exception as error:  # an outcome that does not pickle
            failed = RuntimeError(f"a page reader's answer could not be sent: {error}")
            with contextlib.suppress(ConnectionError):
                await send(writer, (number, (False, failed)))

    async with runtime:
        await send(writer, ("ready",))
        while (message := await receive(reader)) is not None:
            match message:
                case ("run", int(number), job, tuple(args)):
                    running[number] = asyncio.create_task(run(number, job, args))
                case ("cancel", int(number)):
                    if (task := running.pop(number, None)) is not None:
                        task.cancel()
        left = list(running.values())
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)
    writer.close()
