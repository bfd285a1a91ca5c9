"""Result caching for the runtime: a key-value store protocol and the codec of seam results.

Stores (memory, sqlite, redis) live outside the seam; they only keep bytes for a while.
A store that fails is switched off with one warning: a cache never fails a search or fetch.
Keys carry the provider's cache scope when it declares one (``CacheScoped``), so a result is
read back only by a provider with the policy and endpoint that produced it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any, Protocol, assert_never

from .types import (
    FetchBody,
    FetchResult,
    HtmlBody,
    ImageMatch,
    ImageSearchResult,
    PdfBody,
    SearchResult,
    SearchSource,
    TextBody,
)

__all__ = [
    "CacheStore",
    "GuardedCache",
    "decode_fetch",
    "decode_image_search",
    "decode_search",
    "encode",
]

logger = logging.getLogger("webreach.cache")


class CacheStore(Protocol):
    """Bytes by key, each kept for ``ttl`` seconds."""

    async def get(self, key: str) -> bytes | None: ...

    async def set(self, key: str, value: bytes, ttl: float) -> None: ...

    async def aclose(self) -> None: ...


def cache_key(*parts: object) -> str:
    """A fixed-length key, so long queries and URLs never hit a store's key limits."""
    raw = json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
    return "webreach:" + hashlib.sha256(raw.encode()).hexdigest()


def _body_json(body: FetchBody) -> dict[str, Any]:
    match body:
        case HtmlBody(content=content):
            return {"kind": "html", "content": content}
        case TextBody(content=content):
            return {"kind": "text", "content": content}
        case PdfBody(content=content, page_count=pages):
            return {"kind": "pdf", "content": content, "page_count": pages}
        case _:
            assert_never(body)


def _body_from(data: dict[str, Any]) -> FetchBody:
    kind, content = data["kind"], data["content"]
    if kind == "html":
        return HtmlBody(content)
    if kind == "text":
        return TextBody(content)
    if kind == "pdf":
        return PdfBody(content, data.get("page_count"))
    raise ValueError(f"unknown body kind {kind!r}")


def encode(result: SearchResult | FetchResult | ImageSearchResult) -> bytes:
    if isinstance(result, SearchResult):
        data: dict[str, Any] = {
            "sources": [[s.url, s.title, s.snippet, s.published_at] for s in result.sources],
            "content": result.content,
            "truncated": result.truncated,
        }
    elif isinstance(result, ImageSearchResult):
        data = {
            "matches": [
                [m.url, m.title, m.image_url, m.snippet, m.thumbnail_url] for m in result.matches
            ],
            "content": result.content,
            "truncated": result.truncated,
        }
    else:
        data = {
            "url": result.url,
            "status_code": result.status_code,
            "body": _body_json(result.body),
            "truncated": result.truncated,
        }
    return json.dumps(data, ensure_ascii=False).encode()


def decode_search(raw: bytes) -> SearchResult:
    data = json.loads(raw)
    return SearchResult(
        sources=tuple(SearchSource(*row) for row in data["sources"]),
        content=data["content"],
        truncated=data["truncated"],
    )


def decode_image_search(raw: bytes) -> ImageSearchResult:
    data = json.loads(raw)
    return ImageSearchResult(
        matches=tuple(ImageMatch(*row) for row in data["matches"]),
        content=data["content"],
        truncated=data["truncated"],
    )


def decode_fetch(raw: bytes) -> FetchResult:
    data = json.loads(raw)
    return FetchResult(
        url=data["url"],
        status_code=data["status_code"],
        body=_body_from(data["body"]),
        truncated=data["truncated"],
    )


class GuardedCache:
    """Wraps a store so that its first failure turns caching off with one warning."""

    def __init__(self, store: CacheStore, ttl: float) -> None:
        self._store: CacheStore | None = store
        self.ttl = ttl

    @property
    def active(self) -> bool:
        return self._store is not None and self.ttl > 0

    def _disable(self, error: Exception) -> None:
        logger.warning("cache disabled after a failure: %s: %s", type(error).__name__, error)
        self._store = None

    async def get(self, key: str) -> bytes | None:
        if self._store is None or self.ttl <= 0:
            return None
        try:
            return await self._store.get(key)
        except Exception as error:
            self._disable(error)
            return None

    async def set(self, key: str, value: bytes) -> None:
        if self._store is None or self.ttl <= 0:
            return
        try:
            await self._store.set(key, value, self.ttl)
        except Exception as error:
            self._disable(error)

    async def aclose(self) -> None:
        store, self._store = self._store, None
        if store is not None:
            try:
                await store.aclose()
            except Exception as error:
                logger.warning("closing the cache failed: %s: %s", type(error).__name__, error)
