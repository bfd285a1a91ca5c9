"""The fetcher's httpx2 transport on aiohttp's pool, pinned through a vetting resolver.

aiohttp's connector asks its resolver for a host's addresses and dials exactly the ones it gets
back, keeping the host name for the Host header, TLS SNI and the certificate check; so the
resolver here is the pin: it resolves a name once (:meth:`PinningBackend.resolve`), refuses it
when any address is private (DNS rebinding cannot slip an address in between the check and the
dial), and hands aiohttp only vetted addresses. IP literals never reach a resolver; the fetcher
vets each hop's literal before any I/O. Only public names of aiohttp and httpx2 are used.

Under a wave of page reads this costs about half of httpx2 on httpcore2's pool per read
(``bench/fetch_pool.py``: a refused read 0.29 against 0.44 ms of CPU), and aiohttp's pool
waits in per-host queues, constant per request, with ``TOTAL`` and ``PER_ORIGIN`` as limits.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import aiohttp
import httpx2
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from .aio_failures import httpx_failure_name
from .origin_pools import PER_ORIGIN, TOTAL
from .pinning import PinningBackend
from .tls import ssl_context_for

__all__ = ["DNS_TTL", "KEEPALIVE", "PinnedAioTransport"]

KEEPALIVE = 5.0
"""Seconds an idle connection waits for the next page of its site (a search reads robots.txt,
then the page, on one connection) before it is closed."""
DNS_TTL = 10
"""Seconds a name's vetted addresses are reused by later connections to it (aiohttp's own
default): a search reads a site's robots.txt and then its page, and a wave reads many pages of
one site. Only vetted answers are kept, so a name that moves to a private address meanwhile
still reaches only the public one it was vetted at; the next lookup after the TTL refuses it."""
_HEADER_BYTES = 16_384
"""The longest header line a response may send, as h11 allowed (aiohttp's own is 8,190, which
real sites' policy and cookie headers pass)."""
_CHUNK = 65_536


class _VettingResolver(AbstractResolver):
    """Names resolved once and vetted by the pinning backend; the addresses aiohttp dials."""

    def __init__(self, backend: PinningBackend) -> None:
        self._backend = backend

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        addresses = await self._backend.resolve(host, port)
        return [
            ResolveResult(
                hostname=host,
                host=str(address),
                port=port,
                family=socket.AF_INET6 if address.version == 6 else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST | socket.AI_NUMERICSERV,
            )
            for address in addresses
        ]

    async def close(self) -> None:
        return None


@contextmanager
def _as_httpx2_errors() -> Iterator[None]:
    """Re-raise an aiohttp failure as the httpx2 one that names it; anything else (the
    resolver's ``WebError`` refusal) passes through as it is."""
    try:
        yield
    except Exception as error:
        name = httpx_failure_name(error)
        if name is None:
            raise
        kind: type[httpx2.TransportError] = getattr(httpx2, name)
        raise kind(str(error) or type(error).__name__) from error


class _Body(httpx2.AsyncByteStream):
    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx2_errors():
            async for chunk in self._response.content.iter_chunked(_CHUNK):
                yield chunk

    async def aclose(self) -> None:
        self._response.release()


class PinnedAioTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport on one aiohttp session (HTTP/1.1, no proxy, no cookies, bodies as
    the server sent them) whose connector dials only addresses ``backend`` vetted."""

    def __init__(
        self,
        backend: PinningBackend,
        *,
        verify: ssl.SSLContext | bool = True,
        per_origin: int = PER_ORIGIN,
        total: int = TOTAL,
        keepalive: float = KEEPALIVE,
        dns_ttl: int = DNS_TTL,
    ) -> None:
        self._backend = backend
        self._ssl: ssl.SSLContext | bool = ssl_context_for(verify) if verify else False
        self._limits = (per_origin, total, keepalive, dns_ttl)
        self._session: aiohttp.ClientSession | None = None

    def _opened(self) -> aiohttp.ClientSession:
        """The session, made on first use (inside the event loop, as aiohttp wants)."""
        if self._session is None:
            per_origin, total, keepalive, dns_ttl = self._limits
            connector = aiohttp.TCPConnector(
                limit=total,
                limit_per_host=per_origin,
                resolver=_VettingResolver(self._backend),
                use_dns_cache=dns_ttl > 0,
                ttl_dns_cache=dns_ttl or None,
                keepalive_timeout=keepalive,
                ssl=self._ssl,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                cookie_jar=aiohttp.DummyCookieJar(),
                auto_decompress=False,
                trust_env=False,
                skip_auto_headers=("Accept", "Accept-Encoding", "User-Agent"),
                max_line_size=_HEADER_BYTES,
                max_field_size=_HEADER_BYTES,
            )
        return self._session

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        content = await request.aread()
        with _as_httpx2_errors():
            response = await self._opened().request(
                request.method,
                URL(str(request.url), encoded=True),
                headers=request.headers.multi_items(),
                data=content or None,
                allow_redirects=False,
                timeout=_timeout(request.extensions.get("timeout", {})),
            )
        return httpx2.Response(
            status_code=response.status,
            headers=list(response.raw_headers),
            stream=_Body(response),
            extensions={
                "http_version": b"HTTP/1.1",
                "reason_phrase": (response.reason or "").encode("latin-1", "replace"),
            },
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


def _timeout(timeouts: dict[str, Any]) -> aiohttp.ClientTimeout:
    """httpx2's per-request timeouts as aiohttp's. aiohttp times waiting for a connection and
    dialling it as one (``connect``), bounded here by the pool timeout; the dial alone by the
    connect timeout, each read by the read timeout."""
    return aiohttp.ClientTimeout(
        total=None,
        connect=timeouts.get("pool"),
        sock_connect=timeouts.get("connect"),
        sock_read=timeouts.get("read"),
    )
