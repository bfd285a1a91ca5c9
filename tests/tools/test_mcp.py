"""``webreach mcp`` driven by the official MCP SDK's client, over stdio and streamable HTTP.

Every server is a real ``webreach mcp`` subprocess; search goes to an Exa-shaped replay server
and fetch to a page on 127.0.0.1, so everything stays offline.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent

from cli_helpers import clean_env
from providers_for_tests import ScriptedSearch, sources
from replay_server import ReplayServer, Reply
from webreach.seam import SearchResult, WebRuntime
from webreach.tools import ToolOptions, web_tools
from webreach.tools.mcp.server import create_server
from webreach.tools.prompt import web_tools_prompt

EXA_KEY = "exa-canary-key-mcp"
EXA_RESPONSE = {
    "results": [
        {
            "url": "https://docs.python.org/3/whatsnew/3.13.html",
            "title": "What's New In Python 3.13",
            "highlights": ["Python 3.13 ships a new interactive interpreter."],
        },
        {"url": "https://realpython.com/python313/", "title": "Python 3.13", "highlights": []},
    ]
}
PAGE = b"<html><head><title>Notes</title></head><body><article><h1>Notes</h1><p>The page text \
for the MCP test, long enough to count as the main content of the page.</p></article></body></html>"
STARTUP_S = 30.0

Connect = Callable[..., AbstractAsyncContextManager[Client]]


def server_env(replay: ReplayServer, **extra: str) -> dict[str, str]:
    return clean_env(
        WEBREACH_SEARCH_PROVIDER="exa",
        EXA_API_KEY=EXA_KEY,
        EXA_BASE_URL=replay.url,
        WEBREACH_FETCH_ALLOW="127.0.0.1",
        WEBREACH_CONFIG="",
        **extra,
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until_listening(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"webreach mcp --http exited early:\n{log.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"webreach mcp --http did not listen on {port}:\n{log.read_text()}")


def spawn(command: list[str], env: dict[str, str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("w") as errlog:
        return subprocess.Popen(
            command,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errlog,
        )


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def http_servers(tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Every ``--http`` process a test starts is stopped and reaped here, whatever happened."""
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in processes:
        stop(process)


@pytest.fixture(params=["stdio", "http"])
def connect(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    http_servers: list[subprocess.Popen[bytes]],
) -> Connect:
    """Opens a client session to a fresh ``webreach mcp`` subprocess over the chosen transport."""
    transport: str = request.param
    log = tmp_path / "server-stderr.log"

    @asynccontextmanager
    async def open_client(env: dict[str, str], *, mode: str = "auto") -> AsyncIterator[Client]:
        command = [sys.executable, "-m", "webreach", "mcp"]
        if transport == "stdio":
            with log.open("w") as errlog:
                params = StdioServerParameters(
                    command=command[0], args=command[1:], env=env, cwd=str(tmp_path)
                )
                # On exit the SDK's transport closes stdin, then ends and reaps the process.
                async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
                    yield client
            assert "Traceback" not in log.read_text()
            return
        port = free_port()
        process = spawn([*command, "--http", "--port", str(port)], env, tmp_path, log)
        http_servers.append(process)
        wait_until_listening(process, port, log)
        async with Client(f"http://127.0.0.1:{port}/mcp", mode=mode) as client:
            yield client
        stop(process)
        stderr = log.read_text()
        assert f"MCP server on http://127.0.0.1:{port}/mcp" in stderr
        assert "Traceback" not in stderr

    return open_client


