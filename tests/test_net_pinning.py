"""The one private httpx attribute webreach uses, held in ``replace_connection_pool``.

If an httpx upgrade moves ``AsyncHTTPTransport._pool``, these fail with the httpx version named,
instead of the fetcher quietly dialling whatever DNS answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import httpcore
import httpx
import pytest

from webreach.net.pinning import PinnedTransport, PinningBackend, replace_connection_pool
from webreach.seam import WebError, WebErrorCode

PUBLIC_IP = "93.184.215.14"  # accepted by the guard; the dialer below never puts it on the wire


class LoopbackDialer(httpcore.AsyncNetworkBackend):
    """Records the address it is asked to dial, and dials the local server instead."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.dialled: list[str] = []
        self._real = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.dialled.append(host)
        return await self._real.connect_tcp("127.0.0.1", self.port, timeout=timeout)

    async def sleep(self, seconds: float) -> None:
        await self._real.sleep(seconds)


@pytest.fixture
async def local_port() -> AsyncIterator[int]:
    """A tiny HTTP/1.1 server on 127.0.0.1 that answers every request with 200 "pinned"."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\npinned")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


def _resolver(*answers: str) -> Any:
    async def resolve(host: str, port: int) -> Sequence[str]:
        return answers

    return resolve


async def test_httpx_sends_requests_through_the_pinned_pool(local_port: int) -> None:
    dialer = LoopbackDialer(local_port)
    backend = PinningBackend(resolver=_resolver(PUBLIC_IP), inner=dialer)
    async with httpx.AsyncClient(transport=PinnedTransport(backend)) as client:
        try:
            response = await client.get("http://pinned.test/")
        except httpx.HTTPError as error:
            pytest.fail(
                f"httpx {httpx.__version__} did not send the request through the pool installed "
                f"by replace_connection_pool ({type(error).__name__}: {error}); the fetcher's "
                "IP pinning depends on it"
            )
    assert response.text == "pinned"
    assert dialer.dialled == [PUBLIC_IP], (
        f"httpx {httpx.__version__}: the pinned backend did not dial the vetted address"
    )


async def test_a_name_that_resolves_privately_is_refused_by_the_installed_pool() -> None:
    backend = PinningBackend(resolver=_resolver("10.0.0.7"))
    async with httpx.AsyncClient(transport=PinnedTransport(backend)) as client:
        with pytest.raises(WebError) as caught:
            await client.get("http://rebind.test/")
    assert caught.value.code == WebErrorCode.WEB_BLOCKED_URL


def test_a_transport_without_the_private_pool_stops_with_the_httpx_version() -> None:
    transport = httpx.AsyncHTTPTransport()
    del transport._pool
    pool = httpcore.AsyncConnectionPool()
    with pytest.raises(RuntimeError, match=rf"httpx {httpx.__version__} no longer keeps"):
        replace_connection_pool(transport, pool)
