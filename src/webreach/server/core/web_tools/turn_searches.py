"""Queries already run in this turn, answered again from their results instead of the provider.

A model that searches the same words twice in one answer (same filters) learns nothing new from
a second provider call, and would be billed for it; the runtime's cache may be off, so the turn
keeps its own results. Only successful searches are kept: a failed query runs again when asked.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, cast

from ....seam import SearchRequest, SearchResult, WebRuntime

__all__ = ["CallSearches", "TurnSearches"]


@dataclass
class TurnSearches:
    """The searches of one turn by request (query, result count and filters), finished or
    still running, so concurrent calls of one step share a query too."""

    done: dict[SearchRequest, SearchResult] = field(default_factory=dict)
    running: dict[SearchRequest, asyncio.Future[SearchResult]] = field(default_factory=dict)

    def around(self, runtime: WebRuntime) -> CallSearches:
        """A view of ``runtime`` for one call that searches through this turn's results."""
        return CallSearches(self, runtime)


class CallSearches:
    """One call's searches: ``search`` answers a repeated query from the turn, ``ran`` counts
    the queries that reached the provider (the ones billed). Everything else is the runtime's."""

    def __init__(self, turn: TurnSearches, runtime: WebRuntime) -> None:
        self._turn = turn
        self._runtime = runtime
        self.ran = 0

    @property
    def runtime(self) -> WebRuntime:
        """This view where a ``WebRuntime`` is expected: ``webreach.tools.run_search`` only
        calls ``search`` on it, and any other attribute is the real runtime's."""
        return cast(WebRuntime, self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)

    async def search(self, request: SearchRequest) -> SearchResult:
        turn = self._turn
        known = turn.done.get(request)
        if known is not None:
            return known
        shared = turn.running.get(request)
        if shared is not None:
            try:
                return await asyncio.shield(shared)
            except asyncio.CancelledError:
                if _cancelling():
                    raise
                # the call that ran it was cancelled; this one runs it itself
        task = asyncio.ensure_future(self._runtime.search(request))
        turn.running[request] = task
        try:
            result = await task
        finally:
            if turn.running.get(request) is task:
                del turn.running[request]
        turn.done[request] = result
        self.ran += 1
        return result


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
