"""Parallel Search: ``POST {base}/v1/search`` (the GA API; ``/v1beta/search`` is legacy) in
``fast`` mode, the query as both the objective and the one keyword search (cut at a word to
the 200 characters a keyword search may have); ``results[]`` of URL, title, ``publish_date``
and excerpts, which become the snippet (joined; the seam and the tools clip it). Limits and
filters go in ``advanced_settings``: ``max_results`` (at most 20), ``excerpt_settings``,
``location`` (the country) and ``source_policy``.

Filters, in ``source_policy``: ``after_date`` (the recency's first day), ``include_domains`` and
``exclude_domains``. Parallel takes at most 10 domains in each list and, given both, applies
only the included ones: an included list that does not fit is not sent, an excluded one is sent
cut to its first 10 or not at all beside included ones, and the result says so, so the seam
applies the rest to the sources.
"""

from __future__ import annotations

from typing import Any

from ...seam import SearchFilter, SearchRequest, SearchResult, SearchSource
from ...seam.filters import cutoff
from .._json_api import field, optional_str
from .._plain_text import optional_text
from ..spec import BaseUrl, ProviderSettings, RequestsPerSecond, Secret
from ._keyed import KeyedProvider, keyed_spec
from ._sources import sources_of

__all__ = ["PROVIDER", "ParallelSearchProvider", "ParallelSettings"]

_DEFAULT_RESULTS = 10
_MAX_RESULTS = 20
"""Parallel cuts a larger ``max_results`` to this, with a warning."""
_MAX_CHARS_PER_RESULT = 10_000
_MAX_DOMAINS = 10
"""Parallel refuses a ``source_policy`` list longer than this."""
_MAX_QUERY = 200
"""The longest keyword search Parallel takes; a longer query goes as the objective only."""


class ParallelSearchProvider(KeyedProvider):
    id = "parallel"
    default_base_url = "https://api.parallel.ai"
    filters = frozenset({"recency", "include_domains", "exclude_domains", "country"})

    async def search(self, request: SearchRequest) -> SearchResult:
        settings: dict[str, Any] = {
            "max_results": min(max(request.breadth() or _DEFAULT_RESULTS, 1), _MAX_RESULTS),
            "excerpt_settings": {"max_chars_per_result": _MAX_CHARS_PER_RESULT},
        }
        policy, skipped = _source_policy(request)
        if policy:
            settings["source_policy"] = policy
        if request.country is not None:
            settings["location"] = request.country
        body: dict[str, Any] = {
            "objective": request.query,
            "search_queries": [_keywords(request.query)],
            "mode": "fast",
            "advanced_settings": settings,
        }
        data = await self._call(
            "POST",
            "/v1/search",
            headers={"x-api-key": self._api_key or ""},
            json_body=body,
        )
        items = field(self.id, data, "results", list)
        return SearchResult(sources=sources_of(items, _source), unfiltered=skipped)


def _keywords(query: str) -> str:
    """``query`` as a keyword search: whole when it fits, else cut at a word."""
    if len(query) <= _MAX_QUERY:
        return query
    return query[:_MAX_QUERY].rsplit(" ", 1)[0] or query[:_MAX_QUERY]


def _source_policy(request: SearchRequest) -> tuple[dict[str, Any], frozenset[SearchFilter]]:
    """The ``source_policy`` to send, and the request's domain filters it could not say whole."""
    policy: dict[str, Any] = {}
    skipped: set[SearchFilter] = set()
    include, exclude = request.include_domains, request.exclude_domains
    if include:
        if len(include) <= _MAX_DOMAINS:
            policy["include_domains"] = list(include)
        else:
            skipped.add("include_domains")
    if exclude:
        if "include_domains" not in policy:
            policy["exclude_domains"] = list(exclude[:_MAX_DOMAINS])
        if "include_domains" in policy or len(exclude) > _MAX_DOMAINS:
            skipped.add("exclude_domains")
    if request.recency is not None:
        policy["after_date"] = cutoff(request.recency).date().isoformat()
    return policy, frozenset(skipped)


def _source(url: str, item: dict[str, Any]) -> SearchSource:
    excerpts = item.get("excerpts")
    parts = (
        [text.strip() for text in excerpts if isinstance(text, str) and text.strip()]
        if isinstance(excerpts, list)
        else []
    )
    return SearchSource(
        url=url,
        title=optional_text(item, "title"),
        snippet="\n\n".join(parts) or None,
        published_at=optional_str(item, "publish_date"),
    )


class ParallelSettings(ProviderSettings):
    """``PARALLEL_API_KEY``, and ``PARALLEL_BASE_URL`` to use another endpoint than the
    official one."""

    parallel_api_key: Secret = None
    parallel_base_url: BaseUrl = None
    parallel_requests_per_second: RequestsPerSecond = None


PROVIDER = keyed_spec(ParallelSearchProvider, ParallelSettings)
