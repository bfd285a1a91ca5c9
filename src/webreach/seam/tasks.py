"""Cancellation that reaches a provider exactly once, and waits for it to finish.

Frameworks may cancel a task again and again (anyio re-delivers a cancelled scope's
cancellation at every ``await``). An HTTP client that is cancelled a second time while it is
closing its connection skips the close, and the connection stays busy in its pool for good:
after enough abandoned requests every later call waits for a free connection and times out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

__all__ = ["await_cleanly", "cancel_and_wait"]

T = TypeVar("T")


async def cancel_and_wait(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel each unfinished task once and wait until all of them have finished.

    Cancelling the caller meanwhile does not cut the wait short (the tasks are not cancelled
    again); that cancellation is raised once everything has settled. Failures of the tasks are
    collected, so none is reported as never retrieved.
    """
    tasks = list(tasks)
    pending = {task for task in tasks if not task.done()}
    for task in pending:
        task.cancel()
    interrupted = False
    while pending:
        try:
            await asyncio.wait(pending)
        except asyncio.CancelledError:
            # A caller cancelled at every turn of the loop would never see ``wait`` return.
            interrupted = True
        pending = {task for task in pending if not task.done()}
    for task in tasks:
        if not task.cancelled():
            task.exception()
    if interrupted:
        raise asyncio.CancelledError


async def await_cleanly(awaitable: Awaitable[T]) -> T:
    """Await ``awaitable`` in a task of its own that is cancelled at most once.

    The caller's cancellation is passed on once; the call is then waited for until its
    clean-up has run, and the cancellation is raised — never swallowed.
    """
    task = asyncio.ensure_future(awaitable)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await cancel_and_wait([task])
        raise
    finally:  # a failure's traceback holds this frame; its task must not stay reachable here
        del task
