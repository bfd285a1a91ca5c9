"""Refusing a WebSocket handshake with the same JSON error an HTTP request would get.

The middleware that guard HTTP requests (inbound keys, a keyless server's Host and Origin
checks) guard the WebSocket mode of ``/v1/responses`` too; their refusal is sent as the
handshake's HTTP answer (the ASGI ``websocket.http.response`` extension, which uvicorn offers),
or, where the server lacks that extension, as a close before the handshake completes.
"""

from __future__ import annotations

from starlette.types import Message, Scope, Send

__all__ = ["KEY_NAME", "TENANTS", "answering_http"]

KEY_NAME = "webreach.key_name"
"""The scope entry naming the inbound key a WebSocket connection came with (never the key)."""
TENANTS = "webreach.tenants"
"""The scope entry holding the keys' limits, which admit and count each turn of a connection."""
_POLICY_VIOLATION = 1008
_DENIAL = "websocket.http.response"


def answering_http(scope: Scope, send: Send) -> Send:
    """``send`` for an HTTP answer to ``scope``: unchanged for HTTP; for a WebSocket handshake,
    the same answer as the handshake's denial."""
    if scope["type"] != "websocket":
        return send
    denial = _DENIAL in scope.get("extensions", {})

    async def denied(message: Message) -> None:
        kind = message["type"]
        if denial:
            await send({**message, "type": f"websocket.{kind}"})
        elif kind == "http.response.start":
            await send({"type": "websocket.close", "code": _POLICY_VIOLATION})

    return denied
