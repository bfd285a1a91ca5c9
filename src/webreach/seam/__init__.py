"""The web seam: one provider-neutral contract for search and fetch.

It imports nothing else of webreach. Providers register here; tools call ``search()``/``fetch()``.
"""

from .cache import CacheStore
from .errors import WebError, WebErrorCode, WebreachError
from .runtime import AsyncCloseable, Disposer, WebRuntime, parse_provider_ids
from .tasks import cancel_and_wait, settled
from .types import (
    MAX_URL_LENGTH,
    CacheScoped,
    FetchBody,
    FetchPrecheck,
    FetchProvider,
    FetchRequest,
    FetchResult,
    HtmlBody,
    PdfBody,
    SearchProvider,
    SearchRequest,
    SearchResult,
    SearchSource,
    TextBody,
)

__all__ = [
    "MAX_URL_LENGTH",
    "AsyncCloseable",
    "CacheScoped",
    "CacheStore",
    "Disposer",
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
    "WebError",
    "WebErrorCode",
    "WebRuntime",
    "WebreachError",
    "cancel_and_wait",
    "parse_provider_ids",
    "settled",
]
