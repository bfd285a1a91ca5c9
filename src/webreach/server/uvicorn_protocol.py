"""uvicorn's HTTP/1.1 protocol with the deadlines and the bound of :mod:`.connections`.

uvicorn has a keep-alive timeout and ``limit_concurrency`` (which counts requests, not
connections) but no deadline for a request still arriving, and no public hook into a
connection's reading. So this module, and no other, subclasses its ``H11Protocol`` and reads its
request cycle (``cycle.more_body``, ``response_started``, ``message_event``). uvicorn's version
is bounded in pyproject.toml for it, and tests/server/test_server_connections.py drives these timers
against a real server, so a uvicorn that changes them fails there first.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal, cast

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from .connections import TIMED_OUT, ConnectionLimits, busy_app, late_answer

__all__ = ["GuardedH11Protocol", "LimitedConfig"]


class LimitedConfig(uvicorn.Config):
    """uvicorn's config carrying the :class:`ConnectionLimits` each connection reads."""

    def __init__(self, app: Any, limits: ConnectionLimits, **options: Any) -> None:
        super().__init__(app, http=GuardedH11Protocol, **options)
        self.limits = limits


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with deadlines: the request headers must be complete within
    ``header_timeout`` of the connection (or of a new request's first byte), the body within
    ``body_timeout`` of the headers; otherwise 408 and the connection closes. A connection past
    ``max_connections`` is answered 503."""

    def __init__(
        self,
        config: uvicorn.Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.limits = config.limits if isinstance(config, LimitedConfig) else ConnectionLimits()
        self._timer: asyncio.TimerHandle | None = None
        self._waiting: Literal["headers", "body"] = "headers"
        self._armed_for: Any = None
        """The request cycle current when the timer was armed (None before the first)."""
        self._received = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            self.app = busy_app(self.limits)
            self.limits.busy.note(
                f"answering 503 to new connections: {self.limits.max_connections} are open, "
                "the most this server serves at once (WEBREACH_SERVER_MAX_CONNECTIONS)"
            )
        self._arm("headers")

    def data_received(self, data: bytes) -> None:
        if self._timer is None and (self.cycle is None or self.cycle.response_complete):
            self._arm("headers")
        self._received += len(data)
        super().data_received(data)
        self._review()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._review()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def _arm(self, waiting: Literal["headers", "body"]) -> None:
        self._cancel()
        self._waiting, self._armed_for, self._received = waiting, self.cycle, 0
        seconds = self.limits.header_timeout if waiting == "headers" else self.limits.body_timeout
        self._timer = self.loop.call_later(seconds, self._late)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _review(self) -> None:
        """After events: a new request's headers stop the header clock and start the body's;
        a complete body, or an answer begun, stops the body's."""
        cycle = self.cycle
        if self._timer is not None:
            if cycle is self._armed_for and (
                self._waiting == "headers" or (cycle.more_body and not cycle.response_started)
            ):
                return
            self._cancel()
        if (
            cycle is not None
            and cycle is not self._armed_for
            and cycle.more_body
            and not cycle.response_started
        ):
            self._arm("body")

    def _late(self) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        cycle = self.cycle
        client = self.client[0] if self.client else "?"
        if self._waiting == "body":
            if cycle is None or not cycle.more_body or cycle.response_started:
                return
            seconds = self.limits.body_timeout
            cast(dict[str, Any], cycle.scope)[TIMED_OUT] = seconds
            self.transport.write(late_answer("body", seconds))
            # The app reading the body sees the client gone; its answer goes nowhere.
            cycle.disconnected = True
            cycle.message_event.set()
        else:
            seconds = self.limits.header_timeout
            answered_body = cycle is not None and cycle is self._armed_for and cycle.more_body
            if self._received and not answered_body:
                self.transport.write(late_answer("headers", seconds))
            what = "its request headers were not complete" if self._received else "no request"
            self.limits.slow.note(
                f"closed a connection from {client}: {what} within {seconds:g} s "
                "(WEBREACH_SERVER_HEADER_TIMEOUT)"
            )
        self.transport.close()
