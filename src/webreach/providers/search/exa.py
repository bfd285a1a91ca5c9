"""Exa: ``POST {base}/search`` with highlights; a flat ``results[]``, no generated answer.

Highlights are asked for by ``maxCharacters``, as Exa documents (``numSentences`` and
``highlightsPerUrl`` are deprecated). A result with page ``text`` but no highlight (a request
for text, or Exa leaving highlights out) gets the text's opening as its snippet.

Filters: ``includeDomains``, ``excludeDomains``, ``startPublishedDate`` (the recency's oldest
moment) and ``userLocation`` (the country code); Exa has no language filter.
"""

from __future__ import annotations

from typing import Any

from ...seam import SearchRequest, SearchResult, SearchSource
from ...seam.filters import cutoff
from .._json_api import field, optional_str
from ..spec import BaseUrl, ProviderSettings, RequestsPerSecond, Secret
from ._keyed import KeyedProvider, keyed_spec

__all__ = ["PROVIDER", "ExaSearchProvider", "ExaSettings"]

SNIPPET_CHARS = 1000
"""Characters of highlight asked for per result, and of page text kept as a snippet."""


class ExaSearchProvider(KeyedProvider):
    id = "exa"
    default_base_url = "https://api.exa.ai"
    filters = frozenset({"recency", "include_domains", "exclude_domains", "country"})

    async def search(self, request: SearchRequest) -> SearchResult:
        body: dict[str, Any] = {
            "query": request.query,
            "type": "auto",
            "contents": {"highlights": {"maxCharacters": SNIPPET_CHARS}},
        }
        if request.max_results is not None:
            body["numResults"] = request.max_results
        if request.include_domains:
            body["includeDomains"] = list(request.include_domains)
        if request.exclude_domains:
            body["excludeDomains"] = list(request.exclude_domains)
        if request.recency is not None:
            since = cutoff(request.recency).replace(microsecond=0, tzinfo=None)
            body["startPublishedDate"] = since.isoformat() + ".000Z"
        if request.country is not None:
            body["userLocation"] = request.country
        data = await self._call(
            "POST",
            "/search",
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
    if snippet is None and isinstance(item.get("text"), str):
        snippet = _opening(item["text"])
    return SearchSource(
        url=item["url"],
        title=optional_str(item, "title"),
        snippet=snippet,
        published_at=optional_str(item, "publishedDate"),
    )


def _opening(text: str) -> str | None:
    """The first :data:`SNIPPET_CHARS` characters of ``text``, whitespace collapsed, cut at a
    word."""
    words = " ".join(text.split())
    if len(words) <= SNIPPET_CHARS:
        return words or None
    cut = words[:SNIPPET_CHARS].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + " …"


class ExaSettings(ProviderSettings):
    """``EXA_API_KEY``, and ``EXA_BASE_URL`` to use another endpoint than the official one."""

    exa_api_key: Secret = None
    exa_base_url: BaseUrl = None
    exa_requests_per_second: RequestsPerSecond = None


PROVIDER = keyed_spec(ExaSearchProvider, ExaSettings)
