"""Getting frames to the client: keep-alive comments during silence, timing headers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

__all__ = ["KEEP_ALIVE", "server_timing", "with_keepalive"]

KEEP_ALIVE = ": keep-alive\n\n"


async def with_keepalive(frames: AsyncIterator[str], interval: float) -> AsyncIterator[str]:
    """Pass frames through; while none arrives for ``interval`` seconds, send a comment.

    Closing this generator (a client that went away) cancels the producer, and with it every
    search and upstream call in flight.
    """
    iterator = frames.__aiter__()
    pending: asyncio.Future[str] = asyncio.ensure_future(iterator.__anext__())
    try:
        while True:
            done, _ = await asyncio.wait({pending}, timeout=interval)
            if not done:
                yield KEEP_ALIVE
                continue
            try:
                frame = pending.result()
            except StopAsyncIteration:
                return
            yield frame
            pending = asyncio.ensure_future(iterator.__anext__())
    finally:
        if not pending.done():
            pending.cancel()
        with contextlib.suppress(BaseException):
            await pending
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(RuntimeError):
                await aclose()


def server_timing(total: float, upstream: float, web: float) -> str:
    """``Server-Timing``: the time the server itself added, apart from upstream and web time."""
    own = max(0.0, total - upstream - web)
    parts = (("webreach", own), ("upstream", upstream), ("web", web))
    return ", ".join(f"{name};dur={seconds * 1000:.2f}" for name, seconds in parts)
