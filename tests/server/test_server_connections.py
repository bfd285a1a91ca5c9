"""``webreach serve`` against clients that hold its connections: slow headers, slow bodies,
more connections than it serves, an exhausted open-file limit, and a client that leaves
mid-upload. Real sockets against the real command; its stderr is read as the operator reads it.
"""

from __future__ import annotations

import json
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from cli_helpers import clean_env
from client_sockets import STARTUP_PATIENCE, wait_for

NOWHERE = "http://127.0.0.1:9/v1"
"""The upstream: none of these requests gets as far as asking it."""
CHAT = "/v1/chat/completions"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    log: Path
    port: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def host(self) -> str:
        """The ``Host`` a server without keys answers: its own loopback address and port."""
        return f"127.0.0.1:{self.port}"

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def lines(self) -> list[str]:
        return self.text().splitlines()

    def wait_line(self, *needles: str, timeout: float = STARTUP_PATIENCE) -> str:
        found: list[str] = []

        def seen() -> bool:
            found[:] = [line for line in self.lines() if all(n in line for n in needles)]
            return bool(found) or self.process.poll() is not None

        wait_for(seen, timeout)
        if not found:
            pytest.fail(f"no line with {needles} in:\n{self.text()[-3000:]}")
        return found[0]

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=10)


@contextmanager
def serving(tmp_path: Path, files: int | None = None, **settings: str) -> Iterator[Served]:
    """``webreach serve`` with ``settings`` (``WEBREACH_*``), under an open-file limit of
    ``files`` if given."""
    port = free_port()
    log = tmp_path / f"serve-{port}.log"
    env = clean_env(WEBREACH_UPSTREAM_BASE_URL=NOWHERE, WEBREACH_CONFIG="", **settings)

    def limit_files() -> None:
        if files is not None:
            soft, hard = files if isinstance(files, tuple) else (files, files)
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "webreach", "serve", "--port", str(port)],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            preexec_fn=limit_files,
        )
    served = Served(process, log, port)
    try:
        served.wait_line("serving on")
        yield served
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


