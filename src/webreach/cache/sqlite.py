"""A SQLite file store: the command line's default, so repeated searches are free across runs."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path

__all__ = ["SqliteStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY,
    value BLOB NOT NULL,
    expires REAL NOT NULL
)
"""


class SqliteStore:
    """One connection used from worker threads under a lock; WAL lets processes share the file."""

    def __init__(self, path: Path, *, max_entries: int = 10_000) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._writes = 0
        self._db: sqlite3.Connection | None = sqlite3.connect(
            path, timeout=2.0, check_same_thread=False, isolation_level=None
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the cache is closed")
        return self._db

    def _get(self, key: str) -> bytes | None:
        with self._lock:
            row = (
                self._connection()
                .execute(
                    "SELECT value FROM entries WHERE key = ? AND expires > ?", (key, time.time())
                )
                .fetchone()
            )
        return bytes(row[0]) if row else None

    def _set(self, key: str, value: bytes, ttl: float) -> None:
        with self._lock:
            db = self._connection()
            db.execute(
                "INSERT OR REPLACE INTO entries (key, value, expires) VALUES (?, ?, ?)",
                (key, value, time.time() + ttl),
            )
            self._writes += 1
            if self._writes % 100 == 0:
                self._prune(db)

    def _prune(self, db: sqlite3.Connection) -> None:
        """Drop expired entries, then the soonest-expiring ones beyond ``max_entries``."""
        db.execute("DELETE FROM entries WHERE expires <= ?", (time.time(),))
        db.execute(
            "DELETE FROM entries WHERE key IN (SELECT key FROM entries ORDER BY expires DESC "
            "LIMIT -1 OFFSET ?)",
            (self.max_entries,),
        )

    async def get(self, key: str) -> bytes | None:
        return await asyncio.to_thread(self._get, key)

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        await asyncio.to_thread(self._set, key, value, ttl)

    async def aclose(self) -> None:
        with self._lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()
