"""The Anthropic Messages codec (``/v1/messages``), with the DeepSeek web tool extensions."""

from __future__ import annotations

from ..core.state.store import ResponseStore
from ..core.turn.shape import JSON, Turn
from ..core.wire.codec import Reply
from ..core.wire.framing import error_type
from .render import OWN_ERROR_TYPES, MessageRenderer
from .request import parse_messages_request

__all__ = ["MessagesCodec"]


class MessagesCodec:
    protocol = "messages"

    def parse(self, body: JSON) -> Turn:
        return parse_messages_request(body)

    def error_body(
        self, status: int, message: str, *, param: str | None = None, code: str | None = None
    ) -> JSON:
        kind = error_type(status, server="api_error", own=OWN_ERROR_TYPES)
        return {"type": "error", "error": {"type": kind, "message": message}}

    def renderer(self, turn: Turn, *, streaming: bool) -> MessageRenderer:
        return MessageRenderer(turn, streaming=streaming)

    async def prepare(self, body: JSON, store: ResponseStore | None) -> JSON:
        return body

    async def remember(self, body: JSON, reply: Reply, store: ResponseStore | None) -> None:
        return None
