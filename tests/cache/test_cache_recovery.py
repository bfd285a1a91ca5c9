"""The search cache comes back with its Redis: a failure turns it off with one warning, and it
is tried again after a back-off (1 s, doubling to 30 s) instead of staying off for the life of
the process."""

from __future__ import annotations

import asyncio
import logging
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from providers_for_tests import ScriptedSearch, sources
from webreach.cache import open_store
from webreach.seam import SearchRequest, SearchResult, WebRuntime
from webreach.seam.cache import GuardedCache


class RedisProcess:
    """A redis-server on a fixed loopback port that a test can stop and start again."""

    def __init__(self, binary: str, directory: Path) -> None:
        self._binary = binary
        self._directory = directory
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self._process = subprocess.Popen(
            [
                self._binary,
                *("--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", str(self._directory)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.02)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
            self._process = None


@pytest.fixture
def redis_process(tmp_path: Path) -> Iterator[RedisProcess]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    server = RedisProcess(binary, tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def test_the_cache_recovers_when_redis_returns(
    redis_process: RedisProcess, caplog: pytest.LogCaptureFixture
) -> None:
    provider = ScriptedSearch("a", answers={"q": SearchResult(sources=sources("u"))})
    runtime = WebRuntime(cache=open_store(redis_process.url))
    runtime.register_search_provider(provider)
    try:
        await runtime.search(SearchRequest("q"))
        await runtime.search(SearchRequest("q"))
        assert len(provider.calls) == 1  # the second came from Redis

        redis_process.stop()
        with caplog.at_level(logging.WARNING, logger="webreach.cache"):
            for n in range(3):
                await runtime.search(SearchRequest(f"down {n}"))
        assert len(provider.calls) == 4  # no cache, but every search answered
        assert len([r for r in caplog.records if "cache disabled" in r.message]) == 1

        redis_process.start()
        deadline = time.monotonic() + 60
        while True:  # the first retry comes after 1 s, the next after 2 s more …
            asked = len(provider.calls)
            await runtime.search(SearchRequest("after"))
            await runtime.search(SearchRequest("after"))
            if len(provider.calls) == asked + 1:
                break  # the second search was a cache hit again
            assert time.monotonic() < deadline, "the cache never came back"
            await asyncio.sleep(0.25)
    finally:
        await runtime.aclose()


class Outage:
    """A store that fails while ``down`` is set, counting the operations it was asked."""

    def __init__(self) -> None:
        self.down = False
        self.asked = 0
        self.entries: dict[str, bytes] = {}

    async def get(self, key: str) -> bytes | None:
        self.asked += 1
        if self.down:
            raise ConnectionError("Redis went away")
        return self.entries.get(key)

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        self.asked += 1
        if self.down:
            raise ConnectionError("Redis went away")
        self.entries[key] = value

    async def aclose(self) -> None:
        pass


async def test_a_failing_store_is_left_alone_during_its_back_off(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = Outage()
    cache = GuardedCache(store, ttl=60, retry_first=0.2, retry_most=0.4)
    store.down = True
    with caplog.at_level(logging.INFO, logger="webreach.cache"):
        assert await cache.get("k") is None
        for _ in range(5):  # within the back-off: not asked at all
            assert await cache.get("k") is None
            await cache.set("k", b"v")
        assert store.asked == 1 and not cache.active
        await asyncio.sleep(0.25)
        assert await cache.get("k") is None  # retried, still down: the wait doubles
        assert store.asked == 2
        await asyncio.sleep(0.25)
        assert await cache.get("k") is None and store.asked == 2
        store.down = False
        await asyncio.sleep(0.25)
        await cache.set("k", b"v")
        assert await cache.get("k") == b"v"
    assert [r.levelname for r in caplog.records if "cache disabled" in r.message] == ["WARNING"]
    assert any("cache enabled again" in r.message for r in caplog.records)
