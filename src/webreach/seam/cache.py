"""Result caching for the runtime: a key-value store protocol and the codec of seam results.

Stores (memory, sqlite, redis) live outside the seam; they only keep bytes for a while.
A store that fails is left alone with one warning and tried again after a back-off (1 s,
doubling to 30 s), so a cache never fails a search or fetch and comes back with its Redis.
Keys carry the provider's cache scope when it declares one (``CacheScoped``), so a result is
read back only by a provider with the policy and endpoint that produced it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from typing import Any, Protocol, assert_never, runtime_checkable

from .types import (
    FetchBody,
    FetchResult,
    HtmlBody,
    ImageMatch,
    ImageSearchResult,
    PdfBody,
    SearchCitation,
    SearchResult,
    SearchSource,
    TextBody,
)

__all__ = [
    "Backoff",
    "CacheStore",
    "CounterStore",
    "GuardedCache",
    "decode_fetch",
    "decode_fetch_entry",
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


@runtime_checkable
class CounterStore(Protocol):
    """A store whose counters every process sharing it sees (Redis): server replicas count a
    key's requests and usage there once."""

    async def count(self, key: str, amount: int, ttl: float | None) -> int:
        """Adds ``amount`` to the counter ``key`` (kept ``ttl`` seconds, for ever when None)
        and returns its new value."""
        ...

    async def counted(self, key: str) -> int:
        """The counter's value, 0 when it does not exist."""
        ...


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
        if result.unfiltered:
            # What the provider could not pass to its API (an unknown country, say).
            data["unfiltered"] = sorted(result.unfiltered)
        if result.citations:
            data["citations"] = [[c.url, c.title, c.cited_text] for c in result.citations]
        if result.related:
            data["related"] = list(result.related)
        if result.queries:
            data["queries"] = list(result.queries)
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
        if result.truncated_by is not None:
            data["truncated_by"] = result.truncated_by
        if result.rendered_by is not None:
            data["rendered_by"] = result.rendered_by
            data["render_reason"] = result.render_reason
        data["fetched_at"] = time.time()
    return json.dumps(data, ensure_ascii=False).encode()


def decode_search(raw: bytes) -> SearchResult:
    data = json.loads(raw)
    return SearchResult(
        sources=tuple(SearchSource(*row) for row in data["sources"]),
        content=data["content"],
        truncated=data["truncated"],
        unfiltered=frozenset(data.get("unfiltered", ())),
        citations=tuple(SearchCitation(*row) for row in data.get("citations", ())),
        related=tuple(data.get("related", ())),
        queries=tuple(data.get("queries", ())),
    )


def decode_image_search(raw: bytes) -> ImageSearchResult:
    data = json.loads(raw)
    return ImageSearchResult(
        matches=tuple(ImageMatch(*row) for row in data["matches"]),
        content=data["content"],
        truncated=data["truncated"],
    )


def decode_fetch(raw: bytes) -> FetchResult:
    return decode_fetch_entry(raw)[0]


def decode_fetch_entry(raw: bytes) -> tuple[FetchResult, float | None]:
    """A cached page and when it was fetched (Unix time; None for an entry older than the
    field), so a caller's ``max_age`` can refuse it."""
    data = json.loads(raw)
    fetched_at = data.get("fetched_at")
    return _fetch_from(data), float(fetched_at) if isinstance(fetched_at, (int, float)) else None


def _fetch_from(data: dict[str, Any]) -> FetchResult:
    return FetchResult(
        url=data["url"],
        status_code=data["status_code"],
        body=_body_from(data["body"]),
        truncated=data["truncated"],
        rendered_by=data.get("rendered_by"),
        render_reason=data.get("render_reason"),
        truncated_by=data.get("truncated_by"),
    )


class Backoff:
    """When to try a failing store again: ``first`` seconds after its first failure, then
    twice as long after each failed retry, at most ``most``; any success resets it.

    Failures of operations that were already under way when the store went down do not lengthen
    the wait, so many concurrent requests count as one failure.
    """

    def __init__(self, first: float = 1.0, most: float = 30.0) -> None:
        self.first = first
        self.most = most
        self._delay = 0.0
        self._until = 0.0
        self._since = 0.0

    @property
    def down(self) -> bool:
        """The store failed and is not answering again yet."""
        return self._delay > 0

    def ready(self) -> bool:
        """Whether an operation should be tried now."""
        return self._delay == 0 or time.monotonic() >= self._until

    def failed(self) -> bool:
        """Note a failure; True for the first one of an outage (the one worth a warning)."""
        now = time.monotonic()
        if self._delay and now < self._until:
            return False
        first = self._delay == 0
        if first:
            self._since = now
        self._delay = self.first if first else min(self._delay * 2, self.most)
        self._until = now + self._delay
        return first

    def succeeded(self) -> float | None:
        """Note a success; the seconds the outage lasted when it ends one, else None."""
        if self._delay == 0:
            return None
        self._delay = 0.0
        return time.monotonic() - self._since

    @property
    def delay(self) -> float:
        return self._delay


class GuardedCache:
    """Wraps a store so that a failure turns caching off with one warning until the store
    answers again (tried after a :class:`Backoff`)."""

    def __init__(
        self, store: CacheStore, ttl: float, *, retry_first: float = 1.0, retry_most: float = 30.0
    ) -> None:
        self._store: CacheStore | None = store
        self.ttl = ttl
        self._backoff = Backoff(retry_first, retry_most)

    @property
    def active(self) -> bool:
        return self._store is not None and self.ttl > 0 and self._backoff.ready()

    def _failed(self, error: Exception) -> None:
        if self._backoff.failed():
            logger.warning(
                "cache disabled after a failure: %s: %s; retrying in %g s, then at most every %g s",
                type(error).__name__,
                error,
                self._backoff.delay,
                self._backoff.most,
            )
        else:
            logger.debug("the cache is still failing: %s", type(error).__name__)

    def _succeeded(self) -> None:
        outage = self._backoff.succeeded()
        if outage is not None:
            logger.info("cache enabled again: the store answers after %.0f s", outage)

    async def get(self, key: str) -> bytes | None:
        if not self.active or self._store is None:
            return None
        try:
            found = await self._store.get(key)
        except Exception as error:
            self._failed(error)
            return None
        self._succeeded()
        return found

    async def set(self, key: str, value: bytes) -> None:
        if not self.active or self._store is None:
            return
        try:
            await self._store.set(key, value, self.ttl)
        except Exception as error:
            self._failed(error)
            return
        self._succeeded()

    async def aclose(self) -> None:
        store, self._store = self._store, None
        if store is not None:
            try:
                await store.aclose()
            except Exception as error:
                logger.warning("closing the cache failed: %s: %s", type(error).__name__, error)
