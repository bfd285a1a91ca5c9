"""A network backend for the fetcher's pinned pool that records what it is asked to dial and
dials 127.0.0.1 instead, so a test sees the vetted address while nothing leaves the machine."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import httpcore2

__all__ = ["LoopbackDialer"]


class LoopbackDialer(httpcore2.AsyncNetworkBackend):
    """``port``: the local server to reach whatever port was asked for (None: the same)."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port
        self.dialled: list[str] = []
        self._real = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore2's interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        self.dialled.append(host)
        target = port if self.port is None else self.port
        return await self._real.connect_tcp("127.0.0.1", target, timeout=timeout)

    async def sleep(self, seconds: float) -> None:
        await self._real.sleep(seconds)
