"""The Anthropic Messages codec (``/v1/messages``), with the DeepSeek web tool extensions."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ..core.events import Event
from ..core.turn import Turn
from .render import render_body, render_stream
from .request import parse_messages_request

__all__ = ["MessagesCodec"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class MessagesCodec:
    """Parses Messages requests and renders the loop's events as Messages streams and bodies."""

    protocol = "messages"

    def parse(self, body: dict[str, Any]) -> Turn:
        return parse_messages_request(body)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(status)
        if kind is None:
            kind = "invalid_request_error" if 400 <= status < 500 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": message}}

    def stream(self, turn: Turn, events: AsyncIterator[Event]) -> AsyncIterator[str]:
        return render_stream(turn, events)

    async def body(self, turn: Turn, events: AsyncIterator[Event]) -> dict[str, Any]:
        return await render_body(turn, events)
