"""A client whose stream drops mid-search resumes it: ``webreach mcp --http`` keeps each SSE
stream's events (in memory, or on Redis) and the official SDK's client reconnects with
``Last-Event-ID`` and gets the result it missed.

The stream is dropped by a TCP relay between the client and the server that closes every
connection while the search waits on a slow provider."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import test_mcp
from cutting_proxy import CuttingProxy
from replay_server import ReplayServer
from slow_provider import TricklingServer
from test_mcp import server_env, text_of
from webreach.tools.mcp.events import RETRY_MS

SEARCH_S = 4.0  # long enough that the cut lands while the provider still holds the answer
DEADLINE_S = 60.0

http_servers = test_mcp.http_servers


@pytest.fixture
def served(
    tmp_path: Path, http_servers: list[subprocess.Popen[bytes]], replay: ReplayServer
) -> Iterator[tuple[TricklingServer, dict[str, str]]]:
    with TricklingServer(interval=0, delay=SEARCH_S) as slow:
        env = server_env(replay, WEBREACH_SEARCH_CONTEXT_SIZE="low") | {"EXA_BASE_URL": slow.url}
        yield slow, env


def start(env: dict[str, str], tmp_path: Path, http_servers: list[subprocess.Popen[bytes]]) -> int:
    port, log = test_mcp.free_port(), tmp_path / "server-stderr.log"
    command = [sys.executable, "-m", "webreach", "mcp", "--http", "--port", str(port)]
    http_servers.append(test_mcp.spawn(command, env, tmp_path, log))
    test_mcp.wait_until_listening(http_servers[-1], port, log)
    return port


async def search_through_a_cut(port: int, slow: TricklingServer) -> tuple[str, CuttingProxy]:
    """One ``web_search`` through a relay that is cut once the provider has the query and the
    client has the stream's priming event (its id and ``retry``)."""
    with CuttingProxy(port) as proxy:
        # The server accepts only its own Host (DNS rebinding protection): name it, not the relay.
        http = httpx2.AsyncClient(headers={"Host": f"127.0.0.1:{port}"}, timeout=DEADLINE_S)
        url = f"http://127.0.0.1:{proxy.port}/mcp"
        async with (
            http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
        ):

            async def cut_mid_search() -> None:
                deadline = time.monotonic() + DEADLINE_S
                while not (slow.requests and f"retry: {RETRY_MS}".encode() in proxy.to_client):
                    assert time.monotonic() < deadline, "the search never reached the provider"
                    await anyio.sleep(0.02)
                proxy.cut()

            async with anyio.create_task_group() as group:
                group.start_soon(cut_mid_search)
                with anyio.fail_after(DEADLINE_S):
                    result = await client.call_tool("web_search", {"queries": ["slow"]})
        assert not result.is_error, text_of(result)
        return text_of(result), proxy


@pytest.mark.parametrize("store", ["memory", "redis"])
async def test_a_dropped_stream_resumes_and_brings_the_result(
    store: str,
    served: tuple[TricklingServer, dict[str, str]],
    tmp_path: Path,
    http_servers: list[subprocess.Popen[bytes]],
    request: pytest.FixtureRequest,
) -> None:
    slow, env = served
    where = request.getfixturevalue("redis_url") if store == "redis" else "memory"
    port = start(env | {"WEBREACH_MCP_EVENT_STORE": where}, tmp_path, http_servers)
    text, proxy = await search_through_a_cut(port, slow)
    assert "A result that took its time" in text
    assert proxy.cuts == 1
    assert b"last-event-id:" in bytes(proxy.to_server).lower(), "the client resumed the stream"
    assert slow.requests == 1, "the search ran once: the result came from the stored events"


async def test_without_an_event_store_a_dropped_stream_loses_the_result(
    served: tuple[TricklingServer, dict[str, str]],
    tmp_path: Path,
    http_servers: list[subprocess.Popen[bytes]],
) -> None:
    slow, env = served
    port = start(env | {"WEBREACH_MCP_EVENT_STORE": "none"}, tmp_path, http_servers)
    http = httpx2.AsyncClient(headers={"Host": f"127.0.0.1:{port}"}, timeout=DEADLINE_S)
    with CuttingProxy(port) as proxy:
        url = f"http://127.0.0.1:{proxy.port}/mcp"
        async with (
            http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
        ):

            async def cut_mid_search() -> None:
                deadline = time.monotonic() + DEADLINE_S
                while not slow.requests:
                    assert time.monotonic() < deadline, "the search never reached the provider"
                    await anyio.sleep(0.02)
                proxy.cut()

            async with anyio.create_task_group() as group:
                group.start_soon(cut_mid_search)
                with pytest.raises(MCPError, match="SSE stream"), anyio.fail_after(DEADLINE_S):
                    await client.call_tool("web_search", {"queries": ["slow"]})
    assert b"retry:" not in bytes(proxy.to_client), "no priming event without a store"
