"""What one request may spend: upstream calls (``WEBREACH_MAX_STEPS``) and time
(``WEBREACH_TURN_TIMEOUT``), so a model that never stops, or never finishes, cannot hold a
request, its searches and the client's connection for ever."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TypeVar

from .errors import ServerFailure

T = TypeVar("T")

__all__ = ["Stopping", "TurnLimits", "TurnTimedOut", "Waits", "Within", "within"]


class Stopping:
    """The server's stop as the turns see it: once :meth:`end_turns` runs, every running turn's
    deadline is now, so each ends the way a timed-out turn does, with the protocol's error."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self._enders: set[Callable[[], None]] = set()

    def watch(self, end: Callable[[], None]) -> None:
        self._enders.add(end)
        if self.reason is not None:
            end()

    def forget(self, end: Callable[[], None]) -> None:
        self._enders.discard(end)

    def end_turns(self, reason: str) -> None:
        self.reason = reason
        for end in list(self._enders):
            end()


@dataclass(frozen=True, slots=True)
class TurnLimits:
    max_steps: int = 24
    """Upstream calls of the agent loop; the last one is made without tools, forcing an answer."""
    timeout: float = 900.0
    deadline: float | None = None
    """When the turn ends, in event-loop time; None never."""
    stopping: Stopping | None = None
    """The server's stop, which brings the deadline forward to the moment it ends turns."""

    @classmethod
    def starting_now(
        cls, max_steps: int, timeout: float, stopping: Stopping | None = None
    ) -> TurnLimits:
        return cls(max_steps, timeout, asyncio.get_running_loop().time() + timeout, stopping)

    def steps_spent(self, calls: int) -> str:
        return (
            f"the model kept calling tools: stopped after {calls} upstream calls "
            "(WEBREACH_MAX_STEPS)"
        )


class TurnTimedOut(ServerFailure):
    """The turn's deadline passed: a 504 before the reply started, its error event after."""

    def __init__(self, limits: TurnLimits) -> None:
        stopped = limits.stopping.reason if limits.stopping is not None else None
        if stopped is not None:
            super().__init__(503, stopped)
        else:
            why = f"turn timed out after {limits.timeout:g} s (WEBREACH_TURN_TIMEOUT)"
            super().__init__(504, why)


def within(limits: TurnLimits) -> Within:
    """``async with within(limits):`` one wait (the first upstream call, say), cut at the
    turn's deadline: what it awaits is cancelled (its clean-up runs) and
    :class:`TurnTimedOut` raised instead."""
    return Within(limits)


class Within:
    """``asyncio.timeout_at`` the turn's deadline, its expiry told as :class:`TurnTimedOut`."""

    __slots__ = ("_limits", "_timer")

    def __init__(self, limits: TurnLimits) -> None:
        self._limits = limits
        self._timer = asyncio.timeout_at(limits.deadline)

    async def __aenter__(self) -> None:
        await self._timer.__aenter__()
        if self._limits.stopping is not None:
            self._limits.stopping.watch(self._end_now)

    def _end_now(self) -> None:
        if not self._timer.expired():
            self._timer.reschedule(asyncio.get_running_loop().time())

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._limits.stopping is not None:
            self._limits.stopping.forget(self._end_now)
        try:
            await self._timer.__aexit__(kind, error, traceback)
        except TimeoutError:
            if self._timer.expired():
                raise TurnTimedOut(self._limits) from None
            raise


class Waits:
    """The turn's deadline over the many waits of a stream (one per event): a single timer
    for all of them, which cancels the task only while it waits, so what it awaited is closed
    (its clean-up runs) and :class:`TurnTimedOut` is raised in its place. Costs one flag per
    wait, not a timer; ``close()`` it when the stream ends."""

    __slots__ = ("_armed", "_cancelled", "_limits", "_task", "expired")

    def __init__(self, limits: TurnLimits) -> None:
        self._limits = limits
        self._armed: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[object] | None = None
        self._cancelled = False
        self.expired = False

    async def next(self, items: AsyncIterator[T]) -> T | None:
        """The next item, None at the end."""
        if self.expired:
            raise TurnTimedOut(self._limits)
        if self._armed is None and self._limits.deadline is not None:
            loop = asyncio.get_running_loop()
            self._armed = loop.call_at(self._limits.deadline, self._expire)
            if self._limits.stopping is not None:
                self._limits.stopping.watch(self._expire)
        task = self._task = asyncio.current_task()
        try:
            return await anext(items, None)
        except asyncio.CancelledError:
            if self._cancelled and task is not None and task.uncancel() == 0:
                raise TurnTimedOut(self._limits) from None
            raise
        finally:
            self._task = None

    def _expire(self) -> None:
        if self.expired:
            return
        self.expired = True
        if self._task is not None:
            self._cancelled = True
            self._task.cancel()

    def close(self) -> None:
        armed, self._armed = self._armed, None
        if armed is not None:
            armed.cancel()
        if self._limits.stopping is not None:
            self._limits.stopping.forget(self._expire)
