"""Results are cached by provider and request; errors never are; a broken cache fails nothing."""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path

import pytest

from cli_helpers import ddgs_calls, fake_ddgs_env, run_cli
from providers_for_tests import ScriptedSearch, sources
from webreach.cache import MemoryStore, SqliteStore, open_store
from webreach.config import build_runtime, load_settings
from webreach.seam import (
    FetchResult,
    HtmlBody,
    PdfBody,
    SearchRequest,
    SearchResult,
    TextBody,
    WebError,
    WebErrorCode,
    WebRuntime,
)
from webreach.seam.cache import decode_fetch, encode


async def test_memory_store_expires_and_evicts_least_recently_used() -> None:
    store = MemoryStore(max_entries=2)
    await store.set("a", b"1", ttl=60)
    await store.set("b", b"2", ttl=60)
    assert await store.get("a") == b"1"  # a is now the most recently used
    await store.set("c", b"3", ttl=60)
    assert await store.get("b") is None
    assert await store.get("a") == b"1"
    await store.set("old", b"x", ttl=-1)
    assert await store.get("old") is None


async def test_memory_store_is_bounded_by_bytes() -> None:
    store = MemoryStore(max_bytes=10)
    await store.set("a", b"12345", ttl=60)
    await store.set("b", b"12345", ttl=60)
    await store.set("c", b"123", ttl=60)
    assert await store.get("a") is None
    assert await store.get("c") == b"123"
    await store.set("huge", b"x" * 11, ttl=60)
    assert await store.get("huge") is None


async def test_sqlite_store_survives_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "cache.sqlite3"
    first = SqliteStore(path)
    await first.set("k", b"value", ttl=60)
    await first.set("gone", b"value", ttl=-1)
    await first.aclose()
    second = open_store(path.as_uri().replace("file:", "sqlite:"))
    assert await second.get("k") == b"value"
    assert await second.get("gone") is None
    await second.aclose()


async def test_sqlite_store_prunes_beyond_its_bound(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "c.sqlite3", max_entries=10)
    for index in range(200):
        await store.set(f"k{index}", b"v", ttl=60 + index)
    assert await store.get("k199") == b"v"
    assert await store.get("k0") is None
    await store.aclose()


@pytest.mark.parametrize("url", ["redis-ish://x", "sqlite://host/path", "sqlite:"])
def test_unknown_store_urls_are_refused(url: str) -> None:
    with pytest.raises(ValueError, match="sqlite:///"):
        open_store(url)


def cached_runtime(provider: ScriptedSearch, ttl: float = 600) -> WebRuntime:
    runtime = WebRuntime(cache=MemoryStore(), cache_ttl=ttl)
    runtime.register_search_provider(provider)
    return runtime


async def test_a_repeated_search_is_served_from_the_cache() -> None:
    provider = ScriptedSearch(
        "exa",
        answers={"q": SearchResult(sources=sources("https://u1.example/", "https://u2.example/"))},
    )
    runtime = cached_runtime(provider)
    first = await runtime.search(SearchRequest("q", max_results=1))
    again = await runtime.search(SearchRequest("q", max_results=1))
    assert again == first
    assert again.provider == "exa"
    assert again.truncated
    assert len(provider.calls) == 1
    await runtime.search(SearchRequest("q", max_results=2))
    assert len(provider.calls) == 2  # another max_results is another entry


async def test_errors_are_not_cached() -> None:
    attempts = []

    async def flaky(request: SearchRequest) -> SearchResult:
        attempts.append(request.query)
        if len(attempts) == 1:
            raise WebError(WebErrorCode.WEB_PROVIDER_ERROR, "down")
        return SearchResult(sources=sources("https://u.example/"))

    runtime = cached_runtime(ScriptedSearch("a", behaviour=flaky))
    with pytest.raises(WebError):
        await runtime.search(SearchRequest("q"))
    assert (await runtime.search(SearchRequest("q"))).sources
    assert len(attempts) == 2


async def test_ttl_zero_turns_caching_off() -> None:
    provider = ScriptedSearch("a")
    runtime = cached_runtime(provider, ttl=0)
    await runtime.search(SearchRequest("q"))
    await runtime.search(SearchRequest("q"))
    assert len(provider.calls) == 2


class BrokenStore:
    async def get(self, key: str) -> bytes | None:
        raise OSError("disk on fire")

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        raise OSError("disk on fire")

    async def aclose(self) -> None:
        pass


async def test_a_failing_store_degrades_to_no_cache_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider = ScriptedSearch(
        "a", answers={"q": SearchResult(sources=sources("https://u.example/"))}
    )
    runtime = WebRuntime(cache=BrokenStore())
    runtime.register_search_provider(provider)
    with caplog.at_level(logging.WARNING, logger="webreach.cache"):
        for _ in range(3):
            assert (await runtime.search(SearchRequest("q"))).sources
    assert len(provider.calls) == 3
    assert len([r for r in caplog.records if "cache disabled" in r.message]) == 1


