"""The last look at every byte the server sends: no secret it holds leaves in a response.

The upstream's texts are redacted where they are read (a secret split across stream chunks
included); this middleware is the net under everything else a response may carry, in every
protocol, streamed or not, relayed or built.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .core.upstream.secrets import Redactor

__all__ = ["RedactedResponses"]


class RedactedResponses:
    """Hides every secret of ``redactor`` in each response body message.

    A body of declared length that is sent whole gets its ``Content-Length`` set anew; one
    sent in parts keeps its length, each secret masked with as many ``*`` as it had
    characters, so no part already sent is contradicted.
    """

    def __init__(self, app: ASGIApp, redactor: Redactor) -> None:
        self.app = app
        self._redactor = redactor

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and self._redactor.active:
            await self.app(scope, receive, self._socket(send))
            return
        if scope["type"] != "http" or not self._redactor.active:
            await self.app(scope, receive, send)
            return
        redactor = self._redactor
        start: Message | None = None
        sized = False

        async def redacted(message: Message) -> None:
            nonlocal start, sized
            kind = message["type"]
            if kind == "http.response.start":
                sized = any(name.lower() == b"content-length" for name, _ in message["headers"])
                if not sized:
                    await send(message)
                    return
                start = message  # sent with the first body, once its length is known
                return
            if kind != "http.response.body":
                await send(message)
                return
            body: bytes = message.get("body", b"")
            found = bool(body) and redactor.found_in(body)
            if start is not None:
                head, start = start, None
                if found and not message.get("more_body", False):
                    body = redactor.redacted_bytes(body)
                    found = False
                    headers = MutableHeaders(scope=head)
                    headers["content-length"] = str(len(body))
                await send(head)
            if found:
                body = redactor.masked_bytes(body) if sized else redactor.redacted_bytes(body)
            await send({**message, "body": body})

        await self.app(scope, receive, redacted)

    def _socket(self, send: Send) -> Send:
        """A WebSocket's messages: each is whole, so each is redacted as it is."""
        redactor = self._redactor

        async def redacted(message: Message) -> None:
            text = message.get("text") if message["type"] == "websocket.send" else None
            if isinstance(text, str) and redactor.found_in(text.encode()):
                message = {**message, "text": redactor(text)}
            await send(message)

        return redacted
