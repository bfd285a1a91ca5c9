"""Kagi Search API: ``GET {base}/api/v0/search``; ``data[]`` mixes search results (``t == 0``)
with related-search lists (``t == 1``), and only the former are sources."""

from __future__ import annotations

from typing import Any

from ...seam import SearchRequest, SearchResult, SearchSource
from .._json_api import field, optional_str
from .._plain_text import optional_text
from ..spec import BaseUrl, ProviderSettings, Secret
from ._keyed import KeyedProvider, keyed_spec
from ._sources import url_of

__all__ = ["PROVIDER", "KagiSearchProvider", "KagiSettings"]


class KagiSearchProvider(KeyedProvider):
    id = "kagi"
    default_base_url = "https://kagi.com"

    async def search(self, request: SearchRequest) -> SearchResult:
        params: dict[str, str | int] = {"q": request.query}
        if request.max_results is not None:
            params["limit"] = request.max_results
        data = await self._call(
            "GET",
            "/api/v0/search",
            headers={"Authorization": f"Bot {self._api_key or ''}"},
            params=params,
        )
        items = field(self.id, data, "data", list)
        return SearchResult(
            sources=tuple(
                _source(url, item) for item in items if (url := url_of(item)) and item.get("t") == 0
            )
        )


def _source(url: str, item: dict[str, Any]) -> SearchSource:
    return SearchSource(
        url=url,
        title=optional_text(item, "title"),
        snippet=optional_text(item, "snippet"),
        published_at=optional_str(item, "published"),
    )


class KagiSettings(ProviderSettings):
    """``KAGI_API_KEY``, and ``KAGI_BASE_URL`` to use another endpoint than the official one."""

    kagi_api_key: Secret = None
    kagi_base_url: BaseUrl = None


PROVIDER = keyed_spec(KagiSearchProvider, KagiSettings)
