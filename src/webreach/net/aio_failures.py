"""What an aiohttp failure is called in httpx's vocabulary, for the adapters that put httpx's
interface (httpx 0.28 for providers, httpx2 for the fetcher) on aiohttp's pool.

Both libraries name their failures alike (``ConnectError``, ``ReadTimeout``…), so one table
serves both; a refused or dropped connection is a connect or protocol error, never a timeout,
because providers and the fetcher tell users which it was.
"""

from __future__ import annotations

import aiohttp

__all__ = ["httpx_failure_name"]


def httpx_failure_name(error: BaseException) -> str | None:
    """The name of the httpx (or httpx2) exception that says what ``error`` was, or None when
    it is not a transport failure (a ``WebError`` refusal, a cancellation)."""
    match error:
        case aiohttp.ConnectionTimeoutError():
            return "ConnectTimeout"
        case aiohttp.SocketTimeoutError():
            return "ReadTimeout"
        case aiohttp.ServerTimeoutError() | TimeoutError():
            return "TimeoutException"
        case aiohttp.ClientConnectorError() | aiohttp.ClientSSLError():
            return "ConnectError"
        case aiohttp.ClientPayloadError() | aiohttp.ServerDisconnectedError():
            return "RemoteProtocolError"
        case aiohttp.ClientResponseError():
            return "RemoteProtocolError"
        case aiohttp.InvalidUrlClientError() | aiohttp.NonHttpUrlClientError():
            return "UnsupportedProtocol"
        case aiohttp.ClientError() | OSError():
            return "ReadError"
        case _:
            return None
