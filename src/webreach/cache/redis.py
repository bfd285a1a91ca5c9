"""A Redis store, shared by server replicas so one replica's search serves the others."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["RedisStore"]


class RedisStore:
    """Entries expire in Redis itself (``SET … PX``), so no pruning is needed here."""

    def __init__(self, url: str, *, timeout: float = 2.0) -> None:
        from redis.asyncio import Redis

        self._client: Any = Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )

    async def get(self, key: str) -> bytes | None:
        value = await self._client.get(key)
        return bytes(value) if value is not None else None

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        if ttl <= 0:
            return
        await self._client.set(key, value, px=max(1, math.ceil(ttl * 1000)))

    async def count(self, key: str, amount: int, ttl: float | None) -> int:
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.incrby(key, amount)
            if ttl is not None:
                pipe.expire(key, max(1, math.ceil(ttl)))
            replies = await pipe.execute()
        return int(replies[0])

    async def counted(self, key: str) -> int:
        value = await self._client.get(key)
        return int(value) if value is not None else 0

    async def aclose(self) -> None:
        await self._client.aclose()
