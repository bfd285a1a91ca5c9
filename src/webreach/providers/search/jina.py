"""Jina Search: ``GET {base}/?q=`` as JSON; only titles and descriptions are asked for,
since fetching every result page would cost time and tokens that a search does not use."""

from __future__ import annotations

from typing import Any

import httpx

from ...seam import SearchRequest, SearchResult, SearchSource
from ._http import field, optional_str, request_json
from ._text import optional_text, url_of

__all__ = ["JinaSearchProvider"]


class JinaSearchProvider:
    id = "jina"

    def __init__(
        self,
        *,
        api_key: str | None,
        client: httpx.AsyncClient,
        base_url: str = "https://s.jina.ai",
    ) -> None:
        self._api_key = api_key or None
        self._client = client
        self._base_url = base_url.rstrip("/")

    def __repr__(self) -> str:
        return f"JinaSearchProvider(base_url={self._base_url!r})"

    def available(self) -> bool:
        return self._api_key is not None

    async def search(self, request: SearchRequest) -> SearchResult:
        data = await request_json(
            self._client,
            self.id,
            "GET",
            f"{self._base_url}/",
            secrets=[self._api_key],
            headers={
                "Authorization": f"Bearer {self._api_key or ''}",
                "Accept": "application/json",
                "X-Respond-With": "no-content",
            },
            params={"q": request.query},
        )
        items = field(self.id, data, "data", list)
        return SearchResult(
            sources=tuple(_source(url, item) for item in items if (url := url_of(item)))
        )


def _source(url: str, item: dict[str, Any]) -> SearchSource:
    return SearchSource(
        url=url,
        title=optional_text(item, "title"),
        snippet=optional_text(item, "description"),
        published_at=optional_str(item, "date"),
    )
