"""Kagi Search API v1: ``POST {base}/api/v1/search`` with a bearer key and ``workflow: "search"``.

``data`` holds the results by kind. Sources are the web results (``search``), then the videos,
news and infobox entries, whose titles carry a ``[Video]``, ``[News]`` or ``[Infobox]`` tag so a
reader can tell them from web pages; ``adjacent_question`` and ``related_search`` entries become
related questions and the first ``direct_answer`` the answer. ``limit`` caps each kind on its
own, so more sources than asked for may come back (the seam cuts them).

Filters: ``recency`` as ``filters.after``, a UTC date as far back as the seam's own recency
window reaches; ``country`` as ``filters.region``, the ISO 3166-1 code in lower case.
``meta.trace`` identifies the request for Kagi's support; a result has no place for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

import httpx

from ...seam import SearchRequest, SearchResult, SearchSource, WebError, WebErrorCode
from ...seam.filters import cutoff
from .._json_api import field, optional_field, optional_str, redact
from .._plain_text import optional_text
from ..spec import BaseUrl, ProviderSettings, RequestsPerSecond, Secret
from ._keyed import KeyedProvider, keyed_spec
from ._sources import url_of

__all__ = ["PROVIDER", "KagiSearchProvider", "KagiSettings"]

_DEFAULT_LIMIT = 10
_MAX_LIMIT = 40
_SOURCE_KINDS: tuple[tuple[str, str | None], ...] = (
    ("search", None),
    ("video", "[Video]"),
    ("news", "[News]"),
    ("infobox", "[Infobox]"),
)
"""The ``data`` lists that hold pages, in the order they become sources, with their title tag."""
_RELATED_KINDS = ("adjacent_question", "related_search")


def _utc_now() -> datetime:
    return datetime.now(UTC)


class KagiSearchProvider(KeyedProvider):
    id = "kagi"
    default_base_url = "https://kagi.com"
    filters = frozenset({"recency", "country"})

    def __init__(
        self,
        *,
        api_key: str | None,
        client: httpx.AsyncClient,
        base_url: str | None = None,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        """``clock`` tells the present moment (timezone-aware), which ``filters.after`` counts
        back from; tests pass a fixed one."""
        super().__init__(api_key=api_key, client=client, base_url=base_url)
        self._clock = clock

    async def search(self, request: SearchRequest) -> SearchResult:
        body: dict[str, Any] = {
            "query": request.query,
            "workflow": "search",
            "limit": min(request.breadth() or _DEFAULT_LIMIT, _MAX_LIMIT),
        }
        filters: dict[str, str] = {}
        if request.recency is not None:
            since = cutoff(request.recency, self._clock()).astimezone(UTC)
            filters["after"] = since.date().isoformat()
        if request.country is not None:
            filters["region"] = request.country.lower()
        if filters:
            body["filters"] = filters
        data = await self._call(
            "POST",
            "/api/v1/search",
            headers={"Authorization": f"Bearer {self._api_key or ''}"},
            json_body=body,
        )
        self._raise_on_reported_error(data)
        buckets = field(self.id, data, "data", dict)
        sources = [
            _source(url, item, tag)
            for kind, tag in _SOURCE_KINDS
            for item in self._bucket(buckets, kind)
            if (url := url_of(item))
        ]
        related = _unique(
            question
            for kind in _RELATED_KINDS
            for item in self._bucket(buckets, kind)
            if (question := _question(item))
        )
        return SearchResult(
            sources=tuple(sources),
            content=_answer(self._bucket(buckets, "direct_answer")),
            related=related,
        )

    def _bucket(self, buckets: dict[str, Any], kind: str) -> list[dict[str, Any]]:
        """The objects of one ``data`` list; an absent list is empty, a mistyped one an error."""
        items = optional_field(self.id, buckets, kind, list, [])
        return [item for item in items if isinstance(item, dict)]

    def _raise_on_reported_error(self, data: Any) -> None:
        """Kagi's envelope may report a failure in ``error[]`` instead of ``data``; its message
        says more than a missing ``data`` would."""
        if not isinstance(data, dict) or isinstance(data.get("data"), dict):
            return
        errors = data.get("error")
        first = errors[0] if isinstance(errors, list) and errors else None
        if not isinstance(first, dict):
            return
        message = optional_str(first, "msg") or optional_str(first, "message")
        if message is None:
            return
        raise WebError(
            WebErrorCode.WEB_PROVIDER_ERROR,
            f"{self.id}: the search failed ({redact(message, [self._api_key])})",
            provider=self.id,
        )


def _source(url: str, item: dict[str, Any], tag: str | None) -> SearchSource:
    title = optional_text(item, "title")
    if tag is not None:
        title = f"{tag} {title}" if title else tag
    return SearchSource(
        url=url,
        title=title,
        snippet=optional_text(item, "snippet"),
        published_at=optional_str(item, "time"),
    )


def _question(item: dict[str, Any]) -> str | None:
    """A related entry's question or search: ``props.question`` (adjacent questions),
    ``props.query`` (related searches), else its title."""
    props = item.get("props")
    if isinstance(props, dict):
        for key in ("question", "query"):
            if text := optional_text(props, key):
                return text
    return optional_text(item, "title")


def _answer(direct: list[dict[str, Any]]) -> str | None:
    """The first direct answer's snippet, else its title (a calculation's result, say)."""
    if not direct:
        return None
    return optional_text(direct[0], "snippet") or optional_text(direct[0], "title")


def _unique(texts: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(texts))


class KagiSettings(ProviderSettings):
    """``KAGI_API_KEY``, and ``KAGI_BASE_URL`` to use another endpoint than the official one."""

    kagi_api_key: Secret = None
    kagi_base_url: BaseUrl = None
    kagi_requests_per_second: RequestsPerSecond = None


PROVIDER = keyed_spec(KagiSearchProvider, KagiSettings)
