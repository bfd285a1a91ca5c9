"""How one ``web_search`` call's queries run together: all at once, failing as one, and their
sources merged fairly by rank."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from ...seam import SearchResult, SearchSource, cancel_and_wait

__all__ = ["all_or_nothing", "merge_sources"]

T = TypeVar("T")


async def all_or_nothing(factories: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
    """Run concurrently; on the first failure cancel the rest, wait for all, raise that failure.

    Cancelling the caller cancels every started call and also waits for them to settle.
    """
    tasks = [asyncio.ensure_future(factory()) for factory in factories]
    try:
        pending = set(tasks)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_EXCEPTION)
            for task in tasks:
                if task in done and not task.cancelled() and task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
        return [task.result() for task in tasks]
    finally:
        await cancel_and_wait(tasks)


def merge_sources(
    results: Sequence[SearchResult], limit: int
) -> tuple[tuple[SearchSource, ...], bool]:
    """Round-robin by rank across queries, first URL wins, then cut to ``limit``."""
    merged: dict[str, SearchSource] = {}
    depth = max((len(r.sources) for r in results), default=0)
    for rank in range(depth):
        for result in results:
            if rank < len(result.sources):
                merged.setdefault(result.sources[rank].url, result.sources[rank])
    sources = tuple(merged.values())
    return sources[:limit], len(sources) > limit
