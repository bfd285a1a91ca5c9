"""What the MCP server adds around a tool call, as the specification asks: the JSON Schema of
each tool's structured result, where a failed call's code goes, progress while a slow call runs,
and a per-session rate limit.

Kept apart from :mod:`.server` and free of the SDK, so it is tested and typed on its own.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

__all__ = [
    "CALL_WINDOW_S",
    "ERROR_META_KEY",
    "OUTPUT_SCHEMAS",
    "PROGRESS_INTERVAL_S",
    "TITLES",
    "CallRateLimit",
    "error_meta",
    "rate_limited_json",
    "rate_limited_text",
    "with_progress",
]

T = TypeVar("T")

_STRING = {"type": "string"}
_NULL = {"type": "null"}
# A nullable field as ``anyOf`` branches of one type each, not a ``type`` list: clients that map
# tool schemas onto a single-type dialect (Gemini's OpenAPI subset) reject or drop type lists.
_MAYBE_STRING = {"anyOf": [_STRING, _NULL]}
_MAYBE_INT = {"anyOf": [{"type": "integer"}, _NULL]}
_STRINGS = {"type": "array", "items": _STRING}


def _object(properties: dict[str, Any], *, optional: tuple[str, ...] = ()) -> dict[str, Any]:
    required = [name for name in properties if name not in optional]
    return {"type": "object", "properties": properties, "required": required}


_SEARCH_SOURCE = _object(
    {
        "url": _STRING,
        "title": _MAYBE_STRING,
        "snippet": _MAYBE_STRING,
        "published_at": _MAYBE_STRING,
        "passages": _STRINGS,
    },
    optional=("passages",),
)
_SEARCH_CITATION = _object({"url": _STRING, "title": _MAYBE_STRING, "cited_text": _MAYBE_STRING})

SEARCH_OUTPUT_SCHEMA: dict[str, Any] = _object(
    {
        "queries": _STRINGS,
        "content": _MAYBE_STRING,
        "sources": {"type": "array", "items": _SEARCH_SOURCE},
        "truncated": {"type": "boolean"},
        "provider": _MAYBE_STRING,
        "filtered_by_provider": _STRINGS,
        "filtered_after": _STRINGS,
        "unfiltered": _STRINGS,
        "citations": {"type": "array", "items": _SEARCH_CITATION},
        "related": _STRINGS,
        "provider_queries": _STRINGS,
    }
)
"""``SearchToolResult.to_json()``: what one ``web_search`` call found."""

FETCH_OUTPUT_SCHEMA: dict[str, Any] = _object(
    {
        "url": _STRING,
        "status_code": {"type": "integer"},
        "kind": {"type": "string", "enum": ["html", "text", "pdf"]},
        "title": _MAYBE_STRING,
        "content": _STRING,
        "truncated": {"type": "boolean"},
        "start": {"type": "integer", "minimum": 0},
        "next_start": _MAYBE_INT,
        "total_chars": {"type": "integer", "minimum": 0},
        "provider": _MAYBE_STRING,
    }
)
"""``FetchToolResult.to_json()``: the piece of one page a ``web_fetch`` call read."""

OUTPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    "web_search": SEARCH_OUTPUT_SCHEMA,
    "web_fetch": FETCH_OUTPUT_SCHEMA,
}
TITLES: dict[str, str] = {"web_search": "Web search", "web_fetch": "Read a web page"}

ERROR_META_KEY = "webreach/error"


def error_meta(error_json: dict[str, Any]) -> dict[str, Any]:
    """The ``_meta`` of a failed call, ``{"webreach/error": {"code", "message", …}}`` from a
    ``{"error": …}`` body. Not ``structuredContent``: that must match the tool's ``outputSchema``,
    and clients that check it (the TypeScript SDK, the Inspector) would drop the whole error."""
    return {ERROR_META_KEY: error_json["error"]}


PROGRESS_INTERVAL_S = 1.0
"""A call still running after this long sends progress, and again each time it passes."""

Report = Callable[[float, float | None, str | None], Awaitable[None]]


async def with_progress(
    call: Callable[[], Awaitable[T]],
    report: Report,
    what: str,
    interval: float = PROGRESS_INTERVAL_S,
) -> T:
    """Await ``call``, reporting the seconds it has taken every ``interval`` while it runs: a
    client that resets its timeout on progress (LibreChat) waits for a slow provider."""
    outcome: list[T] = []
    failure: list[Exception] = []

    async def tick() -> None:
        ticks = 0
        while True:
            await anyio.sleep(interval)
            ticks += 1
            elapsed = ticks * interval
            await report(elapsed, None, f"{what}: still working after {elapsed:g} s")

    async with anyio.create_task_group() as group:
        group.start_soon(tick)
        try:
            outcome.append(await call())
        except Exception as error:  # raised as itself, not inside the task group's ExceptionGroup
            failure.append(error)
        finally:
            group.cancel_scope.cancel()
    if failure:
        raise failure[0]
    return outcome[0]


CALL_WINDOW_S = 60.0


class CallRateLimit:
    """At most ``per_minute`` tool calls per session in any sliding minute; the spec asks servers
    to rate-limit tool calls. Sessions are keyed by whatever names them (the MCP session id)."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        if per_minute < 1:
            raise ValueError(f"per_minute must be a positive integer, not {per_minute!r}")
        self.per_minute = per_minute
        self._clock = clock
        self._calls: dict[str | None, deque[float]] = {}

    def admit(self, session: str | None) -> int | None:
        """Count one call of ``session``; ``None`` when admitted, else the whole seconds after
        which the next call would be."""
        now = self._clock()
        calls = self._calls.setdefault(session, deque())
        while calls and calls[0] <= now - CALL_WINDOW_S:
            calls.popleft()
        if len(calls) >= self.per_minute:
            return max(1, math.ceil(calls[0] + CALL_WINDOW_S - now))
        calls.append(now)
        self._forget_idle(now)
        return None

    def _forget_idle(self, now: float) -> None:
        """Sessions idle for a whole window hold nothing: a long-lived server's map stays small."""
        if len(self._calls) > 1024:
            for key in [k for k, v in self._calls.items() if not v or v[-1] <= now - CALL_WINDOW_S]:
                del self._calls[key]


def rate_limited_text(name: str, per_minute: int, retry_after: int) -> str:
    """The model's words for a refused call, in the shape of every other tool error."""
    return (
        f"Error: {name} failed with RATE_LIMITED: this MCP session made {per_minute} tool calls "
        f"in the last minute, the most allowed; retry after {retry_after} s."
    )


def rate_limited_json(per_minute: int, retry_after: int) -> dict[str, Any]:
    message = f"at most {per_minute} tool calls per minute per MCP session"
    return {"error": {"code": "RATE_LIMITED", "message": message, "retry_after": retry_after}}
