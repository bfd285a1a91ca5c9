"""httpx's interface on aiohttp's connection pool, for the search providers' client.

Under a few hundred concurrent searches httpx's own pool costs several times aiohttp's CPU per
request (``bench/load.py``; the upstream client measured the same). ``httpx-aiohttp``
adapts one to the other; this module corrects how it names failures, because it reports
a refused connection or a dropped one as a connect *timeout*, and providers tell users which,
and bounds the idle connections a wave of searches leaves behind (``IDLE_PER_HOST``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import httpx
from aiohttp.client_proto import ResponseHandler
from aiohttp.client_reqrep import ConnectionKey
from httpx_aiohttp import AiohttpTransport

from .aio_failures import httpx_failure_name
from .tls import shared_ssl_context

__all__ = ["IDLE_PER_HOST", "POOL_LIMITS", "AioTransport"]

IDLE_PER_HOST = 20
"""Idle keep-alive connections kept per host (a provider's endpoint); a connection released
beyond them is closed at once instead of lingering until the keep-alive expiry."""

POOL_LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=IDLE_PER_HOST)
"""Enough connections that a few hundred concurrent searches never queue for one; idle ones
expire after ``keepalive_expiry`` (5 s), and at most ``IDLE_PER_HOST`` of them wait per host."""


class _IdleBoundConnector(aiohttp.TCPConnector):
    """aiohttp's pool, keeping at most ``IDLE_PER_HOST`` idle connections per host.

    aiohttp bounds connections in use, not idle ones: after a wave of 200 concurrent searches
    all 200 sockets stay open until the keep-alive expiry (up to twice it, the clean-up runs
    that often), each holding a slot at the provider. ``httpx-aiohttp`` ignores
    ``max_keepalive_connections``, so the bound is applied here, where a connection is released:
    aiohttp's ``_release``, which it does not export, the one internal of aiohttp webreach
    uses (held to the tested minor version; ``tests/seam/test_seam_hostile.py`` checks the bound).
    """

    def _release(
        self, key: ConnectionKey, protocol: ResponseHandler, *, should_close: bool = False
    ) -> None:
        idle = self._conns.get(key)
        if idle is not None and len(idle) >= IDLE_PER_HOST:
            should_close = True
        super()._release(key, protocol, should_close=should_close)


def _httpx_error(error: BaseException, request: httpx.Request) -> httpx.HTTPError | None:
    """The httpx exception that says what an aiohttp failure was, or None if none fits."""
    name = httpx_failure_name(error)
    if name is None:
        return None
    kind: type[httpx.TransportError] = getattr(httpx, name)
    return kind(str(error) or type(error).__name__, request=request)


def _translated(error: Exception, request: httpx.Request) -> httpx.HTTPError | None:
    original = error.__cause__ if isinstance(error, httpx.HTTPError) else error
    return _httpx_error(original, request) if original is not None else None


class _Body(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, request: httpx.Request) -> None:
        self._inner = inner
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                yield chunk
        except Exception as error:
            better = _translated(error, self._request)
            if better is None:
                raise
            raise better from error

    async def aclose(self) -> None:
        await self._inner.aclose()


class AioTransport(AiohttpTransport):
    """``AiohttpTransport`` with failures named as httpx names them, a bounded idle pool, and no
    ambient settings. Its TLS context is the process's shared one (:mod:`.tls`)."""

    def __init__(self) -> None:
        super().__init__(
            verify=shared_ssl_context(), trust_env=False, limits=POOL_LIMITS, client=self._session
        )

    def _session(self) -> aiohttp.ClientSession:
        """The session, made on first use (inside the event loop, as aiohttp wants)."""
        connector = _IdleBoundConnector(
            limit=POOL_LIMITS.max_connections or 0,
            keepalive_timeout=POOL_LIMITS.keepalive_expiry,
            ssl=self.ssl_context,
        )
        return aiohttp.ClientSession(connector=connector)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = await super().handle_async_request(request)
        except Exception as error:
            better = _translated(error, request)
            if better is None:
                raise
            raise better from error
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_Body(response.stream, request),
            request=request,
            extensions=response.extensions,
        )