def read_until_closed(sock: socket.socket, limit: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes (or ``limit`` seconds pass), and when."""
    started = time.monotonic()
    received = b""
    sock.settimeout(0.2)
    while time.monotonic() - started < limit:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            break
        if not chunk:
            break
        received += chunk
    else:
        return received, float("inf")
    return received, time.monotonic() - started


def trickle(sock: socket.socket, data: bytes, every: float, stop: threading.Event) -> None:
    """Send ``data`` a byte at a time, one each ``every`` seconds, until told or refused."""
    for byte in data:
        if stop.wait(every):
            return
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            return


@contextmanager
def trickling(sock: socket.socket, data: bytes, every: float = 0.25) -> Iterator[None]:
    stop = threading.Event()
    sender = threading.Thread(target=trickle, args=(sock, data, every, stop), daemon=True)
    sender.start()
    try:
        yield
    finally:
        stop.set()
        sender.join(timeout=5)


def post_head(served: Served, length: int, path: str = CHAT) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: {served.host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def error_of(answer: bytes) -> dict[str, object]:
    body = answer.partition(b"\r\n\r\n")[2]
    data = json.loads(body)
    assert isinstance(data, dict)
    return data


# -- slow clients --------------------------------------------------------------------------


def test_headers_sent_a_byte_at_a_time_are_cut_off_with_408(tmp_path: Path) -> None:
    """Before: a client trickling its headers held the connection for as long as it liked."""
    with serving(tmp_path, WEBREACH_SERVER_HEADER_TIMEOUT="1") as served:
        slow = f"GET /healthz HTTP/1.1\r\nHost: {served.host}\r\nX-Slow: ".encode() + b"a" * 99
        with served.connect() as sock, trickling(sock, slow):
            answer, after = read_until_closed(sock, 8)
        assert after < 5, "the connection stayed open past the header deadline"
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert "WEBREACH_SERVER_HEADER_TIMEOUT" in str(error_of(answer))
        with served.connect() as idle:
            nothing, after = read_until_closed(idle, 8)
        assert after < 5, "a connection that sent nothing stayed open"
        assert nothing == b""
        served.wait_line("WARNING", "not complete within 1 s")
        assert httpx.get(served.base + "/healthz").status_code == 200


def test_a_kept_alive_connection_gets_the_same_deadline_for_its_next_request(
    tmp_path: Path,
) -> None:
    with serving(tmp_path, WEBREACH_SERVER_HEADER_TIMEOUT="1") as served:
        with served.connect() as sock:
            sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {served.host}\r\n\r\n".encode())
            first = b""
            while b'"ok"' not in first:
                first += sock.recv(65536)
            assert first.startswith(b"HTTP/1.1 200 ")
            with trickling(
                sock,
                f"GET /healthz HTTP/1.1\r\nHost: {served.host}\r\nX-Slow: ".encode() + b"a" * 99,
            ):
                answer, after = read_until_closed(sock, 8)
        assert after < 5, "the second request's headers were given all the time they liked"
        assert answer.startswith(b"HTTP/1.1 408 "), answer


def test_a_body_sent_a_byte_at_a_time_gets_408(tmp_path: Path) -> None:
    """Before: a body trickled at a byte a second held the connection and its request."""
    with serving(tmp_path, WEBREACH_SERVER_BODY_TIMEOUT="1") as served:
        with served.connect() as sock:
            sock.sendall(post_head(served, 1000) + b'{"model":')
            with trickling(sock, b'"m", "messages": []' * 50):
                answer, after = read_until_closed(sock, 8)
        assert after < 5, "the connection stayed open past the body deadline"
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert "WEBREACH_SERVER_BODY_TIMEOUT" in str(error_of(answer))
        line = served.wait_line(f"POST {CHAT} 408")
        assert "WEBREACH_SERVER_BODY_TIMEOUT" in line
        assert "Traceback" not in served.text()


def test_a_client_that_leaves_mid_upload_is_499_without_a_traceback(tmp_path: Path) -> None:
    """Before: a ``ClientDisconnect`` traceback and an access line saying the server failed."""
    with serving(tmp_path) as served:
        with served.connect() as sock:
            sock.sendall(post_head(served, 1000) + b'{"model":"m"')
        line = served.wait_line(f"POST {CHAT} ")
        assert f"POST {CHAT} 499 " in line
        assert "client left" in line
        httpx.get(served.base + "/healthz")
        served.wait_line("GET /healthz 200")
        text = served.text()
        assert "Traceback" not in text and "ClientDisconnect" not in text
        assert " ERROR " not in text


def leave_a_search_upload(tmp_path: Path) -> str:
    """The log of a server whose client left mid-upload to ``/v1/search``."""
    with serving(tmp_path) as served:
        with served.connect() as sock:
            sock.sendall(post_head(served, 1000, "/v1/search") + b'{"query":')
        line = served.wait_line("POST /v1/search ")
        assert "POST /v1/search 499 " in line and "client left" in line
        return served.text()


def test_a_client_that_leaves_a_search_upload_is_499(tmp_path: Path) -> None:
    """Before: 500, the status of the answer the search endpoint sent to nobody."""
    leave_a_search_upload(tmp_path)


def test_a_client_that_leaves_a_search_upload_leaves_no_traceback(tmp_path: Path) -> None:
    assert "Traceback" not in leave_a_search_upload(tmp_path)


# -- how many connections -------------------------------------------------------------------


def test_connections_past_the_limit_get_a_clear_503(tmp_path: Path) -> None:
    """Before: every connection was served, however many."""
    with serving(tmp_path, WEBREACH_SERVER_MAX_CONNECTIONS="5") as served, ExitStack() as held:
        idle = [held.enter_context(served.connect()) for _ in range(5)]
        with served.connect() as sixth:
            sixth.sendall(f"GET /healthz HTTP/1.1\r\nHost: {served.host}\r\n\r\n".encode())
            answer, _ = read_until_closed(sixth, 8)
        assert answer.startswith(b"HTTP/1.1 503 "), answer
        assert b"retry-after" in answer.lower()
        assert "WEBREACH_SERVER_MAX_CONNECTIONS" in str(error_of(answer))
        assert "WEBREACH_SERVER_MAX_CONNECTIONS" in served.wait_line("WARNING", "503")
        for sock in idle:
            sock.close()

        def served_again() -> bool:
            return httpx.get(served.base + "/healthz").status_code == 200

        assert wait_for(served_again, 10)


def test_the_open_file_limit_is_raised_as_far_as_the_connections_need(tmp_path: Path) -> None:
    with serving(tmp_path, files=(256, 4096), WEBREACH_SERVER_MAX_CONNECTIONS="500") as served:
        line = served.wait_line("raised the open-file limit from 256 to ")
        assert int(line.split(" to ")[1].split()[0]) > 1000
        assert "serving at most" not in served.text()
        soft, _ = resource.prlimit(served.process.pid, resource.RLIMIT_NOFILE)
        assert soft > 1000


def test_an_exhausted_file_limit_is_logged_once(tmp_path: Path) -> None:
    """Before: one traceback per refused accept, tens of thousands a second."""
    with serving(tmp_path, files=64) as served, ExitStack() as held:
        served.wait_line("open-file limit")
        for _ in range(120):
            held.enter_context(served.connect())
        served.wait_line("too many open files")
        time.sleep(3)
        lines = [line for line in served.lines() if "too many open files" in line.lower()]
        assert len(lines) == 1, served.text()[-3000:]
        assert "Traceback" not in served.text()
        held.close()

        def healthy() -> bool:
            try:
                return httpx.get(served.base + "/healthz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        assert wait_for(healthy, 20)


# -- log forging ----------------------------------------------------------------------------

FORGED = "2026-01-01T00:00:00.000Z INFO GET /healthz 200 0.1ms"


def forging_request(served: Served) -> None:
    path = "/v1/x%0a" + FORGED.replace(" ", "%20") + "%0d%1b[31mred%c2%9b31m%e2%80%a8%7f"
    with served.connect() as sock:
        sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: {served.host}\r\nConnection: close\r\n".encode()
            + b"X-Forwarded-For: \x9b2J\r\n\r\n"
        )
        answer, _ = read_until_closed(sock, 8)
    assert answer.startswith(b"HTTP/1.1 404 "), answer


def assert_no_raw_controls(text: str) -> None:
    for char in ("\x1b", "\x9b", "\x7f", "\r", "\u2028"):
        assert char not in text, f"{char!r} reached the log"


def test_control_characters_in_a_path_cannot_forge_text_lines(tmp_path: Path) -> None:
    with serving(tmp_path) as served:
        forging_request(served)
        served.wait_line(" 404 ")
        assert_no_raw_controls(served.text())
        assert not any(line.startswith(FORGED) for line in served.lines())
        access = [line for line in served.lines() if "/v1/x" in line]
        assert len(access) == 1 and " 404 " in access[0], access
        assert "\\n" + FORGED in access[0]
        assert "\\x1b[31m" in access[0]


def test_control_characters_cannot_forge_json_lines(tmp_path: Path) -> None:
    with serving(tmp_path, WEBREACH_LOG_FORMAT="json") as served:
        forging_request(served)
        served.wait_line('"status": 404')
        assert_no_raw_controls(served.text())
        records = [json.loads(line) for line in served.lines()]
        (access,) = [r for r in records if r.get("event") == "access"]
        assert access["path"].startswith("/v1/x\n" + FORGED)
        assert "\x1b[31m" in access["path"] and "\u2028" in access["path"]
