"""What one client may hold of the server: a connection only while it keeps sending (request
headers within ``header_timeout``, the body within ``body_timeout``), and no more connections
than the process's open-file limit can serve, so slow or many clients cannot shut the others
out.

The deadlines and the bound are declared here, with the answers a refused connection gets;
:mod:`.uvicorn_protocol` is the HTTP/1.1 protocol that applies them to each connection.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "DEFAULT_MAX_CONNECTIONS",
    "TIMED_OUT",
    "ConnectionLimits",
    "OncePerMinute",
    "busy_app",
    "connection_capacity",
    "late_answer",
    "on_loop_error",
]

logger = logging.getLogger("webreach.server")

DEFAULT_MAX_CONNECTIONS = 1000
FILES_PER_CONNECTION = 2
"""A served connection's own socket and, while its turn runs, about one to the upstream."""
SPARE_FILES = 32
"""Kept for the web calls, the store, logs and the sockets answered 503."""
TIMED_OUT = "webreach.timed_out"
"""Scope key the protocol sets (to the deadline, in seconds) on a request whose body came too
slowly, so the access line says 408 rather than that the client left."""
_OUT_OF_FILES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class OncePerMinute:
    """A line for a recurring event, written at most once per ``interval`` with the count of
    those not written, so a flood of refusals is one line a minute, not one per refusal."""

    def __init__(self, level: int = logging.WARNING, interval: float = 60.0) -> None:
        self._level = level
        self._interval = interval
        self._last: float | None = None
        self._unsaid = 0

    def note(self, message: str) -> None:
        now = time.monotonic()
        if self._last is not None and now - self._last < self._interval:
            self._unsaid += 1
            return
        if self._unsaid:
            message = f"{message} ({self._unsaid:,} more since the last such line)"
        self._last, self._unsaid = now, 0
        logger.log(self._level, message)


@dataclass
class ConnectionLimits:
    """The deadlines and the connection bound, and the once-a-minute lines for each refusal."""

    max_connections: int = DEFAULT_MAX_CONNECTIONS
    header_timeout: float = 10.0
    body_timeout: float = 60.0
    busy: OncePerMinute = field(default_factory=OncePerMinute, init=False)
    slow: OncePerMinute = field(default_factory=OncePerMinute, init=False)
    out_of_files: OncePerMinute = field(
        default_factory=lambda: OncePerMinute(logging.ERROR), init=False
    )


def connection_capacity(wanted: int | None) -> tuple[int, str | None]:
    """How many connections to serve at once: ``wanted`` (default 1000) if the open-file limit
    can hold them — raising its soft value toward the hard one when that is needed and
    allowed — else as many as it holds. Also the line to log about it, if any."""
    wanted = wanted or DEFAULT_MAX_CONNECTIONS
    try:
        import resource
    except ImportError:  # not a Unix: nothing to read
        return wanted, None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    infinite = resource.RLIM_INFINITY
    in_use = _open_files()
    needed = in_use + SPARE_FILES + wanted * FILES_PER_CONNECTION
    said = None
    if soft != infinite and soft < needed:
        raised = needed if hard == infinite else min(needed, hard)
        if raised > soft:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            except (ValueError, OSError):
                pass
            else:
                said = f"raised the open-file limit from {soft} to {raised}"
                soft = raised
    if soft == infinite or soft >= needed:
        return wanted, said
    fits = max(1, (soft - in_use - SPARE_FILES) // FILES_PER_CONNECTION)
    return fits, (
        f"serving at most {fits} connections at once, not {wanted}: the open-file limit "
        f"(ulimit -n) is {soft} and each connection may need {FILES_PER_CONNECTION} "
        f"(raise the limit, or set WEBREACH_SERVER_MAX_CONNECTIONS to {fits} or fewer)"
    )


def _open_files() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 16


def on_loop_error(limits: ConnectionLimits) -> Any:
    """An event-loop exception handler that turns asyncio's line-and-traceback per refused
    ``accept()`` (thousands a second once the file limit is reached) into one line a minute."""

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if (
            isinstance(error, OSError)
            and error.errno in _OUT_OF_FILES
            and "accept" in str(context.get("message", ""))
        ):
            limits.out_of_files.note(
                f"cannot accept connections: {(error.strerror or str(error)).lower()}; new "
                f"clients wait until others close (at most {limits.max_connections} are served "
                "at once: WEBREACH_SERVER_MAX_CONNECTIONS, ulimit -n)"
            )
            return
        loop.default_exception_handler(context)

    return handle


def _error_body(kind: str, code: str, message: str) -> bytes:
    """An error both OpenAI's and Anthropic's clients read (``error.message``, ``error.type``):
    the connection has not said yet which protocol it speaks."""
    error = {"type": kind, "code": code, "message": message, "param": None}
    return json.dumps({"type": "error", "error": error}).encode()


def _headers(body: bytes, *extra: tuple[bytes, bytes]) -> list[tuple[bytes, bytes]]:
    return [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *extra,
    ]


def busy_app(limits: ConnectionLimits) -> Any:
    """The ASGI app a connection past the limit gets: 503 to its request, then closed."""
    body = _error_body(
        "overloaded_error",
        "server_busy",
        f"the server is serving as many connections as it allows ({limits.max_connections}, "
        "WEBREACH_SERVER_MAX_CONNECTIONS); retry shortly",
    )
    headers = _headers(body, (b"retry-after", b"1"))

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def late_answer(part: Literal["headers", "body"], seconds: float) -> bytes:
    """The whole 408, written straight to the transport: for late headers there is no request
    yet for the HTTP machinery to answer."""
    setting = "WEBREACH_SERVER_" + ("HEADER" if part == "headers" else "BODY") + "_TIMEOUT"
    body = _error_body(
        "timeout_error",
        "request_timeout",
        f"the request {part} did not arrive within {seconds:g} s ({setting})",
    )
    head = b"".join(name + b": " + value + b"\r\n" for name, value in _headers(body))
    return b"HTTP/1.1 408 Request Timeout\r\n" + head + b"\r\n" + body
