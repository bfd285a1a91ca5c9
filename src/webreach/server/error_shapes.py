"""Which error shape a path's answers take, for the refusals no endpoint writes itself: a
wrong key, a foreign origin, a body that is not JSON, a route or method that does not exist.

A client parses an error by the protocol it speaks, so a path under a protocol's own (an unknown
``/v1/messages/…``, say) answers in that protocol's shape, the search and fetch endpoints in
theirs, and anything else in Chat's, the shape most clients understand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from .core.turn.shape import JSON
from .core.wire.codec import Codec
from .core.wire.framing import dumps
from .web_api.errors import RATE_LIMITED, REQUEST_TOO_LARGE, UNAUTHORIZED, error_body

__all__ = ["WEB_CODES", "ErrorShapes"]

ErrorBody = Callable[[str], JSON]

WEB_CODES = {
    401: UNAUTHORIZED,
    403: "ORIGIN_NOT_ALLOWED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: REQUEST_TOO_LARGE,
    415: "UNSUPPORTED_MEDIA_TYPE",
    421: "HOST_NOT_ALLOWED",
    429: RATE_LIMITED,
    508: "LOOP_DETECTED",
}
"""The search and fetch endpoints' ``error.code`` for each refusal made before them."""


class ErrorShapes:
    """The error body of the protocol a path speaks, for a status and a message."""

    def __init__(
        self,
        codecs: Mapping[str, Codec],
        paths: Mapping[str, Iterable[str]],
        web_paths: Iterable[str],
        fallback: Codec,
    ) -> None:
        self._by_path = {path: codecs[name] for name in codecs for path in paths[name]}
        self._web = frozenset(web_paths)
        self._fallback = fallback

    def body(self, path: str, status: int, message: str) -> JSON:
        if _owner(path, self._web) is not None:
            code = WEB_CODES.get(status, "INVALID_REQUEST" if status < 500 else "INTERNAL_ERROR")
            return error_body(code, message)
        owner = _owner(path, self._by_path)
        codec = self._by_path[owner] if owner is not None else self._fallback
        return codec.error_body(status, message)

    def at(self, status: int) -> Callable[[str], ErrorBody]:
        """For the middleware: path → message → body, at one status."""

        def for_path(path: str) -> ErrorBody:
            return lambda message: self.body(path, status, message)

        return for_path

    def response(
        self, path: str, status: int, message: str, headers: Mapping[str, str] | None = None
    ) -> Response:
        content = dumps(self.body(path, status, message)).encode()
        return Response(content, status, dict(headers or {}), media_type="application/json")

    async def not_routed(self, request: Request, error: Exception) -> Response:
        """Starlette's 404 (no route) and 405 (a route without that method), as JSON naming
        what was asked; a 405 keeps its ``Allow``."""
        assert isinstance(error, HTTPException)
        method, path = request.method, request.url.path
        headers = error.headers or {}
        if error.status_code == 405:
            allowed = headers.get("Allow", "")
            message = f"{path} does not take {method}; it takes {allowed}"
        else:
            message = f"{method} {path}: no such endpoint on this server"
        return self.response(path, error.status_code, message, headers)


def _owner(path: str, owners: Iterable[str]) -> str | None:
    """The served path ``path`` is, or lies below."""
    for owner in owners:
        if path == owner or path.startswith(owner + "/"):
            return owner
    return None
