"""Request and result types shared by every provider and every consumer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = [
    "MAX_URL_LENGTH",
    "CacheScoped",
    "FetchBody",
    "FetchPrecheck",
    "FetchProvider",
    "FetchRequest",
    "FetchResult",
    "HtmlBody",
    "PdfBody",
    "SearchProvider",
    "SearchRequest",
    "SearchResult",
    "SearchSource",
    "TextBody",
]

MAX_URL_LENGTH = 2048
"""The longest URL a fetch accepts (SPEC §4): the tools' schema and the fetcher's check."""


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One query. Nothing provider-specific ever goes here."""

    query: str
    max_results: int | None = None

    def __post_init__(self) -> None:
        if self.max_results is not None and self.max_results < 1:
            raise ValueError(f"max_results must be at least 1, not {self.max_results}")


@dataclass(frozen=True, slots=True)
class SearchSource:
    """A found page. Only ``url`` is required; providers never invent missing fields."""

    url: str
    title: str | None = None
    snippet: str | None = None
    published_at: str | None = None


@dataclass(frozen=True, slots=True)
class SearchResult:
    """``content`` is a provider-generated answer, when it has one.

    ``provider`` is stamped by the runtime with the id of the provider that answered.
    """

    sources: tuple[SearchSource, ...]
    content: str | None = None
    truncated: bool = False
    provider: str | None = None


@dataclass(frozen=True, slots=True)
class FetchRequest:
    url: str


@dataclass(frozen=True, slots=True)
class HtmlBody:
    content: str


@dataclass(frozen=True, slots=True)
class TextBody:
    content: str


@dataclass(frozen=True, slots=True)
class PdfBody:
    content: str
    page_count: int | None = None


FetchBody = HtmlBody | TextBody | PdfBody
"""Closed union: consumers match exhaustively so a new kind fails type-checking until handled."""


@dataclass(frozen=True, slots=True)
class FetchResult:
    """What arrived. ``url`` is the final URL after allowed redirects; HTTP errors are data."""

    url: str
    status_code: int
    body: FetchBody
    truncated: bool = False
    provider: str | None = None


@runtime_checkable
class SearchProvider(Protocol):
    """A search backend. ``available()`` is cheap and local: it never does network I/O."""

    @property
    def id(self) -> str: ...

    def available(self) -> bool: ...

    async def search(self, request: SearchRequest) -> SearchResult: ...


@runtime_checkable
class FetchProvider(Protocol):
    """A fetch backend. ``available()`` is cheap and local: it never does network I/O."""

    @property
    def id(self) -> str: ...

    def available(self) -> bool: ...

    async def fetch(self, request: FetchRequest) -> FetchResult: ...


@runtime_checkable
class CacheScoped(Protocol):
    """Optional for a provider: the part of the cache its results may be stored in and read from.

    ``cache_scope()`` is a stable fingerprint (the same across processes, since a SQLite or redis
    cache outlives them) of everything that decides what the provider may return: for ``http``
    its allow list and size caps, for a search service its base URL (and model). The runtime puts
    it in every cache key, so only results obtained under the same policy, from the same
    endpoint, can come back: a page fetched with loopback opened on purpose never reaches a
    caller whose guard is closed, and a replay server's answers never reach the real service's
    callers. It must be cheap and local, and must never contain a secret.

    A provider without it keeps the plain ``(kind, id, request)`` key.
    """

    def cache_scope(self) -> str: ...


@runtime_checkable
class FetchPrecheck(Protocol):
    """Optional for a fetch provider: refuse a request before the cache is consulted.

    ``precheck(request)`` does no I/O. It raises the ``WebError`` that ``fetch(request)`` would
    raise for what can be judged from the URL alone (``WEB_INVALID_URL``, or ``WEB_BLOCKED_URL``
    for an address or name the provider's policy refuses), and returns None otherwise. The
    runtime calls it before every cache lookup, so a cached page is never served for a URL the
    provider would now refuse.
    """

    def precheck(self, request: FetchRequest) -> None: ...
