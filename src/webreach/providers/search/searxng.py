"""SearXNG, usually self-hosted: ``GET {base}/search?format=json``, with an optional token
for instances behind an authenticating proxy.

SearXNG takes no result count: the results are cut to the request's breadth (10 by default,
at most 20). Its ``suggestions`` become related searches.

Filters: ``language`` (``de``, or ``de-DE`` with a country; a country alone takes its main
language). Recency and domains are hints the seam checks after: SearXNG documents ``time_range``
as ``day``/``month``/``year`` for the engines that support it (a week asks for a month), and
``site:`` operators reach only the engines that honour them.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import httpx

from ...seam import (
    Recency,
    SearchFilter,
    SearchProvider,
    SearchRequest,
    SearchResult,
    WebError,
    WebErrorCode,
)
from .._json_api import field, request_json
from .._plain_text import plain_text
from ..spec import (
    BaseUrl,
    ProviderContext,
    ProviderSettings,
    ProviderSpec,
    RequestsPerSecond,
    Secret,
    secret,
)
from ._filters import locale, not_passed, with_sites
from ._sources import item_source, sources_of

__all__ = ["PROVIDER", "SearxngSearchProvider", "SearxngSettings"]

_TIME_RANGE: dict[Recency, str] = {"day": "day", "week": "month", "month": "month", "year": "year"}
_DEFAULT_COUNT = 10
_MAX_COUNT = 20


class SearxngSearchProvider:
    id = "searxng"
    filters: frozenset[SearchFilter] = frozenset({"country", "language"})

    def __init__(
        self,
        *,
        base_url: str | None,
        client: httpx.AsyncClient,
        token: str | None = None,
    ) -> None:
        self._base_url = base_url.rstrip("/") if base_url else None
        self._client = client
        self._token = token or None

    def __repr__(self) -> str:
        return f"SearxngSearchProvider(base_url={self._base_url!r})"

    def available(self) -> bool:
        return self._base_url is not None

    def cache_scope(self) -> str:
        """The instance: two SearXNG instances answer differently (see ``seam.CacheScoped``)."""
        return json.dumps({"base_url": self._base_url}, separators=(",", ":"))

    async def search(self, request: SearchRequest) -> SearchResult:
        if self._base_url is None:
            raise WebError(
                WebErrorCode.WEB_PROVIDER_UNAVAILABLE,
                "searxng: no instance configured; set SEARXNG_BASE_URL",
                provider=self.id,
            )
        headers = {"Accept": "application/json"}
        if self._token is not None:
            headers["Authorization"] = f"Bearer {self._token}"
        try:
            data = await request_json(
                self._client,
                self.id,
                "GET",
                f"{self._base_url}/search",
                secrets=[self._token],
                headers=headers,
                params=_params(request),
            )
        except WebError as error:
            if error.status != 403:
                raise
            # An instance answers 403 to a format its settings.yml does not enable.
            raise WebError(
                error.code,
                f"{error.message}, or enable the json format (search.formats in settings.yml)",
                provider=self.id,
                status=error.status,
            ) from None
        items = field(self.id, data, "results", list)
        found = sources_of(items, _source)
        count = min(request.breadth() or _DEFAULT_COUNT, _MAX_COUNT)
        result = SearchResult(
            sources=found[:count],
            truncated=len(found) > count,
            related=_suggestions(data),
        )
        if (request.country or request.language) and locale(request) is None:
            result = dataclasses.replace(result, unfiltered=not_passed(request, "country"))
        return result


def _params(request: SearchRequest) -> dict[str, str | int]:
    params: dict[str, str | int] = {"q": with_sites(request), "format": "json"}
    if request.recency is not None:
        params["time_range"] = _TIME_RANGE[request.recency]
    if request.country is not None and (both := locale(request)) is not None:
        params["language"] = f"{both[1]}-{both[0].upper()}"
    elif request.language is not None:
        params["language"] = request.language
    return params


def _suggestions(data: dict[str, Any]) -> tuple[str, ...]:
    """The instance's suggested searches (a list of strings), each once."""
    suggestions = data.get("suggestions")
    if not isinstance(suggestions, list):
        return ()
    texts = (plain_text(item) for item in suggestions if isinstance(item, str))
    return tuple(dict.fromkeys(text for text in texts if text))


_source = item_source(snippet="content", published="publishedDate")


class SearxngSettings(ProviderSettings):
    """``SEARXNG_BASE_URL``, the instance (unset: unavailable), and an optional
    ``SEARXNG_API_KEY`` sent as a bearer token."""

    searxng_base_url: BaseUrl = None
    searxng_api_key: Secret = None
    searxng_requests_per_second: RequestsPerSecond = None


def _create(settings: SearxngSettings, context: ProviderContext) -> SearxngSearchProvider:
    return SearxngSearchProvider(
        base_url=settings.searxng_base_url,
        token=secret(settings.searxng_api_key),
        client=context.client,
    )


PROVIDER: ProviderSpec[SearxngSettings, SearchProvider] = ProviderSpec(
    "searxng", SearxngSettings, _create
)
