"""DuckDuckGo through the keyless ``ddgs`` library: the default that works with no configuration.

``ddgs`` is synchronous, so each search runs in a worker thread; a cancelled search stops
waiting at once, and the thread ends by itself within the library's own timeout.

Filters: ``region`` (``de-de``: country and language together, the half not given taken from
the other). Recency (``timelimit`` ``d``/``w``/``m``/``y``) and domains (``site:`` operators in
the query) are hints the seam checks after: several of the engines ``ddgs`` asks ignore them.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, Protocol

from ...seam import (
    Recency,
    SearchFilter,
    SearchProvider,
    SearchRequest,
    SearchResult,
    SearchSource,
    WebError,
    WebErrorCode,
)
from .._json_api import optional_str
from ..spec import NonEmpty, ProviderContext, ProviderSettings, ProviderSpec, RequestsPerSecond
from ._filters import locale, not_passed, with_sites

__all__ = ["PROVIDER", "DuckDuckGoSearchProvider", "DuckDuckGoSettings", "TextSearch"]


class TextSearch(Protocol):
    """``(query, max_results, **options) -> ddgs rows``: the library boundary, replaceable in
    tests. ``options`` are ``ddgs.text``'s ``region`` and ``timelimit``, passed only when set."""

    def __call__(self, query: str, max_results: int, /, **options: str) -> list[dict[str, Any]]: ...


_DEFAULT_MAX_RESULTS = 10
_TIMELIMIT: dict[Recency, str] = {"day": "d", "week": "w", "month": "m", "year": "y"}


class DuckDuckGoSearchProvider:
    id = "duckduckgo"
    filters: frozenset[SearchFilter] = frozenset({"country", "language"})

    def __init__(
        self,
        *,
        backend: str = "auto",
        timeout: float = 10.0,
        proxy: str | None = None,
        text_search: TextSearch | None = None,
    ) -> None:
        self._backend = backend
        self._timeout = timeout
        self._proxy = proxy
        self._text_search = text_search or self._ddgs_text

    def available(self) -> bool:
        return True

    def _ddgs_text(self, query: str, max_results: int, /, **options: str) -> list[dict[str, Any]]:
        from ddgs import DDGS

        ddgs = DDGS(proxy=self._proxy, timeout=max(1, round(self._timeout)))
        return ddgs.text(query, max_results=max_results, backend=self._backend, **options)

    async def search(self, request: SearchRequest) -> SearchResult:
        limit = request.max_results or _DEFAULT_MAX_RESULTS
        options: dict[str, str] = {}
        if (both := locale(request)) is not None:
            options["region"] = "-".join(both)
        if request.recency is not None:
            options["timelimit"] = _TIMELIMIT[request.recency]
        try:
            rows = await asyncio.to_thread(self._text_search, with_sites(request), limit, **options)
        except Exception as error:
            if _is_no_results(error):
                rows = []
            else:
                raise _map_error(error) from None
        result = SearchResult(sources=tuple(_source(row) for row in rows if _has_href(row)))
        if "region" not in options:
            result = dataclasses.replace(
                result, unfiltered=not_passed(request, "country", "language")
            )
        return result


def _is_no_results(error: Exception) -> bool:
    """``ddgs`` reports an empty result list as an exception; for us it is an empty result."""
    from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

    return (
        isinstance(error, DDGSException)
        and not isinstance(error, RatelimitException | TimeoutException)
        and "no results" in str(error).lower()
    )


_UNREACHABLE = "duckduckgo: the search engines could not be reached"
# What the library's HTTP client says, in its own words, when the network is the problem.
_CAUSES = (
    (
        ("dns", "name or service not known", "nodename nor servname", "failed to lookup address"),
        "DNS lookup failed; is this machine offline?",
    ),
    (("certificate", "tls", "ssl"), "the TLS handshake failed"),
    (
        ("connection refused", "network is unreachable", "no route to host", "connecterror"),
        "no connection; check the network, or set WEBREACH_PROXY",
    ),
)


def _map_error(error: Exception) -> WebError:
    """One line a person can act on: the cause (offline, refused, TLS, rate limit, timeout),
    not the library's text, which names whichever engine it happened to try last."""
    from ddgs.exceptions import RatelimitException, TimeoutException

    said = f"{type(error).__name__} {error}".lower()
    cause = next((hint for words, hint in _CAUSES if any(w in said for w in words)), None)
    if isinstance(error, RatelimitException):
        message = "duckduckgo: rate limited by the search engines; wait a little and retry"
    elif isinstance(error, TimeoutException | TimeoutError):
        message = "duckduckgo: the search timed out"
    elif cause is not None:
        message = f"{_UNREACHABLE} ({cause})"
    else:
        detail = " ".join(str(error).split())
        detail = detail if len(detail) <= 160 else detail[:159] + "…"
        message = f"duckduckgo: search failed ({type(error).__name__}: {detail})"
    return WebError(WebErrorCode.WEB_PROVIDER_ERROR, message, provider="duckduckgo")


def _has_href(row: Any) -> bool:
    return isinstance(row, dict) and isinstance(row.get("href"), str) and bool(row["href"])


def _source(row: dict[str, Any]) -> SearchSource:
    return SearchSource(
        url=row["href"], title=optional_str(row, "title"), snippet=optional_str(row, "body")
    )


class DuckDuckGoSettings(ProviderSettings):
    """``DUCKDUCKGO_BACKEND``: the ``ddgs`` engines to ask (``auto``, or a comma list)."""

    duckduckgo_backend: NonEmpty = "auto"
    duckduckgo_requests_per_second: RequestsPerSecond = None


def _create(settings: DuckDuckGoSettings, context: ProviderContext) -> DuckDuckGoSearchProvider:
    return DuckDuckGoSearchProvider(
        backend=settings.duckduckgo_backend, timeout=context.search_timeout, proxy=context.proxy
    )


PROVIDER: ProviderSpec[DuckDuckGoSettings, SearchProvider] = ProviderSpec(
    "duckduckgo", DuckDuckGoSettings, _create
)
