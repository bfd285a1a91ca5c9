"""The Responses codec for the WebSocket mode: the same events as the SSE stream, each as one
line of JSON, so each becomes one WebSocket message without parsing SSE back.

Only the frame format differs from :class:`ResponseRenderer`: the events, their order and
their ``sequence_number`` are the stream's own.
"""

from __future__ import annotations

from ..core.state.store import ResponseStore
from ..core.turn.shape import JSON, Turn
from ..core.wire.codec import Reply
from .codec import ResponsesCodec
from .render import ResponseRenderer

__all__ = ["LineCodec", "messages_of"]


class _LineRenderer(ResponseRenderer):
    """Each event as ``{json}\\n`` instead of an SSE frame."""

    def _framed(self, kind: str, payload: str) -> str:
        return payload + "\n"


class LineCodec:
    """:class:`ResponsesCodec` whose stream is lines of JSON."""

    protocol = "responses"

    def __init__(self) -> None:
        self._codec = ResponsesCodec()

    def parse(self, body: JSON) -> Turn:
        return self._codec.parse(body)

    def error_body(
        self, status: int, message: str, *, param: str | None = None, code: str | None = None
    ) -> JSON:
        return self._codec.error_body(status, message, param=param, code=code)

    def renderer(self, turn: Turn, *, streaming: bool) -> ResponseRenderer:
        return (
            _LineRenderer(turn, streaming=True)
            if streaming
            else self._codec.renderer(turn, streaming=False)
        )

    async def prepare(self, body: JSON, store: ResponseStore | None) -> JSON:
        return await self._codec.prepare(body, store)

    async def remember(self, body: JSON, reply: Reply, store: ResponseStore | None) -> None:
        await self._codec.remember(body, reply, store)


def messages_of(frames: str) -> list[str]:
    """The WebSocket messages of what :class:`LineCodec`'s stream yielded (its keep-alive
    comments dropped: a WebSocket has its own pings)."""
    return [line for line in frames.split("\n") if line and not line.startswith(":")]
