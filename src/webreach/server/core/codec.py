"""The contract between the protocol codecs and the rest of the server.

A codec owns one wire protocol in both directions: it parses a request body into a
:class:`Turn` (raising :class:`RequestError` with the exact 400 messages), and renders the
loop's events either as server-sent-event frames or as one final JSON body.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

from .events import Event
from .turn import Turn

__all__ = ["Codec", "sse_frame"]


class Codec(Protocol):
    protocol: str

    def parse(self, body: dict[str, Any]) -> Turn:
        """Validate and translate a request; raise ``RequestError`` for what is refused."""
        ...

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """The protocol's own error JSON for an HTTP error response."""
        ...

    def stream(self, turn: Turn, events: AsyncIterator[Event]) -> AsyncIterator[str]:
        """SSE frames (each ending in a blank line) for a streaming response.

        The stream ends after the last frame; keep-alive comments are added by the transport.
        A ``Failed`` event ends the stream the protocol's way (error event, ``response.failed``,
        or a last chunk carrying ``error``).
        """
        ...

    async def body(self, turn: Turn, events: AsyncIterator[Event]) -> dict[str, Any]:
        """The final JSON body of a non-streaming response (also for a ``Failed`` event)."""
        ...


def sse_frame(data: str, event: str | None = None) -> str:
    """One server-sent event; ``data`` is already-serialised JSON on a single line."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data}\n\n"
