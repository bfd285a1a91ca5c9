"""One httpcore2 pool per origin, each entered through slots, so a pool never holds a queue.

httpcore2's pool rebuilds the set of its requests' connections on every request added or
finished, so requests queued past its connection limit make a wave quadratic (1,000 page reads
at once spent a quarter of their CPU there), and one pool for every site caps all of them
together. Here each origin (scheme, host, port) has a small pool of its own, a request waits for
a slot of its origin and then one of the process before it reaches that pool, and the waiting is
an ``asyncio.Semaphore``'s, constant per request. Pools of origins nobody is reading are closed
once more than a few are kept, so idle keep-alive sockets stay few after a burst.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections import OrderedDict
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field

import httpcore2

__all__ = ["ORIGINS_KEPT", "PER_ORIGIN", "TOTAL", "OriginPools"]

PER_ORIGIN = 16
"""Connections to one origin at once: a search's pages of one site never queue, and a wave of
turns reading one site does not open a hundred sockets to it."""
TOTAL = 100
"""Connections at once across every origin: each may hold a page of up to the byte limit, so
this bounds the fetcher's memory (512 took a 200-turn wave's peak RSS from 171 to 277 MiB, and
the reads the passage deadline cut had cost CPU for nothing)."""
IDLE_PER_ORIGIN = 2
"""Idle keep-alive connections kept per origin, for the next page of the same site."""
ORIGINS_KEPT = 10
"""Origins whose pools (and idle connections) stay open once nobody reads them."""
Origin = tuple[bytes, bytes, int | None]


@dataclass
class _OriginPool:
    pool: httpcore2.AsyncConnectionPool
    slots: asyncio.Semaphore
    reading: int = 0


@dataclass
class OriginPools:
    """The fetcher's pools by origin, dialling through ``backend``."""

    backend: httpcore2.AsyncNetworkBackend
    ssl_context: ssl.SSLContext
    keepalive_expiry: float | None = 5.0
    per_origin: int = PER_ORIGIN
    total: int = TOTAL
    _origins: dict[Origin, _OriginPool] = field(default_factory=dict)
    _idle: OrderedDict[Origin, None] = field(default_factory=OrderedDict)
    """Origins nobody reads, longest idle first: the ones closed past ``ORIGINS_KEPT``."""
    _slots: asyncio.Semaphore | None = None
    _closed: bool = False

    async def handle_async_request(self, request: httpcore2.Request) -> httpcore2.Response:
        """Send ``request`` on its origin's pool; its slots are held until the response's body
        is closed. Waiting for a slot counts against the request's pool timeout."""
        if self._closed:
            raise httpcore2.ConnectError("the fetcher's connections are closed")
        key = (request.url.scheme, request.url.host, request.url.port)
        origin = self._origin(key)
        self._idle.pop(key, None)
        origin.reading += 1
        release = _Release(self, key, origin)
        try:
            await self._acquire(origin, request)
            release.acquired = True
            response = await origin.pool.handle_async_request(request)
        except BaseException:
            await release()
            raise
        assert isinstance(response.stream, AsyncIterable)
        return httpcore2.Response(
            status=response.status,
            headers=response.headers,
            content=_Released(response.stream, release),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        self._closed = True
        origins = list(self._origins.values())
        self._origins.clear()
        self._idle.clear()
        for origin in origins:
            await origin.pool.aclose()

    def _origin(self, key: Origin) -> _OriginPool:
        origin = self._origins.get(key)
        if origin is None:
            pool = httpcore2.AsyncConnectionPool(
                ssl_context=self.ssl_context,
                max_connections=self.per_origin,
                max_keepalive_connections=IDLE_PER_ORIGIN,
                keepalive_expiry=self.keepalive_expiry,
                http1=True,
                http2=False,
                network_backend=self.backend,
            )
            origin = self._origins[key] = _OriginPool(pool, asyncio.Semaphore(self.per_origin))
        return origin

    async def _acquire(self, origin: _OriginPool, request: httpcore2.Request) -> None:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.total)
        timeouts = request.extensions.get("timeout", {})
        try:
            async with asyncio.timeout(timeouts.get("pool")):
                await origin.slots.acquire()
                try:
                    await self._slots.acquire()
                except BaseException:
                    origin.slots.release()
                    raise
        except TimeoutError:
            raise httpcore2.PoolTimeout("no connection to this site was free in time") from None

    async def finished(self, key: Origin, origin: _OriginPool, acquired: bool) -> None:
        """A request's slots back; pools of origins nobody reads closed past ``ORIGINS_KEPT``."""
        origin.reading -= 1
        if acquired:
            origin.slots.release()
            assert self._slots is not None
            self._slots.release()
        if origin.reading == 0:
            self._idle[key] = None
        while len(self._idle) > ORIGINS_KEPT:
            stale, _ = self._idle.popitem(last=False)
            await self._origins.pop(stale).pool.aclose()


class _Release:
    """Gives a request's slots back once, however its response ends."""

    def __init__(self, pools: OriginPools, key: Origin, origin: _OriginPool) -> None:
        self._pools, self._key, self._origin = pools, key, origin
        self.acquired = False
        self._done = False

    async def __call__(self) -> None:
        if self._done:
            return
        self._done = True
        await self._pools.finished(self._key, self._origin, self.acquired)


class _Released:
    """A response body that gives its request's slots back when it is closed."""

    def __init__(self, inner: AsyncIterable[bytes], release: _Release) -> None:
        self._inner = inner
        self._release = release

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            yield chunk

    async def aclose(self) -> None:
        try:
            close = getattr(self._inner, "aclose", None)
            if close is not None:
                await close()
        finally:
            with contextlib.suppress(Exception):
                await self._release()
