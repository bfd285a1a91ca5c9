"""The outbound HTTP client factories: timeouts, an honest User-Agent, no ambient proxies.

Search providers get an httpx client on aiohttp's pool (:mod:`.aio`); the fetcher gets an httpx2
client on its pinned transport (:mod:`.pinned_transport`). Both keep httpx's interface.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import httpx2

from .._version import __version__
from ..seam.hops import HOPS_HEADER, current_hops
from .tls import shared_ssl_context

if TYPE_CHECKING:
    from .aio import AioTransport

__all__ = ["USER_AGENT", "create_client", "create_fetch_client", "stamp_hops"]

USER_AGENT = f"webreach/{__version__}"


def create_client(
    *,
    timeout: float = 30.0,
    proxy: str | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.AsyncClient:
    """Build an ``httpx.AsyncClient`` for providers.

    Its connections are aiohttp's (:class:`AioTransport`), which stay cheap under hundreds of
    concurrent searches; a ``proxy`` or an explicit ``transport`` uses httpx's own instead.
    Environment proxies are ignored (``trust_env=False``) so a stray ``HTTPS_PROXY`` cannot
    silently reroute API keys; pass ``proxy`` to use one on purpose. Every client verifies TLS
    with the process's one shared context, so building a client loads no certificates.
    """
    if transport is None and proxy is None:
        transport = _AioOnFirstUse()
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout),
        headers={"User-Agent": USER_AGENT, **(headers or {})},
        follow_redirects=False,
        trust_env=False,
        proxy=proxy,
        transport=transport,
        verify=shared_ssl_context(),
    )


class _AioOnFirstUse(httpx.AsyncBaseTransport):
    """:class:`AioTransport`, made (and aiohttp imported) by the first request: every runtime
    builds the providers' clients, and a command that never searches never needs aiohttp."""

    def __init__(self) -> None:
        self._inner: AioTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._inner is None:
            from .aio import AioTransport

            self._inner = AioTransport()
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()


def create_fetch_client(
    transport: httpx2.AsyncBaseTransport, *, timeout: float, headers: dict[str, str]
) -> httpx2.AsyncClient:
    """Build the fetcher's ``httpx2.AsyncClient`` on ``transport`` (its pinned one), with the
    providers' policy: redirects left to the fetcher, which vets each hop; nothing from the
    environment (proxies, certificates); TLS is the transport's."""
    return httpx2.AsyncClient(
        timeout=httpx2.Timeout(timeout),
        headers={"User-Agent": USER_AGENT, **headers},
        follow_redirects=False,
        trust_env=False,
        transport=transport,
    )


async def stamp_hops(request: httpx.Request) -> None:
    """An event hook of the provider clients: each request says how many webreach servers the
    search has passed through, plus this one (see :mod:`webreach.seam.hops`)."""
    request.headers[HOPS_HEADER] = str(current_hops() + 1)
