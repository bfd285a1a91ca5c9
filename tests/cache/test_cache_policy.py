"""A cached result reaches only callers whose policy would have let them fetch it.

A page fetched with ``WEBREACH_FETCH_ALLOW`` opening loopback must not be served from the
shared SQLite cache to a later run without it; a replay server's search results must not reach
a provider pointed at another base URL. Everything here is real: local servers on 127.0.0.1,
SQLite files in ``tmp_path``, the ``http`` provider and the command line as a user runs it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from _servers import Exchange, LocalServer, respond
from cli_helpers import clean_env, run_cli
from providers_for_tests import ScriptedFetch
from replay_server import ReplayServer, Reply
from webreach.cache import SqliteStore
from webreach.net import create_client
from webreach.providers.fetch.http import HttpFetchProvider
from webreach.providers.search.exa import ExaSearchProvider
from webreach.providers.search.perplexity import PerplexitySearchProvider
from webreach.providers.search.searxng import SearxngSearchProvider
from webreach.seam import (
    CacheScoped,
    FetchPrecheck,
    FetchRequest,
    FetchResult,
    HtmlBody,
    SearchRequest,
    WebError,
    WebErrorCode,
    WebRuntime,
)
from webreach.seam.cache import encode

SECRET = b"<html><title>intranet</title><p>the private page</p></html>"


async def serve_secret(exchange: Exchange) -> None:
    await respond(exchange, 200, SECRET, {"Content-Type": "text/html"})


def secret_page() -> LocalServer:
    return LocalServer({"/secret": serve_secret})


@asynccontextmanager
async def fetch_runtime(
    cache: Path, *, allow: str | Sequence[str] = (), **options: Any
) -> AsyncIterator[WebRuntime]:
    """A runtime as ``build_runtime`` wires it: the ``http`` provider over a SQLite file."""
    runtime = WebRuntime(cache=SqliteStore(cache))
    provider = HttpFetchProvider(allow=allow, **options)
    runtime.own(provider)
    runtime.register_fetch_provider(provider)
    async with runtime:
        yield runtime


async def blocked(runtime: WebRuntime, url: str) -> WebError:
    with pytest.raises(WebError) as caught:
        await runtime.fetch(FetchRequest(url))
    return caught.value


# --- fetch: the guard runs before the cache, and keys are per policy -----------------------


async def test_a_loopback_page_is_not_served_from_the_cache_without_the_allow_list(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache.sqlite3"
    async with secret_page() as server:
        url = server.url("/secret")
        async with fetch_runtime(cache, allow="127.0.0.1") as runtime:
            first = await runtime.fetch(FetchRequest(url))
        assert first.body == HtmlBody(SECRET.decode())
        assert server.connections == 1

        async with fetch_runtime(cache) as runtime:
            error = await blocked(runtime, url)
        assert error.code == WebErrorCode.WEB_BLOCKED_URL
        assert error.provider == "http"
        assert "WEBREACH_FETCH_ALLOW" in error.message
        assert server.connections == 1  # refused before the cache and before the network

        async with fetch_runtime(cache, allow="127.0.0.1") as runtime:
            again = await runtime.fetch(FetchRequest(url))
        assert again == first
        assert server.connections == 1  # the same policy still gets its cached page


@pytest.mark.parametrize(
    "spelling", ["127.1", "0x7f.1", "2130706433", "[::ffff:127.0.0.1]", "localhost"]
)
async def test_other_spellings_of_loopback_are_refused_with_a_warm_cache(
    tmp_path: Path, spelling: str
) -> None:
    cache = tmp_path / "cache.sqlite3"
    async with secret_page() as server:
        url = server.url("/secret", host=spelling)
        async with fetch_runtime(cache, allow="127.0.0.0/8, localhost") as rt:
            assert (await rt.fetch(FetchRequest(url))).status_code == 200
        assert server.connections == 1
        async with fetch_runtime(cache) as runtime:
            error = await blocked(runtime, url)
        assert error.code == WebErrorCode.WEB_BLOCKED_URL
        assert server.connections == 1


async def test_a_name_opened_by_the_allow_list_is_vetted_again_under_another_policy(
    tmp_path: Path,
) -> None:
    """A name cannot be judged without DNS, so no precheck refuses it: the key partition does.

    The page cached under ``allow=intranet.test`` is not found by a runtime without it, which
    resolves the name, sees a loopback address and refuses before connecting.
    """
    lookups: list[str] = []

    async def resolver(host: str, port: int) -> Sequence[str]:
        lookups.append(host)
        return ["127.0.0.1"]

    cache = tmp_path / "cache.sqlite3"
    async with secret_page() as server:
        url = server.url("/secret", host="intranet.test")
        async with fetch_runtime(cache, allow="intranet.test", resolver=resolver) as runtime:
            assert (await runtime.fetch(FetchRequest(url))).status_code == 200
        async with fetch_runtime(cache, resolver=resolver) as runtime:
            error = await blocked(runtime, url)
        assert error.code == WebErrorCode.WEB_BLOCKED_URL
        assert "127.0.0.1" in error.message
        assert lookups == ["intranet.test", "intranet.test"]
        assert server.connections == 1


async def test_a_different_allow_list_or_limit_is_a_different_cache_partition(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache.sqlite3"
    async with secret_page() as server:
        url = server.url("/secret")
        for allow, max_chars in [
            ("127.0.0.1", 2_000_000),
            ("127.0.0.1", 2_000_000),  # same policy: a hit
            (" 127.0.0.1/32 ,", 2_000_000),  # the same allow list, spelt otherwise: a hit
            ("127.0.0.1, 10.0.0.0/8", 2_000_000),  # a wider policy: a miss
            ("127.0.0.1", 10),  # a smaller character cap: a miss
        ]:
            async with fetch_runtime(cache, allow=allow, max_chars=max_chars) as runtime:
                await runtime.fetch(FetchRequest(url))
        assert server.connections == 3


class EveryKeyStore:
    """A store that answers every key with one cached page, as a poisoned or foreign cache
    (another version, another process, a shared redis) might."""

    def __init__(self, page: FetchResult) -> None:
        self.raw = encode(page)
        self.asked = 0

    async def get(self, key: str) -> bytes | None:
        self.asked += 1
        return self.raw

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        pass

    async def aclose(self) -> None:
        pass


WARM = FetchResult("http://example.com/", 200, HtmlBody("<p>from the cache</p>"))


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("ftp://example.com/x", WebErrorCode.WEB_INVALID_URL),
        ("http://user:pw@example.com/", WebErrorCode.WEB_INVALID_URL),
        ("", WebErrorCode.WEB_INVALID_URL),
        ("http://exa mple.com/", WebErrorCode.WEB_INVALID_URL),
        pytest.param(
            "http://example.com/" + "a" * 2048, WebErrorCode.WEB_INVALID_URL, id="too-long"
        ),
        ("http://127.0.0.1/", WebErrorCode.WEB_BLOCKED_URL),
        ("http://169.254.169.254/latest/meta-data/", WebErrorCode.WEB_BLOCKED_URL),
        ("http://[::1]:8080/", WebErrorCode.WEB_BLOCKED_URL),
        ("http://localhost/", WebErrorCode.WEB_BLOCKED_URL),
        ("http://api.localhost./", WebErrorCode.WEB_BLOCKED_URL),
    ],
)
async def test_a_url_the_provider_refuses_fails_the_same_with_a_warm_cache(
    url: str, code: WebErrorCode
) -> None:
    cold_provider = HttpFetchProvider()
    with pytest.raises(WebError) as cold:
        await cold_provider.fetch(FetchRequest(url))
    await cold_provider.aclose()

    store = EveryKeyStore(WARM)
    async with WebRuntime(cache=store) as runtime:
        provider = HttpFetchProvider()
        runtime.own(provider)
        runtime.register_fetch_provider(provider)
        with pytest.raises(WebError) as warm:
            await runtime.fetch(FetchRequest(url))
    assert (warm.value.code, warm.value.message, warm.value.provider) == (
        cold.value.code,
        cold.value.message,
        "http",
    )
    assert warm.value.code == code
    assert store.asked == 0  # refused before the cache was even asked


async def test_the_http_provider_declares_its_precheck_and_scope() -> None:
    provider = HttpFetchProvider(allow="10.0.0.0/8, Host.Example., 127.0.0.1")
    try:
        assert isinstance(provider, FetchPrecheck)
        assert isinstance(provider, CacheScoped)
        same = HttpFetchProvider(allow=["127.0.0.1/32", "host.example", "10.0.0.0/8"])
        assert same.cache_scope() == provider.cache_scope()
        await same.aclose()
        provider.precheck(FetchRequest("https://example.com/"))  # no I/O, nothing raised
        provider.precheck(FetchRequest("http://127.0.0.1/"))  # opened on purpose
        with pytest.raises(WebError) as caught:
            provider.precheck(FetchRequest("http://10.0.0.1.nip.io@x/"))
        assert caught.value.code == WebErrorCode.WEB_INVALID_URL
    finally:
        await provider.aclose()


async def test_a_provider_without_precheck_or_scope_keeps_todays_caching() -> None:
    """Third-party providers (and the scripted ones of the tests) are cached as before."""
    store = EveryKeyStore(WARM)
    fetcher = ScriptedFetch(pages={})
    assert not isinstance(fetcher, FetchPrecheck)
    assert not isinstance(fetcher, CacheScoped)
    async with WebRuntime(cache=store) as runtime:
        runtime.register_fetch_provider(fetcher)
        result = await runtime.fetch(FetchRequest("http://127.0.0.1/"))
    assert result.body == WARM.body
    assert fetcher.calls == []


# --- the command line, as a user runs it twice ---------------------------------------------


@pytest.mark.slow
def test_the_command_line_refuses_a_cached_private_page_without_the_allow_list(
    replay: ReplayServer, tmp_path: Path
) -> None:
    replay.route("GET", "/secret", Reply(body=SECRET, headers={"content-type": "text/html"}))
    url = f"{replay.url}/secret"
    cache = (tmp_path / "cli.sqlite3").as_uri().replace("file:", "sqlite:", 1)
    opened = clean_env(WEBREACH_CACHE=cache, WEBREACH_FETCH_ALLOW="127.0.0.1")

    first = run_cli("fetch", url, "--json", env=opened)
    assert first.returncode == 0, first.stderr
    assert "the private page" in first.stdout
    assert len(replay.requests) == 1

    closed = run_cli("fetch", url, "--json", env=clean_env(WEBREACH_CACHE=cache))
    assert closed.returncode == 1
    assert json.loads(closed.stdout)["error"]["code"] == "WEB_BLOCKED_URL"
    assert "the private page" not in closed.stdout
    plain = run_cli("fetch", url, env=clean_env(WEBREACH_CACHE=cache))
    assert plain.returncode == 1
    assert plain.stderr.startswith("webreach: WEB_BLOCKED_URL:")
    assert len(replay.requests) == 1

    again = run_cli("fetch", url, "--json", env=opened)
    assert again.returncode == 0
    cached, fetched = json.loads(again.stdout), json.loads(first.stdout)
    assert (cached.pop("cached"), fetched.pop("cached")) == (True, False)
    assert cached == fetched
    assert len(replay.requests) == 1  # served from the cache the first run filled


# --- search: results are cached per endpoint ----------------------------------------------


def exa_reply(url: str) -> Reply:
    return Reply(json={"results": [{"url": url, "title": "t", "highlights": ["h"]}]})


async def test_search_results_are_cached_per_base_url(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite3"

    async def search_through(base_url: str) -> str:
        async with create_client(timeout=5) as client:
            runtime = WebRuntime(cache=SqliteStore(cache))
            runtime.register_search_provider(
                ExaSearchProvider(api_key="k", client=client, base_url=base_url)
            )
            async with runtime:
                result = await runtime.search(SearchRequest("q", max_results=3))
        return result.sources[0].url

    with ReplayServer() as replayed, ReplayServer() as other:
        replayed.route("POST", "/search", exa_reply("https://replayed.example/"))
        other.route("POST", "/search", exa_reply("https://other.example/"))
        assert await search_through(replayed.url) == "https://replayed.example/"
        assert await search_through(other.url + "/") == "https://other.example/"
        assert await search_through(replayed.url + "/") == "https://replayed.example/"
        assert await search_through(other.url) == "https://other.example/"
        assert (len(replayed.requests), len(other.requests)) == (1, 1)


CANARY = "pplx-canary-key-4b2e"


async def test_model_backed_search_is_cached_per_model() -> None:
    async with httpx.AsyncClient() as client:
        sonar = PerplexitySearchProvider(api_key=CANARY, client=client, model="sonar")
        pro = PerplexitySearchProvider(api_key=CANARY, client=client, model="sonar-pro")
        again = PerplexitySearchProvider(api_key="another-key", client=client, model="sonar")
        elsewhere = PerplexitySearchProvider(
            api_key=CANARY, client=client, model="sonar", base_url="http://127.0.0.1:9/"
        )
        assert isinstance(sonar, CacheScoped)
        assert sonar.cache_scope() != pro.cache_scope()
        assert sonar.cache_scope() == again.cache_scope()  # the key is no part of the scope
        assert sonar.cache_scope() != elsewhere.cache_scope()
        assert CANARY not in sonar.cache_scope()


def test_searxng_results_are_cached_per_instance() -> None:
    async_client = httpx.AsyncClient()
    one = SearxngSearchProvider(base_url="http://127.0.0.1:1/", client=async_client)
    same = SearxngSearchProvider(base_url="http://127.0.0.1:1", client=async_client)
    other = SearxngSearchProvider(base_url="http://127.0.0.1:2", client=async_client)
    assert isinstance(one, CacheScoped)
    assert one.cache_scope() == same.cache_scope()
    assert one.cache_scope() != other.cache_scope()
