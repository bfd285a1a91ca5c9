"""Smoke tests of the anthropic and openai search providers against the real services; each skips
itself unless its key was in the environment the session started with (the search-only key or
the general one, as the providers read them)."""

from __future__ import annotations

import pytest

from live_environment import LIVE_ENVIRONMENT
from webreach.net import create_client
from webreach.providers.search.anthropic import AnthropicSearchProvider
from webreach.providers.search.openai import OpenAISearchProvider
from webreach.seam import SearchRequest, SearchResult

QUERY = "What is the latest stable release of the Python programming language?"
ANTHROPIC_KEY = LIVE_ENVIRONMENT.get("ANTHROPIC_SEARCH_API_KEY") or LIVE_ENVIRONMENT.get(
    "ANTHROPIC_API_KEY"
)
OPENAI_KEY = LIVE_ENVIRONMENT.get("OPENAI_SEARCH_API_KEY") or LIVE_ENVIRONMENT.get("OPENAI_API_KEY")


def check(result: SearchResult) -> None:
    assert result.content
    assert result.sources
    assert all(source.url.startswith("http") for source in result.sources)
    assert len({source.url for source in result.sources}) == len(result.sources)
    assert result.queries


@pytest.mark.skipif(not ANTHROPIC_KEY, reason="ANTHROPIC_API_KEY is not set")
async def test_anthropic_answers_a_real_query() -> None:
    async with create_client(timeout=120) as client:
        provider = AnthropicSearchProvider(
            api_key=ANTHROPIC_KEY,
            client=client,
            base_url=LIVE_ENVIRONMENT.get("ANTHROPIC_SEARCH_BASE_URL"),
            model=LIVE_ENVIRONMENT.get("ANTHROPIC_SEARCH_MODEL"),
        )
        result = await provider.search(SearchRequest(QUERY, max_tokens=1024))
    check(result)
    assert result.citations


@pytest.mark.skipif(not OPENAI_KEY, reason="OPENAI_API_KEY is not set")
async def test_openai_answers_a_real_query() -> None:
    async with create_client(timeout=120) as client:
        provider = OpenAISearchProvider(
            api_key=OPENAI_KEY,
            client=client,
            base_url=LIVE_ENVIRONMENT.get("OPENAI_SEARCH_BASE_URL"),
            model=LIVE_ENVIRONMENT.get("OPENAI_SEARCH_MODEL"),
        )
        result = await provider.search(SearchRequest(QUERY, temperature=0.2))
    check(result)
