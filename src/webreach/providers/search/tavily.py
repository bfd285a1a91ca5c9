"""Tavily: ``POST {base}/search`` asking for a generated answer beside the ranked results.

Filters: ``time_range``, ``include_domains``, ``exclude_domains`` and ``country``, which Tavily
takes as an English name (a country it has no name for is not sent, and the result says so);
Tavily has no language filter.
"""

from __future__ import annotations

from typing import Any

from ...seam import SearchFilter, SearchRequest, SearchResult
from .._json_api import field, optional_str
from ..spec import BaseUrl, ProviderSettings, RequestsPerSecond, Secret
from ._keyed import KeyedProvider, keyed_spec
from ._regions import COUNTRY_NAMES
from ._sources import item_source, sources_of

__all__ = ["PROVIDER", "TavilySearchProvider", "TavilySettings"]

_MAX_RESULTS = 20
"""Tavily rejects a larger ``max_results``."""


class TavilySearchProvider(KeyedProvider):
    id = "tavily"
    default_base_url = "https://api.tavily.com"
    filters = frozenset({"recency", "include_domains", "exclude_domains", "country"})

    async def search(self, request: SearchRequest) -> SearchResult:
        body: dict[str, Any] = {"query": request.query, "include_answer": True}
        if request.max_results is not None:
            body["max_results"] = min(request.max_results, _MAX_RESULTS)
        if request.recency is not None:
            body["time_range"] = request.recency
        if request.include_domains:
            body["include_domains"] = list(request.include_domains)
        if request.exclude_domains:
            body["exclude_domains"] = list(request.exclude_domains)
        skipped: frozenset[SearchFilter] = frozenset()
        if request.country is not None:
            if name := COUNTRY_NAMES.get(request.country):
                body["country"] = name
            else:
                skipped = frozenset({"country"})
        data = await self._call(
            "POST",
            "/search",
            headers={"Authorization": f"Bearer {self._api_key or ''}"},
            json_body=body,
        )
        items = field(self.id, data, "results", list)
        return SearchResult(
            sources=sources_of(items, _source),
            content=optional_str(data, "answer"),
            unfiltered=skipped,
        )


_source = item_source(snippet="content", published="published_date")


class TavilySettings(ProviderSettings):
    """``TAVILY_API_KEY``, and ``TAVILY_BASE_URL`` to use another endpoint than the official one."""

    tavily_api_key: Secret = None
    tavily_base_url: BaseUrl = None
    tavily_requests_per_second: RequestsPerSecond = None


PROVIDER = keyed_spec(TavilySearchProvider, TavilySettings)
