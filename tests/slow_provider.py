"""A search provider endpoint that misbehaves slowly, on a real socket on 127.0.0.1.

:class:`TricklingServer` answers every request (any method, any path) with its headers at once
and then its JSON body one byte per ``interval`` seconds: each byte arrives well within any
read timeout, so only a deadline on the whole call ends it. With ``interval=0`` it answers at
once, after ``delay``. It counts the connections it still holds open, so a test can see a
client's idle keep-alive pool from the server's side. Threaded and loop-free, so the tests and
``bench/`` can use it from synchronous or asynchronous code alike.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["EXA_RESULTS", "TricklingServer"]

EXA_RESULTS: dict[str, Any] = {
    "results": [
        {
            "url": f"https://example.org/slow/{n}",
            "title": f"A result that took its time, number {n}",
            "highlights": ["Every byte of it arrived on its own."],
        }
        for n in range(1, 4)
    ]
}
"""An Exa-shaped answer (``POST /search``) of about 400 bytes: over a minute at 0.2 s a byte."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    owner: TricklingServer

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        self.owner._opened()
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.owner._closed()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-body is what these tests provoke, not a failure."""


class TricklingServer:
    """Serves ``body`` (JSON, or bytes as given) to every request; see the module docstring."""

    def __init__(
        self, body: Any = EXA_RESULTS, *, interval: float = 0.2, delay: float = 0.0
    ) -> None:
        self.body = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.interval = interval
        self.delay = delay
        self.requests = 0
        self.hung_up = 0
        """Answers the client stopped reading before their last byte."""
        self.accepted = 0
        self.open_connections = 0
        self.peak_connections = 0
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._server.owner = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def seconds_per_answer(self) -> float:
        """How long one whole answer takes to send."""
        return self.delay + self.interval * len(self.body)

    def wait_until(self, open_at_most: int, timeout: float) -> int:
        """Open connections once they are ``open_at_most`` or fewer, or after ``timeout``."""
        deadline = time.monotonic() + timeout
        while self.open_connections > open_at_most and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.open_connections

    def __enter__(self) -> TricklingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _opened(self) -> None:
        with self._lock:
            self.accepted += 1
            self.open_connections += 1
            self.peak_connections = max(self.peak_connections, self.open_connections)

    def _closed(self) -> None:
        with self._lock:
            self.open_connections -= 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                if length:
                    self.rfile.read(length)
                with server._lock:
                    server.requests += 1
                if server.delay:
                    time.sleep(server.delay)
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(server.body)))
                self.end_headers()
                if not server.interval:
                    self.wfile.write(server.body)
                    return
                self.wfile.flush()
                try:
                    for index in range(len(server.body)):
                        time.sleep(server.interval)
                        self.wfile.write(server.body[index : index + 1])
                        self.wfile.flush()
                except OSError:
                    with server._lock:
                        server.hung_up += 1
                    self.close_connection = True

            do_GET = do_POST = _serve

        return Handler
