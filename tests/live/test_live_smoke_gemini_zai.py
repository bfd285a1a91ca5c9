"""Smoke tests of Gemini (Grounding with Google Search) and Z.AI (its ``web_search_prime`` MCP
server) against the real services; each skips itself unless its key was in the environment the
session started with."""

from __future__ import annotations

import pytest

from live_environment import LIVE_ENVIRONMENT
from webreach.net import create_client
from webreach.providers.search.gemini import GeminiSearchProvider
from webreach.providers.search.zai import ZaiSearchProvider
from webreach.seam import SearchRequest

QUERY = "What is the latest stable release of the Python programming language?"
GEMINI_KEY = (
    LIVE_ENVIRONMENT.get("GEMINI_SEARCH_API_KEY")
    or LIVE_ENVIRONMENT.get("GOOGLE_API_KEY")
    or LIVE_ENVIRONMENT.get("GEMINI_API_KEY")
)


@pytest.mark.skipif(not GEMINI_KEY, reason="no GEMINI_API_KEY (or GOOGLE_API_KEY) is set")
async def test_gemini_answers_a_real_query_with_grounding() -> None:
    async with create_client(timeout=120) as client:
        provider = GeminiSearchProvider(
            api_key=GEMINI_KEY,
            client=client,
            model=LIVE_ENVIRONMENT.get("GEMINI_SEARCH_MODEL") or None,
        )
        result = await provider.search(SearchRequest(QUERY, max_tokens=1024))
    assert result.content
    assert result.sources
    assert all(source.url.startswith("http") for source in result.sources)
    assert len({source.url for source in result.sources}) == len(result.sources)
    assert result.queries


@pytest.mark.skipif(not LIVE_ENVIRONMENT.get("ZAI_API_KEY"), reason="ZAI_API_KEY is not set")
async def test_zai_searches_a_real_query() -> None:
    async with create_client(timeout=60) as client:
        provider = ZaiSearchProvider(
            api_key=LIVE_ENVIRONMENT["ZAI_API_KEY"],
            client=client,
            base_url=LIVE_ENVIRONMENT.get("ZAI_BASE_URL") or None,
        )
        result = await provider.search(SearchRequest("latest Python release", max_results=5))
    assert result.has_content()
    assert all(source.url.startswith("http") for source in result.sources)
    assert len(result.sources) <= 5
