"""One TLS context per process: building a verifying context loads the CA bundle (~20 ms), and
one ``webreach search`` used to build one per client and transport."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from typing import Any

import pytest

from replay_server import ReplayServer, Reply
from webreach.config import build_runtime
from webreach.net import create_client
from webreach.net.tls import shared_ssl_context
from webreach.seam import SearchRequest


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[ssl.SSLContext]]:
    """Every ``ssl.SSLContext`` constructed while the test runs, starting with no shared one."""
    made: list[ssl.SSLContext] = []
    original = ssl.SSLContext.__new__

    def counting(cls: type[ssl.SSLContext], *args: Any, **kwargs: Any) -> ssl.SSLContext:
        context = original(cls, *args, **kwargs)
        made.append(context)
        return context

    shared_ssl_context.cache_clear()
    monkeypatch.setattr(ssl.SSLContext, "__new__", counting)
    yield made
    shared_ssl_context.cache_clear()


async def test_building_the_runtime_builds_at_most_one_tls_context(
    built: list[ssl.SSLContext], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every keyed provider configured: each would have built clients of its own.
    for name in ("BRAVE", "EXA", "TAVILY", "PERPLEXITY", "JINA", "KAGI", "DEEPSEEK", "SERPAPI"):
        monkeypatch.setenv(f"{name}_API_KEY", "k")
    monkeypatch.setenv("SEARXNG_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "searxng")
    async with build_runtime():
        pass
    assert len(built) <= 1
    async with build_runtime():
        pass
    assert len(built) <= 1, "a second runtime in the same process builds none"


async def test_clients_share_the_one_context(built: list[ssl.SSLContext]) -> None:
    async with create_client() as first, create_client(proxy="http://127.0.0.1:9") as second:
        assert first is not second
    assert built == [shared_ssl_context()]


async def test_a_search_through_the_runtime_builds_no_further_context(
    built: list[ssl.SSLContext], monkeypatch: pytest.MonkeyPatch, replay: ReplayServer
) -> None:
    replay.route("GET", "/search", Reply(json={"results": [{"url": "https://a.example/"}]}))
    monkeypatch.setenv("SEARXNG_BASE_URL", replay.url)
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "searxng")
    async with build_runtime() as runtime:
        result = await runtime.search(SearchRequest("q"))
    assert [s.url for s in result.sources] == ["https://a.example/"]
    assert len(built) <= 1
