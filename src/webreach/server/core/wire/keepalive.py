"""Getting frames to the client: keep-alive comments during silence, timing headers."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from ....seam import cancel_and_wait

__all__ = ["KEEP_ALIVE", "server_timing", "with_keepalive"]

KEEP_ALIVE = ": keep-alive\n\n"


async def with_keepalive(frames: AsyncIterator[str], interval: float) -> AsyncIterator[str]:
    """Pass frames through; while none arrives for ``interval`` seconds, send a comment.

    A pump task drains the producer into a queue and a ticker adds keep-alives, so the
    per-frame cost is one queue hand-off. Closing this generator (a client that went away)
    cancels the producer, and with it every search and upstream call in flight.
    """
    queue: asyncio.Queue[str | BaseException | None] = asyncio.Queue()
    last = [time.monotonic()]

    async def pump() -> None:
        try:
            async for frame in frames:
                last[0] = time.monotonic()
                queue.put_nowait(frame)
        except Exception as error:
            queue.put_nowait(error)
        else:
            queue.put_nowait(None)

    async def tick() -> None:
        while True:
            await asyncio.sleep(max(0.0, last[0] + interval - time.monotonic()))
            if time.monotonic() - last[0] >= interval:
                last[0] = time.monotonic()
                queue.put_nowait(KEEP_ALIVE)

    workers = (asyncio.ensure_future(pump()), asyncio.ensure_future(tick()))
    try:
        while True:
            item = await queue.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        await cancel_and_wait(workers)
        aclose = getattr(frames, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(RuntimeError):
                await aclose()


def server_timing(total: float, upstream: float, web: float) -> str:
    """``Server-Timing``: the time the server itself added, apart from upstream and web time."""
    own = max(0.0, total - upstream - web)
    parts = (("webreach", own), ("upstream", upstream), ("web", web))
    return ", ".join(f"{name};dur={seconds * 1000:.2f}" for name, seconds in parts)
