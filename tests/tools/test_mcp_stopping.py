"""Stopping ``webreach mcp --http`` with real signals while the official SDK's client holds a
``web_fetch`` of a page on 127.0.0.1 that does not answer: the first SIGINT or SIGTERM says how
many requests it waits for, a call that ends within ``WEBREACH_SHUTDOWN_TIMEOUT`` brings its
result, one still running then is answered with a JSON-RPC error saying the server is stopping;
a second Ctrl-C stops at once in one line; the process writes no ERROR and no traceback."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, CallToolResult

from cli_helpers import clean_env
from replay_server import ReplayServer, Reply
from stderr_lines import WAIT, StderrLines
from test_mcp import PAGE, free_port, text_of

MODES = ["legacy", "2026-07-28"]
"""The handshake era (a session, its GET stream, each call's answer on an SSE stream) and the
sessionless protocol (each call one POST)."""


class McpServed(StderrLines):
    """A ``webreach mcp --http`` process whose stderr lines are read as they come."""

    def __init__(self, page_server: ReplayServer, cwd: Path, **env: str) -> None:
        self.port = free_port()
        settings = clean_env(
            WEBREACH_SEARCH_PROVIDER="exa",
            EXA_API_KEY="x",
            EXA_BASE_URL=page_server.url,
            WEBREACH_FETCH_ALLOW="127.0.0.1",
            WEBREACH_CONFIG="",
            **env,
        )
        command = [sys.executable, "-m", "webreach", "mcp", "--http", "--port", str(self.port)]
        process = subprocess.Popen(
            command, env=settings, cwd=cwd, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        super().__init__(process)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    async def said(self, text: str) -> str:
        return await anyio.to_thread.run_sync(self.wait_for, text)

    async def end(self) -> tuple[int, str]:
        return await anyio.to_thread.run_sync(self.ended)


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    release = threading.Event()
    yield release
    release.set()


@pytest.fixture
def pages(gate: threading.Event) -> Iterator[ReplayServer]:
    """A page on 127.0.0.1 that answers only once the gate opens (robots.txt is a 404 at once)."""
    with ReplayServer() as server:
        headers = {"content-type": "text/html; charset=utf-8"}
        server.route("GET", "/page", Reply(body=PAGE, headers=headers, hold=gate))
        yield server


@pytest.fixture
def served(tmp_path: Path) -> Iterator[list[McpServed]]:
    """Every process a test starts is killed and reaped here, whatever happened."""
    started: list[McpServed] = []
    yield started
    for one in started:
        one.process.kill()
        one.process.wait()


def start(started: list[McpServed], pages: ReplayServer, cwd: Path, **env: str) -> McpServed:
    one = McpServed(pages, cwd, **env)
    started.append(one)
    one.wait_for("MCP server on")
    return one


async def until_the_page_is_asked_for(pages: ReplayServer) -> None:
    with anyio.fail_after(WAIT):
        while not any(request.path == "/page" for request in pages.requests):
            await anyio.sleep(0.02)


async def fetch_while(
    client: Client, pages: ReplayServer, then: object
) -> CallToolResult | MCPError:
    """``web_fetch`` of the held page; once the page is asked for, ``then()`` runs beside it."""
    outcome: list[CallToolResult | MCPError] = []

    async def call() -> None:
        try:
            outcome.append(await client.call_tool("web_fetch", {"url": f"{pages.url}/page"}))
        except MCPError as error:
            outcome.append(error)

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        await until_the_page_is_asked_for(pages)
        assert callable(then)
        await then()
    return outcome[0]


def clean(err: str) -> None:
    assert "Traceback" not in err, err
    assert "ERROR" not in err, err


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_a_call_still_running_at_the_timeout_gets_a_json_rpc_error(
    mode: str,
    sig: signal.Signals,
    pages: ReplayServer,
    served: list[McpServed],
    tmp_path: Path,
) -> None:
    server = start(served, pages, tmp_path, WEBREACH_SHUTDOWN_TIMEOUT="1")

    async def stop() -> None:
        server.process.send_signal(sig)
        line = await server.said("stopping: waiting for")
        assert "stopping: waiting for 1 request (Ctrl-C again to stop now)" in line

    with anyio.fail_after(WAIT):
        async with Client(server.url, mode=mode) as client:
            outcome = await fetch_while(client, pages, stop)
    assert isinstance(outcome, MCPError), outcome
    assert outcome.code == CONNECTION_CLOSED
    assert outcome.message == (
        "the server is stopping: the call was ended after 1 s (WEBREACH_SHUTDOWN_TIMEOUT)"
    )
    code, err = await server.end()
    assert code == 0, err
    clean(err)


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_that_ends_within_the_timeout_brings_its_result(
    mode: str,
    pages: ReplayServer,
    gate: threading.Event,
    served: list[McpServed],
    tmp_path: Path,
) -> None:
    server = start(served, pages, tmp_path)  # the default timeout, 10 s

    async def stop_then_answer() -> None:
        server.process.send_signal(signal.SIGTERM)
        await server.said("stopping: waiting for 1 request")
        gate.set()

    with anyio.fail_after(WAIT):
        async with Client(server.url, mode=mode) as client:
            await client.list_tools()  # the result is checked against its schema, asked for now
            outcome = await fetch_while(client, pages, stop_then_answer)
    assert isinstance(outcome, CallToolResult), outcome
    assert not outcome.is_error, text_of(outcome)
    assert "The page text for the MCP test" in text_of(outcome)
    code, err = await server.end()
    assert code == 0, err
    clean(err)


async def test_a_second_ctrl_c_stops_at_once_in_one_line(
    pages: ReplayServer, served: list[McpServed], tmp_path: Path
) -> None:
    server = start(served, pages, tmp_path)  # the default timeout: the call would be waited for
    before: list[int] = []

    async def twice() -> None:
        server.process.send_signal(signal.SIGINT)
        await server.said("stopping: waiting for 1 request")
        before.append(len(server.seen))
        server.process.send_signal(signal.SIGINT)
        code, err = await server.end()
        assert code == 130, err
        assert [line.strip() for line in server.seen[before[0] :]] == ["webreach: stopped now"]
        clean(err)

    with anyio.fail_after(WAIT):
        async with Client(server.url, mode="legacy") as client:
            outcome = await fetch_while(client, pages, twice)
    assert isinstance(outcome, MCPError), "the process is gone: the call cannot succeed"


async def test_an_idle_session_does_not_hold_the_stop(
    pages: ReplayServer, served: list[McpServed], tmp_path: Path
) -> None:
    """A session's GET stream only waits for notifications: it is no request to wait for, and
    it closes at once rather than at the end of the timeout (600 s, ten times ``WAIT``).

    In the legacy protocol an answer arrives on the GET stream, so the POST that asked for it
    (or the client's last notification) may still be finishing on a busy server when the
    signal lands: then one request is counted, for the moment it takes to end."""
    server = start(served, pages, tmp_path, WEBREACH_SHUTDOWN_TIMEOUT="600")
    with anyio.fail_after(WAIT):
        async with Client(server.url, mode="legacy") as client:
            await client.list_tools()
            server.process.send_signal(signal.SIGTERM)
            line = await server.said("stopping: waiting for")
            assert re.search(r"stopping: waiting for (0 requests|1 request) \(Ctrl-C again", line)
            code, err = await server.end()
    assert code == 0, err
    clean(err)
