"""Perplexity: a Sonar chat completion that searches as it answers.

Sources keep the response's order, so the answer's ``[n]`` markers still point at them.
"""

from __future__ import annotations

from typing import Any

from ...seam import (
    SearchRequest,
    SearchResult,
    SearchSource,
    WebError,
    WebErrorCode,
)
from .._json_api import field, optional_str
from ..spec import (
    BaseUrl,
    NonEmpty,
    ProviderSettings,
    Secret,
)
from ._keyed import ModelProvider, keyed_spec

__all__ = ["PROVIDER", "PerplexitySearchProvider", "PerplexitySettings"]


class PerplexitySearchProvider(ModelProvider):
    id = "perplexity"
    default_base_url = "https://api.perplexity.ai"
    default_model = "sonar"
    model_setting = "perplexity_model"

    async def search(self, request: SearchRequest) -> SearchResult:
        data = await self._call(
            "POST",
            "/chat/completions",
            headers={"Authorization": f"Bearer {self._api_key or ''}"},
            json_body={
                "model": self._model,
                "messages": [{"role": "user", "content": request.query}],
            },
        )
        message = self._first_message(data)
        return SearchResult(sources=_sources(data), content=optional_str(message, "content"))

    def _first_message(self, data: Any) -> dict[str, Any]:
        choices = field(self.id, data, "choices", list)
        first = choices[0] if choices else None
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            raise WebError(
                WebErrorCode.WEB_PROVIDER_ERROR,
                f"{self.id}: unexpected response shape (no valid 'choices')",
                provider=self.id,
            )
        return message


def _sources(data: dict[str, Any]) -> tuple[SearchSource, ...]:
    """``search_results`` carry titles and dates; bare ``citations`` URLs are the fallback."""
    results = data.get("search_results")
    if isinstance(results, list):
        sources = tuple(_source(item) for item in results if _has_url(item))
        if sources:
            return sources
    citations = data.get("citations")
    if isinstance(citations, list):
        return tuple(SearchSource(url=url) for url in citations if isinstance(url, str) and url)
    return ()


def _has_url(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("url"), str) and bool(item["url"])


def _source(item: dict[str, Any]) -> SearchSource:
    return SearchSource(
        url=item["url"],
        title=optional_str(item, "title"),
        snippet=optional_str(item, "snippet"),
        published_at=optional_str(item, "date"),
    )


class PerplexitySettings(ProviderSettings):
    """``PERPLEXITY_API_KEY``, ``PERPLEXITY_MODEL`` and ``PERPLEXITY_BASE_URL``."""

    perplexity_api_key: Secret = None
    perplexity_base_url: BaseUrl = None
    perplexity_model: NonEmpty = PerplexitySearchProvider.default_model


PROVIDER = keyed_spec(PerplexitySearchProvider, PerplexitySettings)
