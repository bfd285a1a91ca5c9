"""Spacing one provider's requests, and the one wait a rate-limited request is allowed.

A :class:`Pace` hands out start times ``1 / per_second`` apart. The paces live in one table of
the process, keyed by the provider's id and scope, so every runtime, event loop and thread of a
process that calls the same provider at the same endpoint shares its slots: a server's
concurrent turns, a tool call's concurrent queries, two runtimes built side by side.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from .errors import InvalidValueError, WebError, WebErrorCode

__all__ = ["LONGEST_RETRY_WAIT", "Pace", "attempt_within", "shared_pace"]

R = TypeVar("R")

LONGEST_RETRY_WAIT = 30.0
"""With no deadline, the longest ``Retry-After`` waited for before the one retry: a provider
that asks for more (an hour, a day) has its 429 stand at once."""


class Pace:
    """Start times at least ``interval`` seconds apart, on the monotonic clock.

    A slot is taken when it is reserved, so a caller that gives up (cancelled, say) leaves a gap
    rather than letting two callers start together. A lock of the process, not of an event
    loop, guards it: callers on several loops share it.
    """

    def __init__(self, per_second: float) -> None:
        self.per_second = per_second
        self.interval = 1.0 / per_second
        self._next = 0.0
        self._lock = threading.Lock()

    def reserve(self, latest: float | None = None) -> float | None:
        """The next free start time, taken; None, with nothing taken, when it would fall after
        ``latest`` (a deadline on the monotonic clock)."""
        with self._lock:
            slot = max(time.monotonic(), self._next)
            if latest is not None and slot > latest:
                return None
            self._next = slot + self.interval
            return slot

    def hold(self, until: float) -> None:
        """Start nothing before ``until``: the provider said when to come back (``Retry-After``)."""
        with self._lock:
            self._next = max(self._next, until)


_PACES: dict[tuple[str, float], Pace] = {}
_PACES_LOCK = threading.Lock()


def shared_pace(key: str, per_second: float) -> Pace:
    """The process's pace for ``key`` (a provider's id and scope) at ``per_second``."""
    if not per_second > 0:
        raise InvalidValueError(
            "requests_per_second", f"requests per second must be positive, not {per_second!r}"
        )
    with _PACES_LOCK:
        return _PACES.setdefault((key, per_second), Pace(per_second))


async def attempt_within(
    pid: str, limit: float | None, attempt: Callable[[], Awaitable[R]], pace: Pace | None
) -> R:
    """``attempt`` within ``limit`` seconds, started in a slot of ``pace``.

    A rate-limited answer (a ``WebError`` with status 429 and ``retry_after``) is tried once
    more when the wait falls within the same deadline (with none, within
    :data:`LONGEST_RETRY_WAIT`); otherwise, or when the second answer
    fails too, the failure stands. The wait holds the pace too, so the provider's other callers
    wait with it. Past the deadline, a provider error naming ``limit``.

    The deadline cancels the attempt once, inside the call's own task: the provider's HTTP
    client closes the connection it was reading from.
    """
    deadline = None if limit is None else time.monotonic() + limit
    if pace is not None:
        await _slot(pace, deadline, pid, limit)
    try:
        return await _bounded(pid, limit, deadline, attempt())
    except WebError as error:
        wait = error.retry_after
        if error.status != 429 or wait is None:
            raise
        if deadline is not None and time.monotonic() + wait >= deadline:
            raise
        if deadline is None and wait > LONGEST_RETRY_WAIT:
            raise
        if pace is None:
            await asyncio.sleep(wait)
        else:
            pace.hold(time.monotonic() + wait)
            try:
                await _slot(pace, deadline, pid, limit)
            except WebError:
                raise error from None
    return await _bounded(pid, limit, deadline, attempt())


async def _slot(pace: Pace, deadline: float | None, pid: str, limit: float | None) -> None:
    """Sleep until ``pace`` lets the next request of ``pid`` start; a provider error at once
    when no slot is free before ``deadline``, so a queue longer than the deadline fails fast
    and takes no slot."""
    slot = pace.reserve(deadline)
    if slot is None:
        raise WebError(
            WebErrorCode.WEB_PROVIDER_ERROR,
            f"{pid}: paced at {pace.per_second:g} requests a second, and no request could start"
            f" within {limit:g} s",
            provider=pid,
        )
    if (wait := slot - time.monotonic()) > 0:
        await asyncio.sleep(wait)


async def _bounded(
    pid: str, limit: float | None, deadline: float | None, attempt: Awaitable[R]
) -> R:
    """``attempt`` until ``deadline`` (on the monotonic clock), or a provider error naming the
    ``limit`` it was given."""
    if deadline is None:
        return await attempt
    loop_deadline = asyncio.get_running_loop().time() + deadline - time.monotonic()
    within = asyncio.timeout_at(loop_deadline)
    try:
        async with within:
            return await attempt
    except TimeoutError:
        if not within.expired():
            raise  # the provider's own; the caller reports it
        raise WebError(
            WebErrorCode.WEB_PROVIDER_ERROR, f"{pid}: no answer within {limit:g} s", provider=pid
        ) from None
