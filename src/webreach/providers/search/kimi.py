"""Kimi (Moonshot) search: ``POST`` to the Kimi Code search endpoint, the one kimi-cli's
``SearchWeb`` tool calls; ``search_results[]`` with a site name, title, URL, snippet and date.

Pages are not crawled (``enable_page_crawling: false``): a source's snippet is all a search
shows, and reading a page is the fetch tool's work, with its own limits. The API takes no
filters; the seam applies recency and domains to the sources.

Keys, first set wins: ``MOONSHOT_SEARCH_API_KEY``, ``KIMI_SEARCH_API_KEY``, then the general
model keys ``KIMI_API_KEY`` (kimi-cli's) and ``MOONSHOT_API_KEY``, which other programs use too.
The endpoint: ``MOONSHOT_SEARCH_BASE_URL`` or ``KIMI_SEARCH_BASE_URL`` (the whole search URL,
as kimi-cli's ``services.moonshot_search.base_url``), else ``KIMI_BASE_URL`` + ``/search``
(kimi-cli's API base, ``https://api.kimi.com/coding/v1``).
"""

from __future__ import annotations

from ...seam import SearchRequest, SearchResult
from .._json_api import field
from ..spec import (
    BaseUrl,
    ProviderContext,
    ProviderSettings,
    ProviderSpec,
    RequestsPerSecond,
    Secret,
    secret,
)
from ._keyed import KeyedProvider
from ._sources import item_source, sources_of

__all__ = ["PROVIDER", "KimiSearchProvider", "KimiSettings"]

_DEFAULT_LIMIT = 10
_MAX_LIMIT = 20
"""kimi-cli's ``SearchWeb`` takes 1 to 20 results."""
_TIMEOUT_SECONDS = 30
"""How long the service may search, as kimi-cli asks."""


class KimiSearchProvider(KeyedProvider):
    """``base_url`` is the whole search endpoint, not an API base to add a path to."""

    id = "kimi"
    default_base_url = "https://api.kimi.com/coding/v1/search"

    async def search(self, request: SearchRequest) -> SearchResult:
        limit = min(max(request.breadth() or _DEFAULT_LIMIT, 1), _MAX_LIMIT)
        data = await self._call(
            "POST",
            "",
            headers={"Authorization": f"Bearer {self._api_key or ''}"},
            json_body={
                "text_query": request.query,
                "limit": limit,
                "enable_page_crawling": False,
                "timeout_seconds": _TIMEOUT_SECONDS,
            },
        )
        items = field(self.id, data, "search_results", list)
        sources = sources_of(items, _source)
        return SearchResult(sources=sources[:limit])


_source = item_source(snippet=("snippet", "content"), published="date")


class KimiSettings(ProviderSettings):
    """The search-only keys and endpoints (``MOONSHOT_SEARCH_*``, ``KIMI_SEARCH_*``), and Kimi's
    own ``KIMI_API_KEY`` / ``KIMI_BASE_URL`` (module docstring: which wins)."""

    moonshot_search_api_key: Secret = None
    kimi_search_api_key: Secret = None
    kimi_api_key: Secret = None
    moonshot_api_key: Secret = None
    moonshot_search_base_url: BaseUrl = None
    kimi_search_base_url: BaseUrl = None
    kimi_base_url: BaseUrl = None
    kimi_requests_per_second: RequestsPerSecond = None


_KEYS: tuple[tuple[str, bool], ...] = (
    ("moonshot_search_api_key", False),
    ("kimi_search_api_key", False),
    ("kimi_api_key", True),
    ("moonshot_api_key", True),
)
"""Each key setting in the order it wins, and whether it is a general model key."""


def _endpoint(values: KimiSettings) -> str | None:
    if values.moonshot_search_base_url or values.kimi_search_base_url:
        return values.moonshot_search_base_url or values.kimi_search_base_url
    if values.kimi_base_url:
        return values.kimi_base_url.rstrip("/") + "/search"
    return None


def _create(values: KimiSettings, context: ProviderContext) -> KimiSearchProvider:
    endpoint = _endpoint(values)
    for name, shared in _KEYS:
        if key := secret(getattr(values, name)):
            return KimiSearchProvider(
                api_key=key, client=context.client, base_url=endpoint, shared=shared
            )
    return KimiSearchProvider(api_key=None, client=context.client, base_url=endpoint)


PROVIDER = ProviderSpec("kimi", KimiSettings, _create)
