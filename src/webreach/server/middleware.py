"""What every request goes through before and after its endpoint: inbound keys, and timing.

Both are plain ASGI middleware: they cost a few attribute reads per request, and the
protocol endpoints stay free of cross-cutting checks.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Callable, Sequence

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .core.turn import JSON
from .core.wire import dumps

__all__ = ["InboundKeys", "ServerTiming"]

ErrorBody = Callable[[str], JSON]
"""The error JSON of the protocol a path speaks, for a given message."""


class ServerTiming:
    """Gives every response a ``Server-Timing`` header; endpoints that split out upstream and
    web time set their own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def timed(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                if not any(name.lower() == b"server-timing" for name, _ in headers):
                    own = (time.perf_counter() - started) * 1000
                    headers.append((b"server-timing", f"webreach;dur={own:.2f}".encode()))
                    message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, timed)


class InboundKeys:
    """Refuses requests without one of the server's keys (``Authorization: Bearer`` or
    ``x-api-key``) with a 401 in the protocol's own error shape. ``open_paths`` need none."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        keys: Sequence[str],
        error_body: Callable[[str], ErrorBody],
        open_paths: frozenset[str] = frozenset(),
    ) -> None:
        self.app = app
        self._keys = [key.encode() for key in keys if key]
        self._error_body = error_body
        self._open = open_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or not self._keys
            or scope["path"] in self._open
            or self._authorised(Headers(scope=scope))
        ):
            await self.app(scope, receive, send)
            return
        body = dumps(self._error_body(scope["path"])("invalid or missing API key")).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _authorised(self, headers: Headers) -> bool:
        offered = headers.get("x-api-key", "")
        authorization = headers.get("authorization", "")
        if authorization[:7].lower() == "bearer ":
            offered = authorization[7:].strip()
        candidate = offered.encode()
        # Compare against every key so the time taken says nothing about which one matched.
        matched = False
        for key in self._keys:
            matched |= hmac.compare_digest(candidate, key)
        return matched
