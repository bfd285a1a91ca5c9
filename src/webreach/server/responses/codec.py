"""The OpenAI Responses codec (``POST /v1/responses``)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from ..core.events import Event, Failed
from ..core.turn import Turn
from .render import ResponseRenderer
from .request import parse_request

__all__ = ["ResponsesCodec"]

logger = logging.getLogger(__name__)

_ENDED_EARLY = "The response ended before it was complete."
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}


class ResponsesCodec:
    """Responses requests in, ``response.*`` events or a response object out."""

    protocol = "responses"

    def parse(self, body: dict[str, Any]) -> Turn:
        return parse_request(body)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(status) or (
            "server_error" if status >= 500 else "invalid_request_error"
        )
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}

    async def stream(self, turn: Turn, events: AsyncIterator[Event]) -> AsyncIterator[str]:
        renderer = ResponseRenderer(turn, frames=True)
        for frame in renderer.start():
            yield frame
        try:
            async for event in events:
                for frame in renderer.feed(event):
                    yield frame
                if renderer.done:
                    return
        except Exception:
            # The status line is already sent: the client can only learn of this in-band.
            logger.exception("responses stream failed")
        for frame in renderer.feed(Failed(_ENDED_EARLY)):
            yield frame

    async def body(self, turn: Turn, events: AsyncIterator[Event]) -> dict[str, Any]:
        renderer = ResponseRenderer(turn, frames=False)
        async for event in events:
            renderer.feed(event)
            if renderer.done:
                return renderer.response
        renderer.feed(Failed(_ENDED_EARLY))
        return renderer.response
