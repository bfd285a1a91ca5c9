"""Brave Search: ``GET {base}/res/v1/web/search``; snippets carry ``<strong>`` highlighting."""

from __future__ import annotations

from typing import Any

from ...seam import SearchRequest, SearchResult, SearchSource
from .._json_api import field, optional_str
from .._plain_text import optional_text
from ..spec import BaseUrl, ProviderSettings, Secret
from ._keyed import KeyedProvider, keyed_spec
from ._sources import sources_from

__all__ = ["PROVIDER", "BraveSearchProvider", "BraveSettings"]

_MAX_COUNT = 20
"""Brave rejects a larger ``count``."""


class BraveSearchProvider(KeyedProvider):
    id = "brave"
    default_base_url = "https://api.search.brave.com"

    async def search(self, request: SearchRequest) -> SearchResult:
        params: dict[str, str | int] = {"q": request.query}
        if request.max_results is not None:
            params["count"] = min(request.max_results, _MAX_COUNT)
        data = await self._call(
            "GET",
            "/res/v1/web/search",
            headers={"X-Subscription-Token": self._api_key or "", "Accept": "application/json"},
            params=params,
        )
        if isinstance(data, dict) and "web" not in data and data.get("type") == "search":
            # Brave leaves out the whole ``web`` section when nothing was found.
            return SearchResult(sources=())
        web = field(self.id, data, "web", dict)
        items = field(self.id, web, "results", list)
        return sources_from(items, _source)


def _source(url: str, item: dict[str, Any]) -> SearchSource:
    return SearchSource(
        url=url,
        title=optional_text(item, "title"),
        snippet=optional_text(item, "description"),
        published_at=optional_str(item, "page_age") or optional_str(item, "age"),
    )


class BraveSettings(ProviderSettings):
    """``BRAVE_API_KEY``, and ``BRAVE_BASE_URL`` to use another endpoint than the official one."""

    brave_api_key: Secret = None
    brave_base_url: BaseUrl = None


PROVIDER = keyed_spec(BraveSearchProvider, BraveSettings)
