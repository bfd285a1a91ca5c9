"""The fetcher's transport (httpx2 on httpcore2's pool) dials only the address the guard vetted.

``PinnedTransport`` joins two libraries through their public names; these tests hold it to the
versions installed: requests go through the pinned pool, the socket really reaches the vetted
address when the system's DNS would answer another, and httpcore2's failures arrive as httpx2's.
"""

from __future__ import annotations

import asyncio
import tomllib
from collections.abc import AsyncIterator, Sequence
from importlib.metadata import version
from typing import Any

import httpcore2
import httpx2
import pytest
from packaging.requirements import Requirement

from loopback_dialer import LoopbackDialer
from repo_paths import ROOT
from webreach.net import AllowList
from webreach.net.pinned_transport import PinnedTransport
from webreach.net.pinning import PinningBackend
from webreach.seam import WebError, WebErrorCode

PUBLIC_IP = "93.184.215.14"  # accepted by the guard; the dialer below never puts it on the wire
PYPROJECT = ROOT / "pyproject.toml"


class Answering:
    """A tiny HTTP/1.1 server on ``address`` that answers every request with ``body`` and
    records each request's head."""

    def __init__(self, address: str, body: bytes, port: int = 0) -> None:
        self.address, self.body, self.port = address, body, port
        self.heads: list[bytes] = []
        self._server: asyncio.Server | None = None

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.heads.append(await reader.readuntil(b"\r\n\r\n"))
        length = str(len(self.body)).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: " + length + b"\r\n")
        writer.write(b"Connection: close\r\n\r\n" + self.body)
        await writer.drain()
        writer.close()

    async def __aenter__(self) -> Answering:
        self._server = await asyncio.start_server(self._answer, self.address, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()


@pytest.fixture
async def local_port() -> AsyncIterator[int]:
    async with Answering("127.0.0.1", b"pinned") as server:
        yield server.port


def _resolver(*answers: str) -> Any:
    async def resolve(host: str, port: int) -> Sequence[str]:
        return answers

    return resolve


async def test_httpx2_sends_requests_through_the_pinned_pool(local_port: int) -> None:
    dialer = LoopbackDialer(local_port)
    backend = PinningBackend(resolver=_resolver(PUBLIC_IP), inner=dialer)
    async with httpx2.AsyncClient(transport=PinnedTransport(backend)) as client:
        response = await client.get("http://pinned.test/")
    assert response.text == "pinned"
    assert dialer.dialled == [PUBLIC_IP]


async def test_the_socket_reaches_the_vetted_address_not_what_the_system_resolves() -> None:
    """``localhost`` resolves to 127.0.0.1 on this machine, where a decoy listens on the same
    port; the injected resolver answers 127.0.0.2, the only address allowed. The real dial
    (no test dialer) must land on 127.0.0.2, with the name kept in the Host header."""
    backend = PinningBackend(AllowList.parse("127.0.0.2"), resolver=_resolver("127.0.0.2"))
    async with (
        Answering("127.0.0.2", b"vetted") as vetted,
        Answering("127.0.0.1", b"decoy", port=vetted.port) as decoy,
        httpx2.AsyncClient(transport=PinnedTransport(backend)) as client,
    ):
        response = await client.get(f"http://localhost:{vetted.port}/")
    assert response.text == "vetted"
    assert decoy.heads == []
    assert f"Host: localhost:{vetted.port}".encode() in vetted.heads[0]


async def test_a_name_that_resolves_privately_is_refused_by_the_installed_pool() -> None:
    backend = PinningBackend(resolver=_resolver("10.0.0.7"))
    async with httpx2.AsyncClient(transport=PinnedTransport(backend)) as client:
        with pytest.raises(WebError) as caught:
            await client.get("http://rebind.test/")
    assert caught.value.code == WebErrorCode.WEB_BLOCKED_URL


async def test_a_refused_connection_is_httpx2s_connect_error() -> None:
    async with Answering("127.0.0.1", b"") as server:
        port = server.port  # closed on leaving: nothing listens there any more
    backend = PinningBackend(AllowList.parse("127.0.0.1"))
    async with httpx2.AsyncClient(transport=PinnedTransport(backend)) as client:
        with pytest.raises(httpx2.ConnectError) as caught:
            await client.get(f"http://127.0.0.1:{port}/")
    assert isinstance(caught.value.__cause__, httpcore2.ConnectError)


async def test_a_server_that_never_answers_is_httpx2s_read_timeout() -> None:
    gone = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # until the client gives up and closes
        gone.set()
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    backend = PinningBackend(AllowList.parse("127.0.0.1"))
    try:
        async with httpx2.AsyncClient(transport=PinnedTransport(backend), timeout=0.2) as client:
            with pytest.raises(httpx2.ReadTimeout):
                await client.get(f"http://127.0.0.1:{port}/")
        await gone.wait()
    finally:
        server.close()
        await server.wait_closed()


def test_the_dependencies_hold_the_adapted_libraries_to_the_tested_minor_version() -> None:
    """The httpcore2 transport builds its pool and requests by their constructors, and
    ``webreach.net.aio`` overrides aiohttp's unexported ``_release``; a new minor version must
    be tested here before the range admits it."""
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    ranges = {r.name: r.specifier for r in map(Requirement, declared)}
    for name in ("httpx2", "httpcore2", "aiohttp"):
        assert name in ranges, f"{name} is not a declared dependency"
        installed = version(name)
        assert ranges[name].contains(installed), f"{name} {installed} is outside {ranges[name]}"
        major, minor = installed.split(".")[:2]
        assert not ranges[name].contains(f"{major}.{int(minor) + 1}.0"), (
            f"{name}'s range {ranges[name]} admits an untested minor version"
        )
