"""Whether the server can serve now: its upstream answered within the last
``WEBREACH_READY_WINDOW`` seconds (``/readyz``), as opposed to merely running (``/healthz``).

A background task asks the upstream every half window, unless a real request had an answer
in the meantime; a load balancer polling ``/readyz`` never makes a request upstream itself.
Only changes are logged, not every check.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from .client import Upstream

__all__ = ["Readiness", "ReadyState"]

logger = logging.getLogger("webreach.server")

NOT_YET = "the upstream has not answered yet"


@dataclass(frozen=True, slots=True)
class ReadyState:
    ready: bool
    reason: str | None
    """Why not ready, in words a client may read: no key, no upstream address."""
    answered_ago: float | None
    """Seconds since the upstream's last good answer; None when it never answered."""


class Readiness:
    """The upstream's readiness, kept fresh by :meth:`watch` (the server's lifespan runs it)."""

    def __init__(self, upstream: Upstream, window: float) -> None:
        self.upstream = upstream
        self.window = window
        self._problem = NOT_YET
        self._failed_at: float | None = None
        self._logged: bool | None = None

    def state(self) -> ReadyState:
        """Ready when the last answer is within the window and no check failed since."""
        answered = self.upstream.answered_at
        if answered is None:
            return ReadyState(False, self._problem, None)
        ago = time.monotonic() - answered
        if self._failed_at is not None and self._failed_at > answered:
            return ReadyState(False, self._problem, ago)
        if ago > self.window:
            why = (
                f"the upstream has not answered for {ago:.0f} s "
                f"(WEBREACH_READY_WINDOW is {self.window:g} s)"
            )
            return ReadyState(False, why, ago)
        return ReadyState(True, None, ago)

    async def check(self) -> ReadyState:
        """Ask the upstream unless a request had an answer within the last half window."""
        interval = self.window / 2
        answered = self.upstream.answered_at
        if answered is None or time.monotonic() - answered >= interval:
            problem = await self.upstream.probe(interval)
            if problem is not None:
                self._problem, self._failed_at = problem, time.monotonic()
        state = self.state()
        self._log_change(state)
        return state

    async def watch(self) -> None:
        """Check every half window until cancelled; checks start on a fixed cadence, so one
        the upstream leaves hanging does not delay the next."""
        interval = self.window / 2
        while True:
            started = time.monotonic()
            await self.check()
            await asyncio.sleep(max(0.0, started + interval - time.monotonic()))

    def _log_change(self, state: ReadyState) -> None:
        if state.ready == self._logged:
            return
        self._logged = state.ready
        where = self.upstream.where
        if state.ready:
            logger.info("ready: the upstream (%s) answers", where, extra={"event": "ready"})
        else:
            message = "not ready: %s (%s)"
            logger.warning(message, state.reason, where, extra={"event": "not_ready"})
