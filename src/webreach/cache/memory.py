"""An in-process LRU store, bounded by total bytes and, optionally, entry count."""

from __future__ import annotations

import time
from collections import OrderedDict

__all__ = ["MemoryStore"]


class MemoryStore:
    """An entry's size is the bytes of its key and value; Python's own bookkeeping (roughly
    200 bytes an entry) comes on top. ``max_entries=None`` bounds by bytes alone, which is what
    the response store wants: its entries range from a one-line item to a whole conversation."""

    def __init__(
        self, *, max_entries: int | None = 1024, max_bytes: int = 64 * 1024 * 1024
    ) -> None:
        self._entries: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        self._bytes = 0
        self.max_entries = max_entries
        self.max_bytes = max_bytes

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def total_bytes(self) -> int:
        """The bytes the entries count for."""
        return self._bytes

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
        self._drop(key)
        if _size(key, value) > self.max_bytes:
            return
        self._entries[key] = (time.monotonic() + ttl, value)
        self._bytes += _size(key, value)
        while self._bytes > self.max_bytes or (
            self.max_entries is not None and len(self._entries) > self.max_entries
        ):
            self._drop(next(iter(self._entries)))

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= _size(key, entry[1])

    async def aclose(self) -> None:
        self._entries.clear()
        self._bytes = 0


def _size(key: str, value: bytes) -> int:
    return len(key) + len(value)
