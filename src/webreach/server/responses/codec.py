"""The OpenAI Responses codec (``POST /v1/responses``): requests in, ``ResponseRenderer`` out."""

from __future__ import annotations

from ..core.state.store import ResponseStore
from ..core.turn.shape import JSON, Turn
from ..core.wire.codec import Reply
from ..core.wire.framing import error_type
from .render import ResponseRenderer
from .request import parse_request
from .stored import expand, remember

__all__ = ["ResponsesCodec"]


class ResponsesCodec:
    protocol = "responses"

    def parse(self, body: JSON) -> Turn:
        return parse_request(body)

    def error_body(
        self, status: int, message: str, *, param: str | None = None, code: str | None = None
    ) -> JSON:
        kind = error_type(status, server="server_error")
        return {"error": {"message": message, "type": kind, "param": param, "code": code}}

    def renderer(self, turn: Turn, *, streaming: bool) -> ResponseRenderer:
        return ResponseRenderer(turn, streaming=streaming)

    async def prepare(self, body: JSON, store: ResponseStore | None) -> JSON:
        return await expand(body, store)

    async def remember(self, body: JSON, reply: Reply, store: ResponseStore | None) -> None:
        await remember(body, reply, store)
