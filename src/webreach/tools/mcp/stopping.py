"""How ``webreach mcp --http`` ends its calls when it stops: tool calls still running once
``WEBREACH_SHUTDOWN_TIMEOUT`` passed are answered with a JSON-RPC error saying the server is
stopping (the SDK's own answer to a request its server drops, ``CONNECTION_CLOSED``, with the
reason), and the SSE streams nothing more will be written to (a session's GET stream) close once
no request is left, so the process ends without a cut response or a cancelled task's traceback.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import mcp.types as types
from mcp.shared.exceptions import MCPError
from sse_starlette.sse import AppStatus

__all__ = ["CallsInFlight"]

T = TypeVar("T")
ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


class CallsInFlight:
    """The server's running tool calls and the HTTP requests that carry them.

    sse-starlette would close every SSE stream on the first signal, a call's answer with them;
    :meth:`serving` turns that off, and the streams close here instead, once the requests that
    may still answer on one have ended."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self._scopes: set[anyio.CancelScope] = set()
        self._requests = 0
        self._stopping = False

    @property
    def requests(self) -> int:
        """Requests the server still answers: every one but the GET streams it only writes to."""
        return self._requests

    async def run(self, call: Callable[[], Awaitable[T]]) -> T:
        """``await call()``, unless the server's stop ends it first: then the JSON-RPC error."""
        if self.reason is None:
            with anyio.CancelScope() as scope:
                self._scopes.add(scope)
                try:
                    return await call()
                finally:
                    self._scopes.discard(scope)
        raise MCPError(types.CONNECTION_CLOSED, self.reason or "the server is stopping")

    def end(self, reason: str) -> None:
        """Ends every running call with ``reason``, as the server's stop timeout passed."""
        self.reason = reason
        for scope in list(self._scopes):
            scope.cancel()

    def counted(self, app: ASGIApp) -> ASGIApp:
        """``app`` with the requests it is serving counted."""

        async def counting(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http" or scope.get("method") == "GET":
                await app(scope, receive, send)
                return
            self._requests += 1
            try:
                await app(scope, receive, send)
            finally:
                self._requests -= 1
                self._close_streams_if_done()

        return counting

    def stopping(self) -> None:
        """The server stops: its streams close as soon as no request is left."""
        self._stopping = True
        self._close_streams_if_done()

    def _close_streams_if_done(self) -> None:
        if self._stopping and self._requests == 0:
            AppStatus.should_exit = True

    def serving(self) -> _Serving:
        """``with calls.serving():`` around the server's run: SSE streams close when this says."""
        return _Serving()


class _Serving:
    """sse-starlette's streams left open on the first signal, and its process-wide state put
    back afterwards, so a later server in the same process starts with streams that stay open."""

    def __init__(self) -> None:
        self._drained = AppStatus.enable_automatic_graceful_drain

    def __enter__(self) -> None:
        AppStatus.enable_automatic_graceful_drain = False

    def __exit__(self, *_exc: object) -> None:
        AppStatus.should_exit = False
        AppStatus.enable_automatic_graceful_drain = self._drained
