"""A real HTTP server on 127.0.0.1 that replays scripted provider responses and records requests.

Threaded, so concurrent requests overlap as they would against a real API. Used by the tests
and by ``bench/``.
"""

from __future__ import annotations

import json
import select
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    raw_query: str = ""
    """The query string as sent, for byte-for-byte checks (``query`` drops empty values)."""

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    json: Any = None
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hold: threading.Event | None = None
    """Wait for this event before answering (or until the client goes away)."""


Responder = Callable[[Recorded], Reply]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up early is expected here, not a failure worth a traceback."""


class ReplayServer:
    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        """``tls`` (a server context) serves HTTPS instead of plain HTTP."""
        self.routes: dict[tuple[str, str], Responder] = {}
        self.requests: list[Recorded] = []
        self.disconnects = 0
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self.tls = tls
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{'https' if self.tls else 'http'}://{host!s}:{port}"

    def route(self, method: str, path: str, reply: Reply | Responder) -> None:
        self.routes[(method, path)] = reply if callable(reply) else (lambda _req: reply)

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes: without this, Nagle's algorithm and
            # the client's delayed ACK hold the body back ~40 ms on every request.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                recorded = Recorded(
                    method=self.command,
                    path=parts.path,
                    query=parse_qs(parts.query),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                    raw_query=parts.query,
                )
                with server._lock:
                    server.requests.append(recorded)
                responder = server.routes.get((self.command, parts.path))
                reply = responder(recorded) if responder else Reply(404, json={"error": "no route"})
                if reply.hold is not None and not self._wait(reply.hold):
                    with server._lock:
                        server.disconnects += 1
                    return
                if reply.delay:
                    time.sleep(reply.delay)
                payload = reply.body if reply.body is not None else json.dumps(reply.json).encode()
                self.send_response(reply.status)
                headers = {"content-type": "application/json", **reply.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _wait(self, gate: threading.Event) -> bool:
                """True when the gate opened; False when the client closed the connection first."""
                while not gate.wait(0.01):
                    readable, _, _ = select.select([self.connection], [], [], 0)
                    if readable and not self.connection.recv(1, 2):  # MSG_PEEK: b"" is EOF
                        return False
                return True

            do_GET = do_POST = _serve

        return Handler
