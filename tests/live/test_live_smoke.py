"""Smoke tests against the real services. Each skips itself without its key (or, for the
keyless provider, unless ``TEST_LIVE_WEB=1`` says the machine may use the internet)."""

from __future__ import annotations

import pytest

from live_environment import LIVE_ENVIRONMENT
from webreach.net import create_client
from webreach.providers.search.duckduckgo import DuckDuckGoSearchProvider
from webreach.providers.search.exa import ExaSearchProvider
from webreach.seam import SearchRequest


@pytest.mark.skipif(not LIVE_ENVIRONMENT.get("EXA_API_KEY"), reason="EXA_API_KEY is not set")
async def test_exa_answers_a_real_query() -> None:
    async with create_client(timeout=30) as client:
        provider = ExaSearchProvider(api_key=LIVE_ENVIRONMENT["EXA_API_KEY"], client=client)
        result = await provider.search(SearchRequest("Python programming language", max_results=3))
    assert 1 <= len(result.sources) <= 3
    assert all(source.url.startswith("http") for source in result.sources)


@pytest.mark.skipif(
    LIVE_ENVIRONMENT.get("TEST_LIVE_WEB") != "1", reason="set TEST_LIVE_WEB=1 to use the internet"
)
async def test_duckduckgo_answers_a_real_query() -> None:
    result = await DuckDuckGoSearchProvider(timeout=20).search(
        SearchRequest("Python programming language", max_results=3)
    )
    assert result.sources
    assert all(source.url.startswith("http") for source in result.sources)
