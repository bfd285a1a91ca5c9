"""The web seam: one provider-neutral contract for search and fetch.

It imports nothing else of webreach. Providers register here; tools call ``search()``/``fetch()``.
"""

from .cache import CacheStore
from .errors import WebError, WebErrorCode
from .runtime import AsyncCloseable, Disposer, WebRuntime, parse_provider_ids
from .types import (
    FetchBody,
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
    "AsyncCloseable",
    "CacheStore",
    "Disposer",
    "FetchBody",
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
    "parse_provider_ids",
]
