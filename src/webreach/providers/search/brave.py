"""Brave Search: ``GET {base}/res/v1/web/search``; snippets carry ``<strong>`` highlighting."""

from __future__ import annotations

from typing import Any

import httpx

from ...seam import SearchRequest, SearchResult, SearchSource
from ._http import field, optional_str, request_json
from ._text import optional_text, url_of

__all__ = ["BraveSearchProvider"]

_MAX_COUNT = 20
"""Brave rejects a larger ``count``."""


class BraveSearchProvider:
    id = "brave"

    def __init__(
        self,
        *,
        api_key: str | None,
        client: httpx.AsyncClient,
        base_url: str = "https://api.search.brave.com",
    ) -> None:
        self._api_key = api_key or None
        self._client = client
        self._base_url = base_url.rstrip("/")

    def __repr__(self) -> str:
        return f"BraveSearchProvider(base_url={self._base_url!r})"

    def available(self) -> bool:
        return self._api_key is not None

    async def search(self, request: SearchRequest) -> SearchResult:
        params: dict[str, str | int] = {"q": request.query}
        if request.max_results is not None:
            params["count"] = min(request.max_results, _MAX_COUNT)
        data = await request_json(
            self._client,
            self.id,
            "GET",
            f"{self._base_url}/res/v1/web/search",
            secrets=[self._api_key],
            headers={"X-Subscription-Token": self._api_key or "", "Accept": "application/json"},
            params=params,
        )
        if isinstance(data, dict) and "web" not in data and data.get("type") == "search":
            # Brave leaves out the whole ``web`` section when nothing was found.
            return SearchResult(sources=())
        web = field(self.id, data, "web", dict)
        items = field(self.id, web, "results", list)
        return SearchResult(
            sources=tuple(_source(url, item) for item in items if (url := url_of(item)))
        )


def _source(url: str, item: dict[str, Any]) -> SearchSource:
    return SearchSource(
        url=url,
        title=optional_text(item, "title"),
        snippet=optional_text(item, "description"),
        published_at=optional_str(item, "page_age") or optional_str(item, "age"),
    )
