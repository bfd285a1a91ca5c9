"""The Chat Completions codec: requests in, ``ChatRenderer`` replies out."""

from __future__ import annotations

from ..core.state.store import ResponseStore
from ..core.turn.shape import JSON, Turn
from ..core.wire.codec import Reply
from ..core.wire.framing import error_type
from .render import ChatRenderer
from .request import parse_chat

__all__ = ["ChatCodec"]


class ChatCodec:
    protocol = "chat"

    def parse(self, body: JSON) -> Turn:
        return parse_chat(body)

    def error_body(
        self, status: int, message: str, *, param: str | None = None, code: str | None = None
    ) -> JSON:
        kind = error_type(status, server="api_error")
        return {"error": {"message": message, "type": kind, "param": param, "code": code}}

    def renderer(self, turn: Turn, *, streaming: bool) -> ChatRenderer:
        return ChatRenderer(turn, streaming=streaming)

    async def prepare(self, body: JSON, store: ResponseStore | None) -> JSON:
        return body

    async def remember(self, body: JSON, reply: Reply, store: ResponseStore | None) -> None:
        return None
