"""The fetcher's httpx2 transport: httpcore2's pools, one per origin, dialling through the
pinning backend.

httpx2's ``AsyncHTTPTransport`` takes no network backend, but httpcore2's
``AsyncConnectionPool`` does, publicly; this transport is the thin layer between the two that
``AsyncHTTPTransport`` itself is (a request and a response converted field by field,
httpcore2's failures named as httpx2 names them). It uses only public names of both; httpx2
and httpcore2 are held to 2.16.x in the dependencies, and ``tests/net/test_net_pinning.py`` checks
it against them.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Iterator

import httpcore2
import httpx2

from .origin_pools import PER_ORIGIN, TOTAL, OriginPools
from .pinning import PinningBackend
from .tls import ssl_context_for

__all__ = ["PinnedTransport"]


_FAILURES: tuple[tuple[type[Exception], type[httpx2.TransportError]], ...] = (
    (httpcore2.ConnectTimeout, httpx2.ConnectTimeout),
    (httpcore2.ReadTimeout, httpx2.ReadTimeout),
    (httpcore2.WriteTimeout, httpx2.WriteTimeout),
    (httpcore2.PoolTimeout, httpx2.PoolTimeout),
    (httpcore2.TimeoutException, httpx2.TimeoutException),
    (httpcore2.ConnectError, httpx2.ConnectError),
    (httpcore2.ReadError, httpx2.ReadError),
    (httpcore2.WriteError, httpx2.WriteError),
    (httpcore2.NetworkError, httpx2.NetworkError),
    (httpcore2.ProxyError, httpx2.ProxyError),
    (httpcore2.UnsupportedProtocol, httpx2.UnsupportedProtocol),
    (httpcore2.RemoteProtocolError, httpx2.RemoteProtocolError),
    (httpcore2.LocalProtocolError, httpx2.LocalProtocolError),
    (httpcore2.ProtocolError, httpx2.ProtocolError),
)
"""Each httpcore2 failure and the httpx2 one that names it, the most specific first."""


@contextlib.contextmanager
def _as_httpx2_errors() -> Iterator[None]:
    """Re-raise an httpcore2 failure as its httpx2 counterpart (anything else passes through:
    the backend's own ``WebError`` refusals reach the fetcher as they are)."""
    try:
        yield
    except Exception as error:
        kind = next((named for core, named in _FAILURES if isinstance(error, core)), None)
        if kind is None:
            raise
        raise kind(str(error)) from error


class _Body(httpx2.AsyncByteStream):
    def __init__(self, inner: AsyncIterable[bytes]) -> None:
        self._inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx2_errors():
            async for chunk in self._inner:
                yield chunk

    async def aclose(self) -> None:
        close = getattr(self._inner, "aclose", None)
        if close is not None:
            with _as_httpx2_errors():
                await close()


class PinnedTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport whose pools (one per origin, HTTP/1.1, no proxy) dial only through
    ``backend``."""

    def __init__(
        self,
        backend: PinningBackend,
        *,
        verify: ssl.SSLContext | bool = True,
        per_origin: int = PER_ORIGIN,
        total: int = TOTAL,
    ) -> None:
        self._pools = OriginPools(
            backend, ssl_context_for(verify), per_origin=per_origin, total=total
        )

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        assert isinstance(request.stream, httpx2.AsyncByteStream)
        core_request = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx2_errors():
            response = await self._pools.handle_async_request(core_request)
        assert isinstance(response.stream, AsyncIterable)
        return httpx2.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pools.aclose()
