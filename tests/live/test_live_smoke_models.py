"""Smoke tests of the model-backed search providers against the real services; each skips
itself unless its key was in the environment the session started with."""

from __future__ import annotations

import pytest

from live_environment import LIVE_ENVIRONMENT
from webreach.net import create_client
from webreach.providers.search.deepseek import DeepSeekSearchProvider
from webreach.providers.search.perplexity import PerplexitySearchProvider
from webreach.seam import SearchRequest

QUERY = "What is the latest stable release of the Python programming language?"


@pytest.mark.skipif(
    not LIVE_ENVIRONMENT.get("PERPLEXITY_API_KEY"), reason="PERPLEXITY_API_KEY is not set"
)
async def test_perplexity_answers_a_real_query() -> None:
    async with create_client(timeout=60) as client:
        provider = PerplexitySearchProvider(
            api_key=LIVE_ENVIRONMENT["PERPLEXITY_API_KEY"],
            client=client,
            model=LIVE_ENVIRONMENT.get("PERPLEXITY_MODEL") or "sonar",
        )
        result = await provider.search(SearchRequest(QUERY))
    assert result.content
    assert result.sources
    assert all(source.url.startswith("http") for source in result.sources)


@pytest.mark.skipif(
    not LIVE_ENVIRONMENT.get("DEEPSEEK_API_KEY"), reason="DEEPSEEK_API_KEY is not set"
)
async def test_deepseek_answers_a_real_query() -> None:
    async with create_client(timeout=120) as client:
        provider = DeepSeekSearchProvider(
            api_key=LIVE_ENVIRONMENT["DEEPSEEK_API_KEY"],
            client=client,
            model=LIVE_ENVIRONMENT.get("DEEPSEEK_SEARCH_MODEL") or "deepseek-flash",
        )
        result = await provider.search(SearchRequest(QUERY))
    assert result.content
    assert result.sources
    assert all(source.url.startswith("http") for source in result.sources)
    assert len({source.url for source in result.sources}) == len(result.sources)
