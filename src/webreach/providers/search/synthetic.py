"""Synthetic: ``POST {base}/v2/search`` with only the query; ``results[]`` of URL, title, text
and an ISO 8601 ``published`` date.

The API takes no count and no filters: the sources are cut to the request's breadth here, and
the seam applies recency and domains to them.
"""

from __future__ import annotations

from ...seam import SearchRequest, SearchResult
from .._json_api import field
from ..spec import BaseUrl, ProviderSettings, RequestsPerSecond, Secret
from ._keyed import KeyedProvider, keyed_spec
from ._sources import item_source, sources_of

__all__ = ["PROVIDER", "SyntheticSearchProvider", "SyntheticSettings"]


class SyntheticSearchProvider(KeyedProvider):
    id = "synthetic"
    default_base_url = "https://api.synthetic.new"

    async def search(self, request: SearchRequest) -> SearchResult:
        data = await self._call(
            "POST",
            "/v2/search",
            headers={"Authorization": f"Bearer {self._api_key or ''}"},
            json_body={"query": request.query},
        )
        items = field(self.id, data, "results", list)
        sources = sources_of(items, _source)
        breadth = request.breadth()
        return SearchResult(sources=sources[:breadth] if breadth is not None else sources)


_source = item_source(snippet="text", published="published")


class SyntheticSettings(ProviderSettings):
    """``SYNTHETIC_API_KEY``, and ``SYNTHETIC_BASE_URL`` to use another endpoint than the
    official one."""

    synthetic_api_key: Secret = None
    synthetic_base_url: BaseUrl = None
    synthetic_requests_per_second: RequestsPerSecond = None


PROVIDER = keyed_spec(SyntheticSearchProvider, SyntheticSettings)
