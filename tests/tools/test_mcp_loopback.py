"""``webreach mcp --http`` on a loopback address other than the SDK's three (127.0.0.2 here)
refuses a foreign Host (421) and a foreign Origin (403), so a DNS-rebinding page cannot drive
it; before, only 127.0.0.1, localhost and ::1 were checked. The real command runs, and the
official MCP SDK's client talks to it under the right Host."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp.client import Client

from cli_helpers import clean_env
from webreach.tools.mcp import server as mcp_server

ADDRESS = "127.0.0.2"
STARTUP_S = 30.0
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def free_port(address: str) -> int:
    with socket.socket() as probe:
        probe.bind((address, 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """A real ``webreach mcp --http --host 127.0.0.2``, stopped and reaped whatever happened."""
    try:
        port = free_port(ADDRESS)
    except OSError as error:
        pytest.skip(f"{ADDRESS} cannot be bound on this machine ({error})")
    log = tmp_path / "stderr.log"
    url = f"http://{ADDRESS}:{port}/mcp"
    command = [sys.executable, "-m", "webreach", "mcp", "--http", "--host", ADDRESS]
    with log.open("w") as errlog:
        process = subprocess.Popen(
            [*command, "--port", str(port)],
            env=clean_env(WEBREACH_CONFIG=""),
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errlog,
        )
    try:
        deadline = time.monotonic() + STARTUP_S
        while f"MCP server on {url}" not in log.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"webreach mcp --http did not start:\n{log.read_text()}")
            time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert "Traceback" not in log.read_text()


def test_a_foreign_host_or_origin_is_refused_and_the_bound_one_works(served: str) -> None:
    port = served.rsplit(":", 1)[1].split("/")[0]
    own = f"{ADDRESS}:{port}"
    for host in (f"rebind.example:{port}", f"127.0.0.1:{port}", f"{ADDRESS}:{int(port) + 1}"):
        misdirected = httpx.post(served, json=INITIALIZE, headers={**ACCEPT, "Host": host})
        assert misdirected.status_code == 421, (host, misdirected.text)
    for origin in ("http://rebind.example", f"http://rebind.example:{port}", "null"):
        forbidden = httpx.post(served, json=INITIALIZE, headers={**ACCEPT, "Origin": origin})
        assert forbidden.status_code == 403, (origin, forbidden.text)
    same = httpx.post(
        served, json=INITIALIZE, headers={**ACCEPT, "Host": own, "Origin": f"http://{own}"}
    )
    assert same.status_code == 200, same.text


async def test_the_sdk_client_works_under_the_bound_host(served: str) -> None:
    async with Client(served) as client:
        listed = await client.list_tools()
    assert {tool.name for tool in listed.tools} >= {"web_search", "web_fetch"}


@pytest.mark.parametrize(
    ("host", "hosts"),
    [
        ("127.0.0.1", ["127.0.0.1:8000", "localhost:8000"]),
        ("127.8.9.10", ["127.8.9.10:8000", "localhost:8000"]),
        ("::1", ["[::1]:8000", "localhost:8000"]),
        ("localhost", ["127.0.0.1:8000", "[::1]:8000", "localhost:8000"]),
    ],
)
def test_every_loopback_host_gets_its_own_address_and_port(host: str, hosts: list[str]) -> None:
    settings = mcp_server.transport_security(host, 8000)
    assert settings is not None and settings.enable_dns_rebinding_protection
    assert settings.allowed_hosts == hosts
    assert settings.allowed_origins == [f"http://{allowed}" for allowed in hosts]


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "mcp.example"])
def test_elsewhere_the_keys_protect_it(host: str) -> None:
    assert mcp_server.transport_security(host, 8000) is None
