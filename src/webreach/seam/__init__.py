"""The web seam: one provider-neutral contract for search, fetch and image search.

It imports nothing else of webreach. Providers register here; tools and the server call
``search()``/``fetch()``/``image_search()``.
"""

from .cache import CacheStore
from .errors import InvalidValueError, WebError, WebErrorCode, WebreachError
from .runtime import AsyncCloseable, Disposer, WebRuntime, parse_provider_ids
from .tasks import cancel_and_wait, settled
from .types import (
    MAX_URL_LENGTH,
    CacheScoped,
    CallTimeout,
    FetchBody,
    FetchPrecheck,
    FetchProvider,
    FetchRequest,
    FetchResult,
    HtmlBody,
    ImageBytes,
    ImageInput,
    ImageMatch,
    ImageSearchProvider,
    ImageSearchRequest,
    ImageSearchResult,
    ImageUrl,
    PdfBody,
    SearchProvider,
    SearchRequest,
    SearchResult,
    SearchSource,
    TextBody,
    image_from_url,
)

__all__ = [
    "MAX_URL_LENGTH",
    "AsyncCloseable",
    "CacheScoped",
    "CacheStore",
    "CallTimeout",
    "Disposer",
    "FetchBody",
    "FetchPrecheck",
    "FetchProvider",
    "FetchRequest",
    "FetchResult",
    "HtmlBody",
    "ImageBytes",
    "ImageInput",
    "ImageMatch",
    "ImageSearchProvider",
    "ImageSearchRequest",
    "ImageSearchResult",
    "ImageUrl",
    "InvalidValueError",
    "PdfBody",
    "SearchProvider",
    "SearchRequest",
    "SearchResult",
    "SearchSource",
    "TextBody",
    "WebError",
    "WebErrorCode",
    "WebRuntime",
    "WebreachError",
    "cancel_and_wait",
    "image_from_url",
    "parse_provider_ids",
    "settled",
]
