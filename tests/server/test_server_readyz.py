"""``/readyz``: 200 while the upstream answered within ``WEBREACH_READY_WINDOW`` seconds, checked
in the background; 503 saying why otherwise. ``/healthz`` stays "alive". Windows are short here
(1 s: a check every half second), and every wait is a poll with a generous bound."""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from cli_helpers import clean_env
from scripted_upstream import ScriptedUpstream
from server_harness import LiveServer
from test_cli_serve import free_port, start_serving
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

UPSTREAM_KEY = "upstream-readyz-secret"
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


class ModelsUpstream(ScriptedUpstream):
    """A scripted upstream whose ``/models`` answers ``models_status`` (or waits for
    ``models_hold``), counted; it binds with ``SO_REUSEADDR`` so it can start again on its
    own port after it stopped."""

    def __init__(self, port: int = 0) -> None:
        super().__init__()
        self.models_status = 200
        self.models_asked = 0
        self.models_hold: threading.Event | None = None
        self._socket.close()
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(("127.0.0.1", port))
        self._socket = sock
        self.port = int(sock.getsockname()[1])
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _models(self, request: Request) -> Response:
        self.models_asked += 1
        if self.models_hold is not None:
            await asyncio.to_thread(self.models_hold.wait, 30)
        if self.models_status != 200:
            error = {"error": {"message": f"scripted {self.models_status}"}}
            return JSONResponse(error, status_code=self.models_status)
        return await super()._models(request)


@pytest.fixture
def models_upstream() -> Iterator[ModelsUpstream]:
    with ModelsUpstream() as server:
        yield server


def _app(upstream: ModelsUpstream, window: float = 1.0, **extra: Any) -> Starlette:
    settings = ServerSettings(
        upstream_base_url=upstream.url,
        upstream_api_key=UPSTREAM_KEY,
        signing_key="test-signing-key-of-at-least-32-bytes",
        ready_window=window,
        **extra,
    )
    return create_app(settings, WebRuntime(), ToolOptions())


def _until(
    base: str, status: int, within: float = 10.0, reason: Callable[[str], bool] | None = None
) -> dict[str, Any]:
    """Poll ``/readyz`` until it answers ``status`` (with a ``reason`` it accepts); its body.

    A loaded machine may delay a background check past the window, so a 503 may first give
    the window's reason before the check's own: the poll waits for the one it asks for."""
    deadline = time.monotonic() + within
    seen = None
    while time.monotonic() < deadline:
        answer = httpx.get(base + "/readyz", timeout=5)
        seen = (answer.status_code, answer.text)
        assert UPSTREAM_KEY not in answer.text
        if answer.status_code == status:
            body: dict[str, Any] = answer.json()
            if reason is None or reason(str(body.get("reason"))):
                return body
        time.sleep(0.05)
    pytest.fail(f"/readyz did not answer {status} within {within} s; last {seen}")


def _readiness_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        f"{r.levelname} {r.getMessage()}"
        for r in caplog.records
        if r.name == "webreach.server" and re.match(r"(not )?ready: ", r.getMessage())
    ]


def test_ready_after_the_first_answer_not_when_it_fails_and_back(
    models_upstream: ModelsUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="webreach.server")
    with LiveServer(_app(models_upstream)) as server:
        body = _until(server.url, 200)
        assert body["status"] == "ready" and body["window_seconds"] == 1.0
        assert 0 <= body["upstream_answered_seconds_ago"] < 1.0
        assert models_upstream.models_asked >= 1  # nobody else asked: the background check did
        time.sleep(1.2)  # more checks, each answered: nothing more is logged

        models_upstream.models_status = 500
        said = "the upstream answered HTTP 500 to GET /models"
        body = _until(server.url, 503, reason=said.__eq__)
        assert body["status"] == "not ready"
        assert str(models_upstream.port) not in str(body)
        assert httpx.get(server.url + "/healthz").status_code == 200  # alive all the same
        time.sleep(1.2)

        models_upstream.models_status = 200
        _until(server.url, 200)
        asked = models_upstream.models_asked
    assert asked >= 6
    where = f"127.0.0.1:{models_upstream.port}"
    ready = f"INFO ready: the upstream ({where}) answers"
    lines = _readiness_lines(caplog)
    assert lines[0] == lines[-1] == ready
    assert f"WARNING not ready: {said} ({where})" in lines
    # Only changes are logged: never the same state twice in a row. (On this machine the list
    # is exactly ready, not ready, ready; a check delayed past the window adds a flip.)
    states = [line.startswith("INFO") for line in lines]
    assert all(a != b for a, b in pairwise(states))


def test_a_stopped_upstream_and_its_return() -> None:
    upstream = ModelsUpstream()
    upstream.__enter__()
    with LiveServer(_app(upstream)) as server:
        _until(server.url, 200)
        upstream.__exit__(None, None, None)
        reachable = "the upstream cannot be reached: "
        body = _until(server.url, 503, reason=lambda said: said.startswith(reachable))
        assert "127.0.0.1" not in body["reason"]
        with ModelsUpstream(upstream.port) as again:
            _until(server.url, 200)
            assert again.models_asked >= 1


