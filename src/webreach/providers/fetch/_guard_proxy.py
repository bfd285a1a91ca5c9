"""The guard every browser request passes: a SOCKS5 listener on 127.0.0.1, one per fetch.

The browser is told to send every connection here (``socks5://``, so it hands over the host
name and resolves nothing itself); each connection's host is vetted with the HTTP fetcher's own
guard, resolved once, and dialled at the vetted address through the same pinning backend. The
browser then speaks HTTP, TLS and WebSocket end to end inside the tunnel: nothing here parses
HTTP, and the certificate is checked by the browser against the host name as usual.

A refused connection is answered "not allowed by ruleset": the request fails inside the page,
which still renders. Bytes the page pulls in are counted; past the budget every tunnel closes
and no new one opens. Closing the proxy closes every tunnel it holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import struct
from collections.abc import Awaitable

import httpcore2

from ...net.allow import AllowList
from ...net.guard import check_host
from ...net.pinning import PinningBackend
from ...seam import WebError

__all__ = ["GuardProxy"]

logger = logging.getLogger("webreach.browser")

_SOCKS = 5
_NO_AUTH = 0
_CONNECT = 1
_IPV4, _NAME, _IPV6 = 1, 3, 4
_SUCCEEDED, _FAILURE, _NOT_ALLOWED, _UNREACHABLE = 0, 1, 2, 4
_CMD_UNSUPPORTED, _ATYP_UNSUPPORTED = 7, 8
_CHUNK = 64 * 1024
_HANDSHAKE_S = 10.0


class GuardProxy:
    """One fetch's way out: every connection vetted by ``allow`` and dialled by ``backend``."""

    def __init__(self, backend: PinningBackend, allow: AllowList, max_bytes: int) -> None:
        self._backend = backend
        self._allow = allow
        self._max_bytes = max_bytes
        self._server: asyncio.Server | None = None
        self._tunnels: set[asyncio.Task[None]] = set()
        self.received = 0
        """Bytes the page pulled in through every tunnel."""
        self.refused: list[str] = []
        """``host:port`` of each connection the guard refused, with why."""
        self.over_budget = False

    @property
    def url(self) -> str:
        assert self._server is not None, "the proxy is not started"
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"socks5://{host}:{port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)

    async def aclose(self) -> None:
        """Stop listening and end every tunnel, waiting until each has closed its sockets."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        tunnels = list(self._tunnels)
        for tunnel in tunnels:
            tunnel.cancel()
        if tunnels:
            await asyncio.gather(*tunnels, return_exceptions=True)
        if server is not None:
            await server.wait_closed()

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.create_task(self._tunnel(reader, writer))
        self._tunnels.add(task)
        task.add_done_callback(self._tunnels.discard)

    async def _tunnel(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: httpcore2.AsyncNetworkStream | None = None
        try:
            async with asyncio.timeout(_HANDSHAKE_S):
                target = await self._handshake(reader, writer)
            if target is None:
                return
            host, port = target
            upstream = await self._dial(host, port, writer)
            if upstream is None:
                return
            await _reply(writer, _SUCCEEDED)
            await self._pipe(reader, writer, upstream)
        except (OSError, TimeoutError, asyncio.IncompleteReadError, httpcore2.NetworkError):
            pass
        finally:
            if upstream is not None:
                await _quietly(upstream.aclose())
            writer.close()
            await _quietly(writer.wait_closed())

    async def _pipe(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        upstream: httpcore2.AsyncNetworkStream,
    ) -> None:
        """Both directions until either side ends, or the budget is spent."""
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self._pull(upstream, writer))
                group.create_task(_push(reader, upstream))
        except* (OSError, httpcore2.NetworkError, _BudgetSpent, _Ended):
            pass

    async def _handshake(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> tuple[str, int] | None:
        """The greeting and the CONNECT request of RFC 1928; None after a refusal sent."""
        version, count = await reader.readexactly(2)
        methods = await reader.readexactly(count)
        if version != _SOCKS or _NO_AUTH not in methods:
            writer.write(bytes((_SOCKS, 0xFF)))
            return None
        writer.write(bytes((_SOCKS, _NO_AUTH)))
        version, command, _reserved, kind = await reader.readexactly(4)
        if kind == _IPV4:
            host = str(ipaddress.IPv4Address(await reader.readexactly(4)))
        elif kind == _IPV6:
            host = str(ipaddress.IPv6Address(await reader.readexactly(16)))
        elif kind == _NAME:
            (length,) = await reader.readexactly(1)
            host = (await reader.readexactly(length)).decode("ascii", "replace")
        else:
            await _reply(writer, _ATYP_UNSUPPORTED)
            return None
        (port,) = struct.unpack("!H", await reader.readexactly(2))
        if version != _SOCKS or command != _CONNECT:
            await _reply(writer, _CMD_UNSUPPORTED)
            return None
        return host, port

    async def _dial(
        self, host: str, port: int, writer: asyncio.StreamWriter
    ) -> httpcore2.AsyncNetworkStream | None:
        """The vetted connection, or None after answering why not."""
        if self.over_budget:
            self.refused.append(f"{host}:{port} (the page's byte budget is spent)")
            await _reply(writer, _NOT_ALLOWED)
            return None
        try:
            check_host(host, self._allow, port)
            return await self._backend.connect_tcp(host, port, timeout=_HANDSHAKE_S)
        except WebError as error:
            self.refused.append(f"{host}:{port} ({error.message})")
            logger.debug("browser: refused %s:%s: %s", host, port, error.message)
            await _reply(writer, _NOT_ALLOWED)
        except (httpcore2.ConnectError, httpcore2.ConnectTimeout, OSError) as error:
            logger.debug("browser: could not reach %s:%s: %s", host, port, error)
            await _reply(writer, _UNREACHABLE)
        return None

    async def _pull(
        self, upstream: httpcore2.AsyncNetworkStream, writer: asyncio.StreamWriter
    ) -> None:
        while chunk := await upstream.read(_CHUNK):
            self.received += len(chunk)
            if self.received > self._max_bytes:
                self._spend_budget()
                raise _BudgetSpent
            writer.write(chunk)
            await writer.drain()
        raise _Ended

    def _spend_budget(self) -> None:
        """Past the budget nothing more comes in: every tunnel ends, none opens."""
        if not self.over_budget:
            self.over_budget = True
            logger.debug("browser: the page pulled in more than %d bytes", self._max_bytes)
            current = asyncio.current_task()
            for tunnel in list(self._tunnels):
                if tunnel is not current:
                    tunnel.cancel()


class _BudgetSpent(Exception):
    """The page has pulled in all it may; this tunnel ends."""


class _Ended(Exception):
    """One side closed: the other direction has nothing left to carry."""


async def _push(reader: asyncio.StreamReader, upstream: httpcore2.AsyncNetworkStream) -> None:
    while chunk := await reader.read(_CHUNK):
        await upstream.write(chunk)
    raise _Ended


async def _reply(writer: asyncio.StreamWriter, code: int) -> None:
    writer.write(bytes((_SOCKS, code, 0, _IPV4, 0, 0, 0, 0, 0, 0)))
    await writer.drain()


async def _quietly(closing: Awaitable[object]) -> None:
    with contextlib.suppress(Exception):  # a socket that failed while closing is closed
        await closing
