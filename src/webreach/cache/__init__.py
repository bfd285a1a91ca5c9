"""Cache stores for the runtime: ``memory``, ``sqlite:///path``, ``redis://…``.

Imports the seam only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..seam import CacheStore
from .memory import MemoryStore
from .redis import RedisStore
from .sqlite import SqliteStore
from .urls import REDIS_SCHEMES, check_store_url

__all__ = [
    "MemoryStore",
    "RedisStore",
    "SqliteStore",
    "check_store_url",
    "default_sqlite_url",
    "open_store",
    "user_cache_dir",
]


def user_cache_dir() -> Path:
    """The platform's per-user cache folder for webreach."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "webreach"


def default_sqlite_url() -> str:
    return (user_cache_dir() / "cache.sqlite3").as_uri().replace("file:", "sqlite:", 1)


def open_store(url: str) -> CacheStore:
    """A store for ``memory``, ``sqlite:///absolute/path`` or ``redis[s]://…``.

    Raises ValueError for anything else (``none`` is no store: the caller's to skip).
    """
    check_store_url(url)
    if url == "memory":
        return MemoryStore()
    parts = urlsplit(url)
    if parts.scheme in REDIS_SCHEMES:
        return RedisStore(url)
    return SqliteStore(Path(unquote(parts.path)))
