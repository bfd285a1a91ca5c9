"""httpx's interface on aiohttp's connection pool, for the search providers' client.

Under a few hundred concurrent searches httpx's own pool costs several times aiohttp's CPU per
request (``bench/load.py``; SPEC §7 measured the same for the upstream). ``httpx-aiohttp``
adapts one to the other; this module only corrects how it names failures, because it reports
a refused connection or a dropped one as a connect *timeout*, and providers tell users which.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport

__all__ = ["POOL_LIMITS", "AioTransport"]

POOL_LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
"""Enough connections that a few hundred concurrent searches never queue for one."""


def _httpx_error(error: BaseException, request: httpx.Request) -> httpx.HTTPError | None:
    """The httpx exception that says what an aiohttp failure was, or None if none fits."""
    message = str(error) or type(error).__name__
    kind: type[httpx.TransportError]
    match error:
        case aiohttp.ConnectionTimeoutError():
            kind = httpx.ConnectTimeout
        case aiohttp.SocketTimeoutError():
            kind = httpx.ReadTimeout
        case aiohttp.ServerTimeoutError() | TimeoutError():
            kind = httpx.TimeoutException
        case aiohttp.ClientConnectorError() | aiohttp.ClientSSLError():
            kind = httpx.ConnectError
        case aiohttp.ClientPayloadError() | aiohttp.ServerDisconnectedError():
            kind = httpx.RemoteProtocolError
        case aiohttp.InvalidUrlClientError() | aiohttp.NonHttpUrlClientError():
            kind = httpx.UnsupportedProtocol
        case aiohttp.ClientError() | OSError():
            kind = httpx.ReadError
        case _:
            return None
    return kind(message, request=request)


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
    """``AiohttpTransport`` with failures named as httpx names them, and no ambient settings."""

    def __init__(self) -> None:
        super().__init__(trust_env=False, limits=POOL_LIMITS)

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
