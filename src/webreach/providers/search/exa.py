"""Exa: ``POST {base}/search`` with highlights; a flat ``results[]``, no generated answer."""

from __future__ import annotations

from typing import Any

import httpx

from ...seam import SearchRequest, SearchResult, SearchSource
from ._http import field, optional_str, request_json

__all__ = ["ExaSearchProvider"]


class ExaSearchProvider:
    id = "exa"

    def __init__(
        self,
        *,
        api_key: str | None,
        client: httpx.AsyncClient,
        base_url: str = "https://api.exa.ai",
    ) -> None:
        self._api_key = api_key or None
        self._client = client
        self._base_url = base_url.rstrip("/")

    def __repr__(self) -> str:
        return f"ExaSearchProvider(base_url={self._base_url!r})"

    def available(self) -> bool:
        return self._api_key is not None

    async def search(self, request: SearchRequest) -> SearchResult:
        body: dict[str, Any] = {
            "query": request.query,
            "type": "auto",
            "contents": {"highlights": {"highlightsPerUrl": 1, "numSentences": 3}},
        }
        if request.max_results is not None:
            body["numResults"] = request.max_results
        data = await request_json(
            self._client,
            self.id,
            "POST",
            f"{self._base_url}/search",
            secrets=[self._api_key],
            headers={"x-api-key": self._api_key or ""},
            json_body=body,
        )
        items = field(self.id, data, "results", list)
        return SearchResult(sources=tuple(_source(item) for item in items if _has_url(item)))


def _has_url(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("url"), str) and bool(item["url"])


def _source(item: dict[str, Any]) -> SearchSource:
    highlights = item.get("highlights")
    snippet = None
    if isinstance(highlights, list) and highlights and isinstance(highlights[0], str):
        snippet = highlights[0].strip() or None
    return SearchSource(
        url=item["url"],
        title=optional_str(item, "title"),
        snippet=snippet,
        published_at=optional_str(item, "publishedDate"),
    )
