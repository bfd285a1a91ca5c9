"""Jina Search: ``GET {base}/?q=`` as JSON; only titles and descriptions are asked for,
since fetching every result page would cost time and tokens that a search does not use."""

from __future__ import annotations

from typing import Any

from ...seam import SearchRequest, SearchResult, SearchSource
from .._json_api import field, optional_str
from .._plain_text import optional_text
from ..spec import BaseUrl, ProviderSettings, Secret
from ._keyed import KeyedProvider, keyed_spec
from ._sources import sources_from

__all__ = ["PROVIDER", "JinaSearchProvider", "JinaSettings"]


class JinaSearchProvider(KeyedProvider):
    id = "jina"
    default_base_url = "https://s.jina.ai"

    async def search(self, request: SearchRequest) -> SearchResult:
        data = await self._call(
            "GET",
            "/",
            headers={
                "Authorization": f"Bearer {self._api_key or ''}",
                "Accept": "application/json",
                "X-Respond-With": "no-content",
            },
            params={"q": request.query},
        )
        items = field(self.id, data, "data", list)
        return sources_from(items, _source)


def _source(url: str, item: dict[str, Any]) -> SearchSource:
    return SearchSource(
        url=url,
        title=optional_text(item, "title"),
        snippet=optional_text(item, "description"),
        published_at=optional_str(item, "date"),
    )


class JinaSettings(ProviderSettings):
    """``JINA_API_KEY``, and ``JINA_BASE_URL`` to use another endpoint than the official one."""

    jina_api_key: Secret = None
    jina_base_url: BaseUrl = None


PROVIDER = keyed_spec(JinaSearchProvider, JinaSettings)
