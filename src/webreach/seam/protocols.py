"""What a provider is, and what it may say about itself besides: the protocols the runtime
checks a registered provider against (the requests and results are :mod:`.types`')."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast, runtime_checkable

from .types import (
    FetchRequest,
    FetchResult,
    ImageSearchRequest,
    ImageSearchResult,
    SearchRequest,
    SearchResult,
)

if TYPE_CHECKING:
    from typing_extensions import TypeIs

__all__ = [
    "CacheScoped",
    "CallTimeout",
    "DocumentReader",
    "Explained",
    "FetchPrecheck",
    "FetchProvider",
    "ImageSearchProvider",
    "SearchProvider",
    "SharedCredential",
    "implements",
]

T = TypeVar("T")
_IMPLEMENTS: dict[tuple[type[Any], Callable[..., Any]], bool] = {}


def implements(provider: object, protocol: Callable[..., T]) -> TypeIs[T]:
    """``isinstance(provider, protocol)``, answered once per class: on Python 3.11 a runtime
    protocol check walks the protocol's members every time (about 6 µs), and the runtime makes
    several per search and per page. Providers define these methods on their class."""
    key = (type(provider), protocol)
    known = _IMPLEMENTS.get(key)
    if known is None:
        known = _IMPLEMENTS[key] = isinstance(provider, cast(type, protocol))
    return known


@runtime_checkable
class SearchProvider(Protocol):
    """A search backend. ``available()`` is cheap and local: it never does network I/O.

    A provider whose API takes some of :class:`SearchRequest`'s filters says which in a
    ``filters`` attribute (a ``frozenset`` of :data:`SearchFilter`); the seam applies the others
    it can after it. Without the attribute the provider takes none.
    """

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
class ImageSearchProvider(Protocol):
    """A reverse image search backend: the pages that show an image.

    ``available()`` is cheap and local: it never does network I/O. A provider that cannot take
    an image given this way (bytes, to a service that takes URLs only) raises
    ``WEB_UNSUPPORTED_CONTENT_TYPE`` saying so; an explicit fallback list then tries the next.
    """

    @property
    def id(self) -> str: ...

    def available(self) -> bool: ...

    async def image_search(self, request: ImageSearchRequest) -> ImageSearchResult: ...


@runtime_checkable
class SharedCredential(Protocol):
    """Optional for a provider whose key may belong to other programs (``OPENAI_API_KEY``).

    ``shared_credential()`` is true when that borrowed key is its only credential: the provider
    then runs when named or in the ``auto`` chain, but never counts in a bare configuration, so
    a key set for something else does not make ``webreach search`` ambiguous.
    """

    def shared_credential(self) -> bool: ...


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
class CallTimeout(Protocol):
    """Optional for a search or image search provider: the seconds one of its calls may take,
    in place of the runtime's timeout for its capability.

    A search that a model answers (``perplexity``, ``deepseek``) takes minutes where an index
    lookup takes seconds. ``call_timeout()`` is cheap and local; None leaves the provider
    bounded only by its own request timeouts.
    """

    def call_timeout(self) -> float | None: ...


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


@runtime_checkable
class DocumentReader(Protocol):
    """Optional for a fetch provider: read a document the caller already holds (a file a
    client uploaded) the way its fetches read a body of that type, within the same limits.

    ``read_document(data, media_type, name)`` returns the result a fetch of it would (``url``
    is ``name``): PDF text, or HTML or text. Past the provider's byte limit it raises
    ``WEB_FETCH_TOO_LARGE``; a type it cannot read, ``WEB_UNSUPPORTED_CONTENT_TYPE``.
    """

    async def read_document(
        self, data: bytes, media_type: str | None, name: str
    ) -> FetchResult: ...


@runtime_checkable
class Explained(Protocol):
    """Optional for a provider: why it is not available, in one line a person can act on
    (``playwright is not installed: pip install "webreach[browser]"``), or None when it is.

    Cheap and local like ``available()``. The runtime puts it in the error for a provider that
    is named but not available, and ``webreach config`` shows it.
    """

    def unavailable_reason(self) -> str | None: ...
