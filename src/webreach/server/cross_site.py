"""What keeps a web page open in the user's browser from driving the server.

A page may send a "simple" request (a POST with a ``text/plain`` or form body) anywhere without
asking first, and a DNS-rebinding page does so under a name that resolves to 127.0.0.1. So POST
bodies must be declared JSON (a page cannot do that without a CORS preflight), a server without
inbound keys answers only requests addressed to its own loopback address from no other page,
and a preflight is answered for the origins the operator lists alone.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from functools import lru_cache

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from .core.turn.operator_log import request_log
from .core.turn.shape import JSON
from .core.wire.framing import dumps
from .socket_denial import answering_http

__all__ = ["CrossOrigin", "JsonBodies", "LoopbackOnly", "is_json", "own_hosts"]

ErrorBody = Callable[[str], JSON]
CORS_SETTING = "WEBREACH_SERVER_CORS_ORIGINS"
EXPOSED_HEADERS = ("Retry-After", "Server-Timing", "X-Request-Id")
"""What a listed page's script may read of a response besides the safelisted headers."""


async def _refuse(
    scope: Scope, send: Send, status: int, error_body: Callable[[str], ErrorBody], message: str
) -> None:
    request_log().note = message
    body = dumps(error_body(scope["path"])(message)).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    answer = answering_http(scope, send)
    await answer({"type": "http.response.start", "status": status, "headers": headers})
    await answer({"type": "http.response.body", "body": body})


def _shown(value: str) -> str:
    """A header value as a message may quote it: clipped, quoted, every control escaped."""
    return ascii(value[:120])


def is_json(content_type: str) -> bool:
    """``application/json`` or a ``+json`` type, whatever its parameters."""
    media = content_type.partition(";")[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


class JsonBodies:
    """Refuses a POST to one of ``paths`` whose body is declared anything but JSON with a 415
    in the protocol's error shape. A body declared as nothing is taken: no SDK sends one, and
    a browser's always carries an ``Origin``."""

    def __init__(
        self, app: ASGIApp, *, paths: frozenset[str], error_body: Callable[[str], ErrorBody]
    ) -> None:
        self.app = app
        self._paths = paths
        self._error_body = error_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] in self._paths:
            declared = Headers(scope=scope).get("content-type")
            if declared is not None and not is_json(declared):
                message = (
                    f"the request body must be JSON, not {_shown(declared)}: send "
                    "Content-Type: application/json (with curl, --json or "
                    "-H 'Content-Type: application/json')"
                )
                await _refuse(scope, send, 415, self._error_body, message)
                return
        await self.app(scope, receive, send)


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


@lru_cache(maxsize=64)
def own_hosts(address: str, port: int) -> frozenset[str]:
    """The ``Host`` values that address a server listening on ``address:port``: that address
    when it is a loopback one, and ``localhost``, each with the port (without it too on 80)."""
    names = ["localhost"]
    if _is_loopback(address):
        names.append(f"[{address}]" if ":" in address else address)
    hosts = {f"{name}:{port}" for name in names}
    if port == 80:
        hosts.update(names)
    return frozenset(hosts)


class LoopbackOnly:
    """For a server without inbound keys: a ``Host`` that is not its own loopback address and
    port is refused 421 (a DNS-rebinding page sends its own name), and an ``Origin`` that is
    neither one of those nor ``listed`` is refused 403 (another page in the browser), both in
    the protocol's error shape, before anything else runs."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        listed: tuple[str, ...],
        misdirected: Callable[[str], ErrorBody],
        forbidden: Callable[[str], ErrorBody],
    ) -> None:
        self.app = app
        self._listed = frozenset(listed)
        self._misdirected = misdirected
        self._forbidden = forbidden

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        server = scope.get("server")
        hosts = own_hosts(str(server[0]), int(server[1])) if server and server[1] else frozenset()
        headers = Headers(scope=scope)
        host = headers.get("host", "").lower()
        if host not in hosts:
            named = f"Host {_shown(host)}" if host else "no Host header"
            expected = " or ".join(sorted(hosts)) or "a loopback TCP address"
            message = (
                f"{named} is not this server's address ({expected}): a server without inbound "
                "keys (WEBREACH_SERVER_API_KEYS) answers only requests addressed to its own "
                "loopback address"
            )
            await _refuse(scope, send, 421, self._misdirected, message)
            return
        origin = headers.get("origin")
        own = {f"http://{name}" for name in hosts}
        if origin is not None and origin not in self._listed and origin.lower() not in own:
            message = (
                f"Origin {_shown(origin)} may not call this server: without inbound keys "
                f"(WEBREACH_SERVER_API_KEYS) only the pages of origins in {CORS_SETTING} may"
            )
            await _refuse(scope, send, 403, self._forbidden, message)
            return
        await self.app(scope, receive, send)


class CrossOrigin:
    """Answers a CORS preflight for the ``listed`` origins alone (Starlette's CORSMiddleware,
    any method the server serves and any header, so the SDKs' own pass) and refuses every other
    origin's with a 403 in the protocol's error shape; the listed origins' actual responses carry
    ``Access-Control-Allow-Origin``, no one else's do."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        listed: tuple[str, ...],
        forbidden: Callable[[str], ErrorBody],
    ) -> None:
        self.app = app
        self._listed = frozenset(listed)
        self._forbidden = forbidden
        self._cors: ASGIApp | None = None
        if listed:
            self._cors = CORSMiddleware(
                app,
                allow_origins=listed,
                allow_methods=("GET", "POST"),
                allow_headers=("*",),
                expose_headers=EXPOSED_HEADERS,
                allow_private_network=True,
            )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS":
            headers = Headers(scope=scope)
            origin = headers.get("origin")
            asks = "access-control-request-method" in headers
            if origin is not None and asks and origin not in self._listed:
                message = (
                    f"cross-origin requests from {_shown(origin)} are not allowed: "
                    f"{CORS_SETTING} lists the origins whose pages may call this server"
                )
                await _refuse(scope, send, 403, self._forbidden, message)
                return
        await (self._cors or self.app)(scope, receive, send)
