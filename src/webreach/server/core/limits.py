"""What one request may spend: upstream calls (``WEBREACH_MAX_STEPS``) and time
(``WEBREACH_TURN_TIMEOUT``), so a model that never stops, or never finishes, cannot hold a
request, its searches and the client's connection for ever."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from types import TracebackType

from .errors import ServerFailure

__all__ = ["TurnDeadline", "TurnLimits", "TurnTimedOut", "within"]


@dataclass(frozen=True, slots=True)
class TurnLimits:
    max_steps: int = 24
    """Upstream calls of the agent loop; the last one is made without tools, forcing an answer."""
    timeout: float = 900.0
    deadline: float | None = None
    """When the turn ends, in event-loop time; None never."""

    @classmethod
    def starting_now(cls, max_steps: int, timeout: float) -> TurnLimits:
        return cls(max_steps, timeout, asyncio.get_running_loop().time() + timeout)

    def steps_spent(self, calls: int) -> str:
        return (
            f"the model kept calling tools: stopped after {calls} upstream calls "
            "(WEBREACH_MAX_STEPS)"
        )


class TurnTimedOut(ServerFailure):
    """The turn's deadline passed: a 504 before the reply started, its error event after."""

    def __init__(self, limits: TurnLimits) -> None:
        super().__init__(504, f"turn timed out after {limits.timeout:g} s (WEBREACH_TURN_TIMEOUT)")


def within(limits: TurnLimits) -> TurnDeadline:
    """``async with within(limits):`` the block, cut at the turn's deadline: whatever it
    awaits is cancelled (its clean-up runs) and :class:`TurnTimedOut` is raised instead."""
    return TurnDeadline(limits)


class TurnDeadline:
    """``asyncio.timeout_at`` the turn's deadline, its expiry told as :class:`TurnTimedOut`."""

    __slots__ = ("_limits", "_timer")

    def __init__(self, limits: TurnLimits) -> None:
        self._limits = limits
        self._timer = asyncio.timeout_at(limits.deadline)

    async def __aenter__(self) -> None:
        await self._timer.__aenter__()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            await self._timer.__aexit__(kind, error, traceback)
        except TimeoutError:
            if self._timer.expired():
                raise TurnTimedOut(self._limits) from None
            raise
