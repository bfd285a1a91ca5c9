"""An in-process LRU store, bounded by entry count and total bytes."""

from __future__ import annotations

import time
from collections import OrderedDict

__all__ = ["MemoryStore"]


class MemoryStore:
    def __init__(self, *, max_entries: int = 1024, max_bytes: int = 64 * 1024 * 1024) -> None:
        self._entries: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        self._bytes = 0
        self.max_entries = max_entries
        self.max_bytes = max_bytes

    def __len__(self) -> int:
        return len(self._entries)

    async def get(self, key: str) -> bytes | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, value = entry
        if expires <= time.monotonic():
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return value

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        if len(value) > self.max_bytes:
            return
        self._drop(key)
        self._entries[key] = (time.monotonic() + ttl, value)
        self._bytes += len(value)
        while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
            self._drop(next(iter(self._entries)))

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= len(entry[1])

    async def aclose(self) -> None:
        self._entries.clear()
        self._bytes = 0