async def test_a_corrupt_entry_is_a_miss() -> None:
    store = MemoryStore()
    provider = ScriptedSearch(
        "a", answers={"q": SearchResult(sources=sources("https://u.example/"))}
    )
    runtime = WebRuntime(cache=store)
    runtime.register_search_provider(provider)
    await runtime.search(SearchRequest("q"))
    for key in list(store._entries):
        await store.set(key, b"{not json", ttl=60)
    assert (await runtime.search(SearchRequest("q"))).sources[0].url == "https://u.example/"
    assert len(provider.calls) == 2


@pytest.mark.parametrize(
    "body", [HtmlBody("<p>hi</p>"), TextBody("plain"), PdfBody("page one", page_count=3)]
)
def test_fetch_results_round_trip(body: HtmlBody | TextBody | PdfBody) -> None:
    result = FetchResult("https://x.example/", 404, body, truncated=True)
    assert decode_fetch(encode(result)) == result


async def test_an_unopenable_configured_store_warns_and_continues(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")
    monkeypatch.setenv("WEBREACH_CACHE", f"sqlite:///{not_a_folder}/cache.db")
    with caplog.at_level(logging.WARNING, logger="webreach.cache"):
        async with build_runtime(load_settings()):
            pass
    assert "WEBREACH_CACHE" in caplog.text


def test_an_unknown_store_is_refused_when_the_settings_are_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WEBREACH_CACHE", "bogus://")
    with pytest.raises(ValueError, match="the scheme 'bogus' is not a cache store"):
        load_settings()


@pytest.mark.slow
def test_the_command_line_reuses_results_across_runs(tmp_path: Path) -> None:
    rows = {"q": [{"title": "T", "href": "https://t.example/", "body": "b"}]}
    env = fake_ddgs_env(tmp_path, rows, XDG_CACHE_HOME=str(tmp_path / "cache"))
    first = run_cli("search", "q", env=env)
    second = run_cli("search", "q", env=env)
    assert first.returncode == second.returncode == 0
    assert second.stdout == first.stdout.replace("(duckduckgo)", "(duckduckgo, cached)", 1)
    assert len(ddgs_calls(tmp_path)) == 1
    assert (tmp_path / "cache" / "webreach" / "cache.sqlite3").exists()
    uncached = run_cli("search", "q", env={**env, "WEBREACH_CACHE_TTL": "0"})
    assert uncached.returncode == 0
    assert len(ddgs_calls(tmp_path)) == 2


@pytest.mark.slow
async def test_redis_store_shares_entries_between_clients(redis_url: str) -> None:
    first, second = open_store(redis_url), open_store(redis_url)
    try:
        await first.set("k", b"value", ttl=60)
        assert await second.get("k") == b"value"
        await first.set("short", b"v", ttl=0.05)
        await asyncio.sleep(0.2)
        assert await second.get("short") is None
        assert await second.get("missing") is None
    finally:
        await first.aclose()
        await second.aclose()


@pytest.mark.slow
async def test_replicas_sharing_redis_search_once(redis_url: str) -> None:
    provider = ScriptedSearch(
        "exa", answers={"q": SearchResult(sources=sources("https://u1.example/"))}
    )
    replicas = [WebRuntime(cache=open_store(redis_url)) for _ in range(2)]
    for runtime in replicas:
        runtime.register_search_provider(provider)
    try:
        first = await replicas[0].search(SearchRequest("q"))
        again = await replicas[1].search(SearchRequest("q"))
    finally:
        for runtime in replicas:
            await runtime.aclose()
    assert again == first
    assert len(provider.calls) == 1


async def test_an_unreachable_redis_degrades_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = ScriptedSearch(
        "a", answers={"q": SearchResult(sources=sources("https://u.example/"))}
    )
    runtime = WebRuntime(cache=open_store(f"redis://127.0.0.1:{port}/0"))
    runtime.register_search_provider(provider)
    with caplog.at_level(logging.WARNING, logger="webreach.cache"):
        for _ in range(2):
            assert (await runtime.search(SearchRequest("q"))).sources
    await runtime.aclose()
    assert len(provider.calls) == 2
    assert len([r for r in caplog.records if "cache disabled" in r.message]) == 1


async def test_a_store_password_never_reaches_the_log(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from webreach.cache.urls import shown_store_url

    assert shown_store_url("redis://:hunter2@cache:6379/0") == "redis://:***@cache:6379/0"
    assert shown_store_url("rediss://app:hunter2@cache/1") == "rediss://app:***@cache/1"
    assert shown_store_url("redis://cache:6379") == "redis://cache:6379"
    monkeypatch.setattr(
        "webreach.cache.open_store",
        lambda url: (_ for _ in ()).throw(ValueError(f"cannot reach {url}")),
    )
    monkeypatch.setenv("WEBREACH_CACHE", "redis://:hunter2@127.0.0.1:9/0")
    with caplog.at_level(logging.WARNING, logger="webreach.cache"):
        async with build_runtime(load_settings()):
            pass
    assert "WEBREACH_CACHE" in caplog.text
    assert "hunter2" not in caplog.text
