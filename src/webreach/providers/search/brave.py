"""Brave Search: ``GET {base}/res/v1/web/search``; snippets carry ``<strong>`` highlighting.

Filters: ``freshness`` (``pd``/``pw``/``pm``/``py``), ``country`` and ``search_lang`` in Brave's
own codes (a country or language Brave has no code for is not sent, and the result says so);
domains go into the query as ``site:`` operators, a hint the seam checks after.
"""

from __future__ import annotations

import dataclasses

from ...seam import Recency, SearchFilter, SearchRequest, SearchResult
from .._json_api import field
from ..spec import BaseUrl, ProviderSettings, RequestsPerSecond, Secret
from ._filters import with_sites
from ._keyed import KeyedProvider, keyed_spec
from ._sources import item_source, sources_of

__all__ = ["PROVIDER", "BraveSearchProvider", "BraveSettings"]

_MAX_COUNT = 20
"""Brave rejects a larger ``count``."""
_FRESHNESS: dict[Recency, str] = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
_COUNTRY_CODES = (
    "AR AU AT BE BR CA CL DK FI FR DE HK IN ID IT JP KR MY MX NL NZ NO CN PL PT PH RU SA ZA ES"
    " SE CH TW TR GB US"
)
_COUNTRIES = frozenset(_COUNTRY_CODES.split())
"""The ``country`` codes Brave documents; it rejects others."""
_LANGUAGE_CODES_AS_ISO = (
    "ar eu bn bg ca hr cs da nl en et fi fr gl de gu he hi hu is it kn ko lv lt ms ml mr nb pl"
    " pa ro ru sr sk sl es sv ta te th tr uk vi"
)
_LANGUAGES = frozenset(_LANGUAGE_CODES_AS_ISO.split())
"""The ``search_lang`` codes Brave documents that are ISO 639-1 codes as they are."""
_LANGUAGE_CODES = {"ja": "jp", "no": "nb", "zh": "zh-hans", "pt": "pt-pt"}
"""ISO 639-1 codes Brave spells its own way (``zh``/``pt`` by country, see ``_search_lang``)."""


def _search_lang(language: str, country: str | None) -> str | None:
    if language == "zh" and country in ("TW", "HK"):
        return "zh-hant"
    if language == "pt" and country == "BR":
        return "pt-br"
    return language if language in _LANGUAGES else _LANGUAGE_CODES.get(language)


class BraveSearchProvider(KeyedProvider):
    id = "brave"
    default_base_url = "https://api.search.brave.com"
    filters = frozenset({"recency", "country", "language"})

    async def search(self, request: SearchRequest) -> SearchResult:
        params: dict[str, str | int] = {"q": with_sites(request)}
        if request.max_results is not None:
            params["count"] = min(request.max_results, _MAX_COUNT)
        skipped: set[SearchFilter] = set()
        if request.recency is not None:
            params["freshness"] = _FRESHNESS[request.recency]
        if request.country is not None:
            if request.country in _COUNTRIES:
                params["country"] = request.country
            else:
                skipped.add("country")
        if request.language is not None:
            if lang := _search_lang(request.language, request.country):
                params["search_lang"] = lang
            else:
                skipped.add("language")
        result = await self._search(params)
        return dataclasses.replace(result, unfiltered=frozenset(skipped)) if skipped else result

    async def _search(self, params: dict[str, str | int]) -> SearchResult:
        data = await self._call(
            "GET",
            "/res/v1/web/search",
            headers={"X-Subscription-Token": self._api_key or "", "Accept": "application/json"},
            params=params,
        )
        if isinstance(data, dict) and "web" not in data and data.get("type") == "search":
            # Brave leaves out the whole ``web`` section when nothing was found.
            return SearchResult(sources=())
        web = field(self.id, data, "web", dict)
        items = field(self.id, web, "results", list)
        return SearchResult(sources=sources_of(items, _source))


_source = item_source(snippet="description", published=("page_age", "age"))


class BraveSettings(ProviderSettings):
    """``BRAVE_API_KEY``, and ``BRAVE_BASE_URL`` to use another endpoint than the official one."""

    brave_api_key: Secret = None
    brave_base_url: BaseUrl = None
    brave_requests_per_second: RequestsPerSecond = None


PROVIDER = keyed_spec(BraveSearchProvider, BraveSettings)