def test_a_real_answer_counts_as_one(models_upstream: ModelsUpstream) -> None:
    """A request the upstream answered makes the server ready at once; the next check that
    fails makes it not ready again."""
    models_upstream.models_status = 500
    with LiveServer(_app(models_upstream, window=4.0)) as server:
        _until(server.url, 503)
        answer = httpx.post(server.url + "/v1/chat/completions", json=CHAT, timeout=10)
        assert answer.status_code == 200
        assert httpx.get(server.url + "/readyz").status_code == 200
        said = "the upstream answered HTTP 500 to GET /models"
        _until(server.url, 503, within=15, reason=said.__eq__)


def test_readyz_needs_no_inbound_key_and_never_shows_one(
    models_upstream: ModelsUpstream,
) -> None:
    models_upstream.models_status = 401
    app = _app(models_upstream, server_api_keys="inbound-readyz-key")
    with LiveServer(app) as server:
        refused = "the upstream refused the server's credentials (HTTP 401 to GET /models)"
        body = _until(server.url, 503, reason=refused.__eq__)
        assert "inbound-readyz-key" not in str(body)
        assert httpx.get(server.url + "/v1/models").status_code == 401
        models_upstream.models_status = 200
        _until(server.url, 200)


def test_a_hanging_upstream_is_not_ready_and_the_server_still_stops(
    models_upstream: ModelsUpstream,
) -> None:
    hold = threading.Event()
    try:
        with LiveServer(_app(models_upstream)) as server:
            _until(server.url, 200)
            models_upstream.models_hold = hold
            body = _until(server.url, 503)
            assert body["reason"] in (
                "the upstream did not answer GET /models within 0.5 s",
                "the upstream has not answered for 1 s (WEBREACH_READY_WINDOW is 1 s)",
            )
            stopping = time.monotonic()
        assert not server._thread.is_alive()
        assert time.monotonic() - stopping < 5
    finally:
        hold.set()


def test_the_background_check_ends_with_the_lifespan(models_upstream: ModelsUpstream) -> None:
    """Closed while a check waits on the upstream: no task is left behind."""
    hold = threading.Event()
    models_upstream.models_hold = hold
    app = _app(models_upstream, window=60.0)

    async def run() -> list[asyncio.Task[Any]]:
        async with app.router.lifespan_context(app):
            deadline = time.monotonic() + 60
            while models_upstream.models_asked == 0 and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            assert models_upstream.models_asked == 1
            assert app.state.readiness.state().ready is False
            started = time.monotonic()
        assert time.monotonic() - started < 5
        await asyncio.sleep(0)
        return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    try:
        assert asyncio.run(run()) == []
    finally:
        hold.set()


def test_serve_as_a_process(models_upstream: ModelsUpstream, tmp_path: Path) -> None:
    """``webreach serve`` reads its keys from files and logs readiness only when it changes."""
    (tmp_path / "upstream").write_text(UPSTREAM_KEY + "\n")
    (tmp_path / "inbound").write_text("inbound-file-key\n")
    port = free_port()
    env = clean_env(
        WEBREACH_UPSTREAM_BASE_URL=models_upstream.url,
        WEBREACH_UPSTREAM_API_KEY_FILE=str(tmp_path / "upstream"),
        WEBREACH_SERVER_API_KEYS_FILE=str(tmp_path / "inbound"),
        WEBREACH_READY_WINDOW="1",
    )
    process = start_serving(env, port)
    base = f"http://127.0.0.1:{port}"
    try:
        _until(base, 200)
        headers = {"Authorization": "Bearer inbound-file-key"}
        answer = httpx.post(base + "/v1/chat/completions", json=CHAT, headers=headers, timeout=10)
        assert answer.status_code == 200, answer.text
        models_upstream.models_status = 503
        _until(base, 503)
        time.sleep(1.2)
        models_upstream.models_status = 200
        _until(base, 200)
        time.sleep(1.2)
    finally:
        process.terminate()
        _, err = process.communicate(timeout=20)
    # uvicorn shuts down gracefully, then raises SIGTERM again (as before /readyz existed)
    assert process.returncode in (0, -signal.SIGTERM), err
    assert "Traceback" not in err and "ERROR" not in err
    assert UPSTREAM_KEY not in err and "inbound-file-key" not in err
    changes = [line for line in err.splitlines() if re.search(r"\b(not )?ready: ", line)]
    states = ["not ready" if "not ready: " in line else "ready" for line in changes]
    # Only changes are logged: never the same state twice in a row. On a loaded machine the
    # first check may miss its 0.5 s window, which is a change of its own.
    assert all(a != b for a, b in itertools.pairwise(states)), err
    assert states[-1] == "ready", err
    refused = [line for line in changes if "answered HTTP 503 to GET /models" in line]
    assert len(refused) == 1, err
    assert states[states.index("ready") :] == ["ready", "not ready", "ready"], err
    assert "GET /readyz" in err  # the access log shows the polls, the checks are not logged
