"""Perplexity: a Sonar chat completion that searches as it answers.

Sources keep the response's order, so the answer's ``[n]`` markers still point at them; the
``citations`` URLs the markers number become the result's citations, titled from the search
results, and ``related_questions`` its related questions. ``num_search_results`` (how many
results Perplexity reads) stays apart from ``max_results`` (how many sources come back).

Filters: ``search_recency_filter``, ``search_domain_filter`` (included domains as they are,
excluded ones with a leading ``-``), ``search_language_filter`` and
``web_search_options.user_location.country``. The domain filter holds at most 20 entries and is
an allow list or a deny list, never both: what does not fit is applied here, to the sources.
"""

from __future__ import annotations

from typing import Any

from ...seam import (
    SearchCitation,
    SearchRequest,
    SearchResult,
    SearchSource,
    WebError,
    WebErrorCode,
)
from ...seam.filters import host_matches
from .._json_api import field, optional_str
from ..spec import (
    BaseUrl,
    NonEmpty,
    ProviderSettings,
    RequestsPerSecond,
    Secret,
)
from ._keyed import ModelProvider, keyed_spec

__all__ = ["PROVIDER", "PerplexitySearchProvider", "PerplexitySettings"]

_MAX_DOMAINS = 20
"""Perplexity's limit on ``search_domain_filter`` entries."""


class PerplexitySearchProvider(ModelProvider):
    id = "perplexity"
    default_base_url = "https://api.perplexity.ai"
    default_model = "sonar"
    model_setting = "perplexity_model"
    filters = frozenset({"recency", "include_domains", "exclude_domains", "country", "language"})

    async def search(self, request: SearchRequest) -> SearchResult:
        data = await self._call(
            "POST",
            "/chat/completions",
            headers={"Authorization": f"Bearer {self._api_key or ''}"},
            json_body=self._body(request),
        )
        message = self._first_message(data)
        sources = _on_sites(_sources(data), request)
        limit = request.max_results
        return SearchResult(
            sources=sources[:limit],
            truncated=limit is not None and len(sources) > limit,
            content=optional_str(message, "content"),
            citations=_citations(data),
            related=_strings(data.get("related_questions")),
        )

    def _body(self, request: SearchRequest) -> dict[str, Any]:
        """Related questions always asked for; breadth, length and temperature only when the
        request sets them, so Perplexity's own defaults apply otherwise."""
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": "user", "content": request.query}],
            "search_mode": "web",
            "return_related_questions": True,
        }
        if request.num_search_results is not None:
            body["num_search_results"] = request.num_search_results
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.recency is not None:
            body["search_recency_filter"] = request.recency
        if domains := _domain_filter(request):
            body["search_domain_filter"] = domains
        if request.language is not None:
            body["search_language_filter"] = [request.language]
        if request.country is not None:
            body["web_search_options"] = {"user_location": {"country": request.country}}
        return body

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


def _domain_filter(request: SearchRequest) -> list[str]:
    """The allow list when domains are included (it fits or it is not sent), else the deny list
    (its first 20)."""
    if request.include_domains:
        fits = len(request.include_domains) <= _MAX_DOMAINS
        return list(request.include_domains) if fits else []
    return [f"-{domain}" for domain in request.exclude_domains[:_MAX_DOMAINS]]


def _on_sites(
    sources: tuple[SearchSource, ...], request: SearchRequest
) -> tuple[SearchSource, ...]:
    """The sources within the request's domains: what ``search_domain_filter`` could not say
    (a deny list beside an allow list, more than 20 domains) is applied here."""
    if request.include_domains:
        sources = tuple(s for s in sources if host_matches(s.url, request.include_domains))
    if request.exclude_domains:
        sources = tuple(s for s in sources if not host_matches(s.url, request.exclude_domains))
    return sources


def _sources(data: dict[str, Any]) -> tuple[SearchSource, ...]:
    """``search_results`` carry titles and dates; bare ``citations`` URLs are the fallback."""
    results = data.get("search_results")
    if isinstance(results, list):
        sources = tuple(_source(item) for item in results if _has_url(item))
        if sources:
            return sources
    return tuple(SearchSource(url=url) for url in _strings(data.get("citations")))


def _citations(data: dict[str, Any]) -> tuple[SearchCitation, ...]:
    """The ``citations`` URLs, ``[1]`` first, each titled from the search result of that URL."""
    titles: dict[str, str | None] = {}
    results = data.get("search_results")
    for item in results if isinstance(results, list) else []:
        if _has_url(item):
            titles.setdefault(item["url"], optional_str(item, "title"))
    return tuple(
        SearchCitation(url=url, title=titles.get(url)) for url in _strings(data.get("citations"))
    )


def _strings(value: Any) -> tuple[str, ...]:
    """The non-blank strings of a list field; anything else is none."""
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, str) and item.strip())


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
    perplexity_requests_per_second: RequestsPerSecond = None


PROVIDER = keyed_spec(PerplexitySearchProvider, PerplexitySettings)
