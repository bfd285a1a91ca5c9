"""A client that behaves badly on purpose, over a raw socket: it sends a request, reads as
much as a test says, and hangs up."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

__all__ = ["ABANDON_MARKERS", "STARTUP_PATIENCE", "abandon", "wait_for"]

ABANDON_MARKERS = {
    "chat": b"call_started",
    "responses": b"response.web_search_call.in_progress",
    "messages": b'"server_tool_use"',
}
"""What each protocol's stream shows once a web call has started."""

STARTUP_PATIENCE = 120.0
"""Seconds a test waits for a process it started to serve. The wait ends as soon as it does
(about 3 s on a quiet machine); beside a CPU load and four test workers on 2 cores, a server's
imports alone took 20-30 s."""


def wait_for(condition: Callable[[], bool], timeout: float = 60.0) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` passes; say which."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def abandon(
    url: str,
    body: dict[str, Any] | bytes,
    *,
    marker: bytes | None = None,
    until: Callable[[], bool] | None = None,
    headers: dict[str, str] | None = None,
) -> bytes:
    """POST ``body`` to ``url``; hang up once ``marker`` was received or ``until`` holds.

    Returns what was received before hanging up.
    """
    parts = urlsplit(url)
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    head = [
        f"POST {parts.path} HTTP/1.1",
        f"Host: {parts.netloc}",
        "Content-Type: application/json",
        f"Content-Length: {len(payload)}",
        *(f"{name}: {value}" for name, value in (headers or {}).items()),
    ]
    received = b""
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
        if marker is not None:
            while marker not in received:
                chunk = sock.recv(65536)
                if not chunk:
                    raise AssertionError(f"the stream ended before {marker!r}: {received[-500:]!r}")
                received += chunk
        if until is not None:
            assert wait_for(until), "the condition to hang up never held"
    return received
