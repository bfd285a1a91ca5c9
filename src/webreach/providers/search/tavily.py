"""Tavily: ``POST {base}/search`` asking for a generated answer beside the ranked results."""

from __future__ import annotations

from typing import Any

import httpx

from ...seam import SearchRequest, SearchResult, SearchSource
from ._http import field, optional_str, request_json
from ._text import optional_text, url_of

__all__ = ["TavilySearchProvider"]

_MAX_RESULTS = 20
"""Tavily rejects a larger ``max_results``."""


class TavilySearchProvider:
    id = "tavily"

    def __init__(
        self,
        *,
        api_key: str | None,
        client: httpx.AsyncClient,
        base_url: str = "https://api.tavily.com",
    ) -> None:
        self._api_key = api_key or None
        self._client = client
        self._base_url = base_url.rstrip("/")

    def __repr__(self) -> str:
        return f"TavilySearchProvider(base_url={self._base_url!r})"

    def available(self) -> bool:
        return self._api_key is not None

    async def search(self, request: SearchRequest) -> SearchResult:
        body: dict[str, Any] = {"query": request.query, "include_answer": True}
        if request.max_results is not None:
            body["max_results"] = min(request.max_results, _MAX_RESULTS)
        data = await request_json(
            self._client,
            self.id,
            "POST",
            f"{self._base_url}/search",
            secrets=[self._api_key],
            headers={"Authorization": f"Bearer {self._api_key or ''}"},
            json_body=body,
        )
        items = field(self.id, data, "results", list)
        return SearchResult(
            sources=tuple(_source(url, item) for item in items if (url := url_of(item))),
            content=optional_str(data, "answer"),
        )


def _source(url: str, item: dict[str, Any]) -> SearchSource:
    return SearchSource(
        url=url,
        title=optional_text(item, "title"),
        snippet=optional_text(item, "content"),
        published_at=optional_str(item, "published_date"),
    )
