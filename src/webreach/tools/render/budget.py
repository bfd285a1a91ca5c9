"""A time budget for rendering one page, checked cooperatively by the passes over its tree.

A worker thread cannot be interrupted, so the passes call `check()` as they go; once the budget
is spent (or the caller's `stop` says it no longer wants the page) it raises `BudgetSpent` and
the renderer falls back to the page's plain text. The limits live in a context variable, so
concurrent renders (threads) each keep their own and no pass needs them as a parameter.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

RENDER_BUDGET: Final = 10.0
"""Seconds one page may take to render before its plain text is returned instead."""

_TICKS = itertools.count()
_LIMITS: ContextVar[tuple[float | None, Callable[[], bool] | None]] = ContextVar(
    "webreach_render_limits", default=(None, None)
)


class BudgetSpent(Exception):
    """The page's render budget ran out."""


@contextmanager
def budget(seconds: float | None, stop: Callable[[], bool] | None = None) -> Iterator[None]:
    """Give the renders inside the block `seconds` in all (None: no limit), and end them early
    once `stop()` is true."""
    token = _LIMITS.set((None if seconds is None else time.monotonic() + seconds, stop))
    try:
        yield
    finally:
        _LIMITS.reset(token)


def check() -> None:
    """Raise `BudgetSpent` once the current render's budget is spent or its caller stopped it.

    Called per element, so only every 64th call reads the clock: a sampled count (shared by
    threads, whose races only shift the sample) keeps the passes' cost unchanged.
    """
    if next(_TICKS) & 63:
        return
    deadline, stop = _LIMITS.get()
    if deadline is not None and time.monotonic() > deadline:
        raise BudgetSpent
    if stop is not None and stop():
        raise BudgetSpent
