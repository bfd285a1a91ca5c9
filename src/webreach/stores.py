"""The stores the configuration opens: the cache (``WEBREACH_CACHE``) and the server's response
store, each opened once, a store that cannot be opened meaning none and one warning."""

from __future__ import annotations

import logging

from .seam import CacheStore
from .settings import Settings

__all__ = ["open_cache", "open_response_store", "open_store_or_none"]


def open_cache(settings: Settings, default: str | None) -> CacheStore | None:
    """The configured store; one that cannot be opened means no cache and one warning."""
    url = settings.cache or default
    if not url or url == "none" or settings.cache_ttl <= 0:
        return None
    return open_store_or_none(url, "a cache")


def open_store_or_none(url: str, purpose: str) -> CacheStore | None:
    from .cache import open_store
    from .cache.urls import shown_store_url

    try:
        return open_store(url)
    except Exception as error:
        shown = shown_store_url(url)
        logging.getLogger("webreach.cache").warning(
            "WEBREACH_CACHE: cannot open %r (%s); continuing without %s",
            shown,
            str(error).replace(url, shown),
            purpose,
        )
        return None


def open_response_store(settings: Settings) -> CacheStore | None:
    """Where ``webreach serve`` keeps responses and read pages: the configured cache store (so
    replicas sharing Redis share them), in memory when the cache is off; None when
    ``WEBREACH_STORE_TTL`` is 0.

    In memory it is bounded by ``WEBREACH_STORE_MAX_MB`` alone, not by a count of entries: a
    response is several entries (itself and each of its items) of any size, and a count small
    enough to bound the memory evicted responses long before their TTL.
    """
    if settings.store_ttl <= 0:
        return None
    url = settings.cache if settings.cache and settings.cache != "none" else "memory"
    if url == "memory":
        from .cache import MemoryStore

        return MemoryStore(max_entries=None, max_bytes=settings.store_max_mb * 1024 * 1024)
    return open_store_or_none(url, "a response store")
