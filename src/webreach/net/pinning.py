"""IP pinning: resolve a host once, vet every address, and dial only the vetted one.

The check and the connection use the same DNS answer, so a name that re-resolves to a private
address between the two (DNS rebinding) never reaches it. Only the socket's destination
changes: the URL, the Host header, TLS SNI, the certificate check and the pool key all keep the
original host name.

The fetcher's client is httpx2's. By default its connections are aiohttp's, which dials what
its resolver returns, so :meth:`PinningBackend.resolve` is that resolver (:mod:`.pinned_aio`).
A fetcher given its own dialer (tests) and the browser's guard proxy dial through this backend's
``connect_tcp`` instead, on httpcore2's pools (:mod:`.pinned_transport`), which take a network
backend publicly.
"""

from __future__ import annotations

import asyncio
import functools
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpcore2

from ..seam import WebError, WebErrorCode
from .addresses import IPAddress, parse_ip_literal
from .allow import AllowList
from .guard import address_allowed, blocked_error

__all__ = ["RESOLVER_THREADS", "PinningBackend", "Resolver", "system_resolver"]

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""``(host, port) -> IP literals``; injectable so tests can simulate DNS rebinding."""


RESOLVER_THREADS = 64
"""Lookups at once: each waits on the network, not the CPU, and a search resolves five names."""
_lookups = ThreadPoolExecutor(RESOLVER_THREADS, thread_name_prefix="webreach-resolve")
"""The loop's default executor holds min(32, cores + 4) threads that rendering, ranking and the
SQLite cache share: a lookup queued there waited behind every render queued before it."""


async def system_resolver(host: str, port: int) -> Sequence[str]:
    """The platform resolver (``getaddrinfo``), in threads of its own."""
    loop = asyncio.get_running_loop()
    lookup = functools.partial(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    infos = await loop.run_in_executor(_lookups, lookup)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class PinningBackend(httpcore2.AsyncNetworkBackend):
    """An httpcore2 network backend that connects only to addresses the guard accepts."""

    def __init__(
        self,
        allow: AllowList | None = None,
        *,
        resolver: Resolver | None = None,
        inner: httpcore2.AsyncNetworkBackend | None = None,
    ) -> None:
        self._allow = allow or AllowList()
        self._resolver = resolver or system_resolver
        self._inner = inner or httpcore2.AnyIOBackend()

    async def resolve(self, host: str, port: int, within: float | None = None) -> list[IPAddress]:
        """Resolve ``host`` once and return its addresses, all vetted, or raise ``WebError``."""
        literal = parse_ip_literal(host)
        addresses = [literal] if literal is not None else await self._lookup(host, port, within)
        refused = [a for a in addresses if not address_allowed(host, a, self._allow, port)]
        if refused:
            raise blocked_error(host, [str(a) for a in refused], self._allow, port)
        return addresses

    async def _lookup(self, host: str, port: int, within: float | None) -> list[IPAddress]:
        try:
            async with asyncio.timeout(within):
                answers = await self._resolver(host, port)
        except TimeoutError:
            raise httpcore2.ConnectTimeout(f"DNS lookup for {host} timed out") from None
        except OSError as error:
            reason = error.strerror or str(error) or type(error).__name__
            raise WebError(
                WebErrorCode.WEB_PROVIDER_ERROR, f"DNS lookup for {host} failed ({reason})"
            ) from None
        addresses = [parse_ip_literal(answer) for answer in answers]
        if not addresses:
            raise WebError(WebErrorCode.WEB_PROVIDER_ERROR, f"DNS lookup for {host} found nothing")
        if None in addresses:
            raise blocked_error(host, [str(answer) for answer in answers])
        return [a for a in addresses if a is not None]

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore2's interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        addresses = await self.resolve(host, port, timeout)
        options = list(socket_options) if socket_options is not None else None
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=options,
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as error:
                failure = error
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore2's interface)
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        raise WebError(WebErrorCode.WEB_BLOCKED_URL, "unix sockets are never dialled")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
