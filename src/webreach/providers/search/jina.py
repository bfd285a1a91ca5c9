"""Jina Search: ``GET {base}/?q=`` as JSON; only titles and descriptions are asked for,
since fetching every result page would cost time and tokens that a search does not use.

Filters: ``site`` (one per included domain), ``gl`` (the country, lower-case) and ``hl`` (the
language); Jina takes no recency and no excluded domains.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...seam import SearchRequest, SearchResult
from .._json_api import field
from ..spec import BaseUrl, ProviderSettings, RequestsPerSecond, Secret
from ._keyed import KeyedProvider, keyed_spec
from ._sources import item_source, sources_of

__all__ = ["PROVIDER", "JinaSearchProvider", "JinaSettings"]


class JinaSearchProvider(KeyedProvider):
    id = "jina"
    default_base_url = "https://s.jina.ai"
    filters = frozenset({"include_domains", "country", "language"})

    async def search(self, request: SearchRequest) -> SearchResult:
        params: dict[str, str | int | Sequence[str]] = {"q": request.query}
        if request.include_domains:
            params["site"] = list(request.include_domains)
        if request.country is not None:
            params["gl"] = request.country.lower()
        if request.language is not None:
            params["hl"] = request.language
        data = await self._call(
            "GET",
            "/",
            headers={
                "Authorization": f"Bearer {self._api_key or ''}",
                "Accept": "application/json",
                "X-Respond-With": "no-content",
            },
            params=params,
        )
        items = field(self.id, data, "data", list)
        return SearchResult(sources=sources_of(items, _source))


_source = item_source(snippet="description", published="date")


class JinaSettings(ProviderSettings):
    """``JINA_API_KEY``, and ``JINA_BASE_URL`` to use another endpoint than the official one."""

    jina_api_key: Secret = None
    jina_base_url: BaseUrl = None
    jina_requests_per_second: RequestsPerSecond = None


PROVIDER = keyed_spec(JinaSearchProvider, JinaSettings)
