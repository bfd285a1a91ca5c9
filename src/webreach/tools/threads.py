"""Threads of webreach's own for the CPU work a fetch or a search hands off the event loop.

Renders and passage ranking each get their own threads rather than the loop's default executor,
which also runs the cache file's reads, a search library's blocking calls and anything else
``asyncio.to_thread`` is given: under a wave of searches a thousand queued renders held every
one of those, and each search's ranking, behind them. Now renders queue behind renders only.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Final, ParamSpec, TypeVar

__all__ = ["RANKING_THREADS", "RENDER_THREADS", "in_ranking_thread", "in_render_thread"]

RENDER_THREADS: Final = 4
"""Pages rendered at once in threads; more would only share the interpreter lock finer."""
RANKING_THREADS: Final = 2
"""A search's cutting and ranking of what it read: milliseconds each, never behind a render."""

P = ParamSpec("P")
T = TypeVar("T")

_render = ThreadPoolExecutor(RENDER_THREADS, thread_name_prefix="webreach-render")
_ranking = ThreadPoolExecutor(RANKING_THREADS, thread_name_prefix="webreach-rank")


async def _in(
    pool: ThreadPoolExecutor, call: Callable[P, T], *args: P.args, **kwargs: P.kwargs
) -> T:
    """``call`` in ``pool``; a caller that gives up before it starts means it never starts."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(pool, functools.partial(call, *args, **kwargs))


async def in_render_thread(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    return await _in(_render, call, *args, **kwargs)


async def in_ranking_thread(call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    return await _in(_ranking, call, *args, **kwargs)
