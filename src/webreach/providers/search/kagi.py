"""Kagi Search API: ``GET {base}/api/v0/search``; ``data[]`` mixes search results (``t == 0``)
with related-search lists (``t == 1``), and only the former are sources."""

from __future__ import annotations

from typing import Any

import httpx

from ...seam import SearchRequest, SearchResult, SearchSource
from ._http import field, optional_str, request_json
from ._text import optional_text, url_of

__all__ = ["KagiSearchProvider"]


class KagiSearchProvider:
    id = "kagi"

    def __init__(
        self,
        *,
        api_key: str | None,
        client: httpx.AsyncClient,
        base_url: str = "https://kagi.com",
    ) -> None:
        self._api_key = api_key or None
        self._client = client
        self._base_url = base_url.rstrip("/")

    def __repr__(self) -> str:
        return f"KagiSearchProvider(base_url={self._base_url!r})"

    def available(self) -> bool:
        return self._api_key is not None

    async def search(self, request: SearchRequest) -> SearchResult:
        params: dict[str, str | int] = {"q": request.query}
        if request.max_results is not None:
            params["limit"] = request.max_results
        data = await request_json(
            self._client,
            self.id,
            "GET",
            f"{self._base_url}/api/v0/search",
            secrets=[self._api_key],
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