def text_of(result: CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def test_lists_exactly_the_tool_definitions(connect: Connect, replay: ReplayServer) -> None:
    env = server_env(replay, WEBREACH_SEARCH_MAX_QUERIES="3", WEBREACH_FETCH_MAX_CHARS="5000")
    options = ToolOptions(search_max_queries=3, fetch_max_chars=5000)
    expected = [(d.name, d.description, d.input_schema) for d in web_tools(WebRuntime(), options)]
    async with connect(env, mode="legacy") as client:
        assert client.server_info is not None
        assert client.server_info.name == "webreach"
        assert client.instructions == web_tools_prompt(options)
        listed = await client.list_tools()
    assert [(t.name, t.description, t.input_schema) for t in listed.tools] == expected
    assert all(t.output_schema is not None for t in listed.tools)  # see test_mcp_spec.py
    assert all(t.annotations and t.annotations.read_only_hint for t in listed.tools)
    assert replay.requests == []


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_session_survives_bad_calls_and_web_errors(
    connect: Connect, replay: ReplayServer, mode: str
) -> None:
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    replay.route("GET", "/page", Reply(body=PAGE, headers={"content-type": "text/html"}))
    async with connect(server_env(replay), mode=mode) as client:
        found = await client.call_tool("web_search", {"queries": ["python 3.13"]})
        assert not found.is_error
        assert text_of(found).startswith('Web search for "python 3.13": 2 sources')
        assert "[1] What's New In Python 3.13" in text_of(found)
        assert found.structured_content is not None
        assert found.structured_content["provider"] == "exa"
        assert found.structured_content["sources"][0]["snippet"] == (
            "Python 3.13 ships a new interactive interpreter."
        )
        assert [r.path for r in replay.requests] == ["/search"]
        assert replay.requests[0].headers["x-api-key"] == EXA_KEY

        page = await client.call_tool("web_fetch", {"url": f"{replay.url}/page"})
        assert not page.is_error
        assert text_of(page).startswith(f"URL: {replay.url}/page\nKind: html")
        assert "The page text for the MCP test" in text_of(page)
        assert page.structured_content is not None
        assert page.structured_content["title"] == "Notes"
        # A model's fetch reads the site's robots.txt first (a 404 here: everything allowed).
        assert [r.path for r in replay.requests] == ["/search", "/robots.txt", "/page"]

        bad_calls: list[tuple[str, dict[str, Any]]] = [
            ("web_search", {"queries": []}),
            ("web_search", {"queries": ["a", "b", "c", "d", "e"]}),
            ("web_search", {"query": "python"}),
            ("web_search", {}),
            ("web_fetch", {"url": ""}),
            ("web_fetch", {"url": f"{replay.url}/page", "start": -1}),
        ]
        for name, arguments in bad_calls:
            bad = await client.call_tool(name, arguments)
            assert bad.is_error, (name, arguments)
            assert text_of(bad).startswith(f"Error: {name} failed with INVALID_ARGUMENTS: ")
            assert bad.structured_content is None  # the outputSchema describes results only
            assert bad.meta is not None
            assert bad.meta["webreach/error"]["code"] == "INVALID_ARGUMENTS"
        assert len(replay.requests) == 3, "invalid arguments must never reach a provider"

        blocked = await client.call_tool("web_fetch", {"url": "http://10.20.30.40/admin"})
        assert blocked.is_error
        assert "WEB_BLOCKED_URL" in text_of(blocked)

        with pytest.raises(MCPError, match="Unknown tool: web_browse"):
            await client.call_tool("web_browse", {"url": "https://example.com"})

        again = await client.call_tool("web_search", {"queries": ["asyncio", "python 3.13"]})
        assert not again.is_error
        assert text_of(again).startswith('Web search for "asyncio" · "python 3.13"')
        # "python 3.13" is answered from the server's memory cache this time.
        assert [r.json()["query"] for r in replay.requests[3:]] == ["asyncio"]


async def test_a_provider_failure_is_an_error_result(
    connect: Connect, replay: ReplayServer
) -> None:
    replay.route("POST", "/search", Reply(401, json={"error": "bad key"}))
    async with connect(server_env(replay)) as client:
        failed = await client.call_tool("web_search", {"queries": ["python"]})
        assert failed.is_error
        assert "WEB_PROVIDER_ERROR" in text_of(failed)
        assert EXA_KEY not in text_of(failed)
        replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
        recovered = await client.call_tool("web_search", {"queries": ["python"]})
        assert not recovered.is_error


async def test_a_disabled_tool_is_not_offered(connect: Connect, replay: ReplayServer) -> None:
    async with connect(server_env(replay, WEBREACH_FETCH_ENABLED="false")) as client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == ["web_search"]
        with pytest.raises(MCPError, match="Unknown tool: web_fetch"):
            await client.call_tool("web_fetch", {"url": f"{replay.url}/page"})
    assert replay.requests == []


def test_host_and_port_need_http() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "webreach", "mcp", "--port", "9"],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--host and --port apply only with --http" in done.stderr


def test_an_invalid_setting_fails_before_serving() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "webreach", "mcp"],
        env=clean_env(WEBREACH_SEARCH_MAX_QUERIES="0"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "WEBREACH_SEARCH_MAX_QUERIES" in done.stderr
    assert done.stdout == ""


class Closing:
    def __init__(self) -> None:
        self.closed = False

    async def aclose(self) -> None:
        self.closed = True


async def test_a_runtime_factory_is_opened_on_first_use_and_closed_at_the_end() -> None:
    """In process: ``initialize`` loads no providers, and the server closes what it opened."""
    opened: list[Closing] = []

    def open_runtime() -> WebRuntime:
        runtime = WebRuntime()
        answers = {"q": SearchResult(sources=sources("https://example.com/q"))}
        runtime.register_search_provider(ScriptedSearch(answers=answers))
        opened.append(Closing())
        runtime.own(opened[-1])
        return runtime

    async with Client(create_server(open_runtime), mode="legacy") as client:
        assert opened == []
        await client.list_tools()
        result = await client.call_tool("web_search", {"queries": ["q"]})
        assert "https://example.com/q" in text_of(result)
        assert len(opened) == 1
        assert not opened[0].closed
    assert opened[0].closed


async def test_a_ready_runtime_stays_the_callers() -> None:
    runtime = WebRuntime()
    tracker = Closing()
    runtime.own(tracker)
    async with Client(create_server(runtime), mode="legacy") as client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == ["web_search", "web_fetch"]
        failed = await client.call_tool("web_search", {"queries": ["q"]})
        assert failed.is_error
        assert "WEB_PROVIDER_UNAVAILABLE" in text_of(failed)
    assert not tracker.closed
