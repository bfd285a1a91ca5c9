"""Smoke tests of brave, tavily, searxng, jina and kagi against the real services. Each skips
itself unless its key (for searxng, ``SEARXNG_BASE_URL``) was set when the session began."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from live_environment import LIVE_ENVIRONMENT
from webreach.net import create_client
from webreach.providers.search.brave import BraveSearchProvider
from webreach.providers.search.jina import JinaSearchProvider
from webreach.providers.search.kagi import KagiSearchProvider
from webreach.providers.search.searxng import SearxngSearchProvider
from webreach.providers.search.tavily import TavilySearchProvider
from webreach.seam import SearchProvider, SearchRequest

Build = Callable[[httpx.AsyncClient], SearchProvider]


def _keyed(prefix: str, make: Callable[..., SearchProvider]) -> Build:
    """A builder using ``<PREFIX>_API_KEY`` and, when set, ``<PREFIX>_BASE_URL``."""

    def build(client: httpx.AsyncClient) -> SearchProvider:
        base = LIVE_ENVIRONMENT.get(f"{prefix}_BASE_URL")
        extra = {"base_url": base} if base else {}
        return make(api_key=LIVE_ENVIRONMENT[f"{prefix}_API_KEY"], client=client, **extra)

    return build


def _searxng(client: httpx.AsyncClient) -> SearchProvider:
    return SearxngSearchProvider(
        base_url=LIVE_ENVIRONMENT["SEARXNG_BASE_URL"],
        token=LIVE_ENVIRONMENT.get("SEARXNG_API_KEY"),
        client=client,
    )


def _live(variable: str, build: Build, name: str) -> object:
    return pytest.param(
        build,
        id=name,
        marks=pytest.mark.skipif(
            not LIVE_ENVIRONMENT.get(variable), reason=f"{variable} is not set"
        ),
    )


@pytest.mark.parametrize(
    "build",
    [
        _live("BRAVE_API_KEY", _keyed("BRAVE", BraveSearchProvider), "brave"),
        _live("TAVILY_API_KEY", _keyed("TAVILY", TavilySearchProvider), "tavily"),
        _live("SEARXNG_BASE_URL", _searxng, "searxng"),
        _live("JINA_API_KEY", _keyed("JINA", JinaSearchProvider), "jina"),
        _live("KAGI_API_KEY", _keyed("KAGI", KagiSearchProvider), "kagi"),
    ],
)
async def test_answers_a_real_query(build: Build) -> None:
    async with create_client(timeout=30) as client:
        result = await build(client).search(
            SearchRequest("Python programming language", max_results=3)
        )
    assert result.sources
    assert all(source.url.startswith("http") for source in result.sources)
