"""Smoke tests of the newer options of kagi, perplexity and searxng, against the real services:
Kagi's v1 request with ``filters.after``, Perplexity's 004 inputs with citations and related
questions, SearXNG's cut to the breadth. Each skips itself unless its key (for searxng,
``SEARXNG_BASE_URL``) was set when the session began."""

from __future__ import annotations

import pytest

from live_environment import LIVE_ENVIRONMENT
from webreach.net import create_client
from webreach.providers.search.kagi import KagiSearchProvider
from webreach.providers.search.perplexity import PerplexitySearchProvider
from webreach.providers.search.searxng import SearxngSearchProvider
from webreach.seam import SearchRequest


def _skip_without(variable: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(not LIVE_ENVIRONMENT.get(variable), reason=f"{variable} is not set")


@_skip_without("KAGI_API_KEY")
async def test_kagi_v1_takes_recency() -> None:
    async with create_client(timeout=30) as client:
        provider = KagiSearchProvider(
            api_key=LIVE_ENVIRONMENT["KAGI_API_KEY"],
            base_url=LIVE_ENVIRONMENT.get("KAGI_BASE_URL"),
            client=client,
        )
        result = await provider.search(
            SearchRequest("Python programming language", max_results=5, recency="year")
        )
    assert result.sources
    assert all(source.url.startswith("http") for source in result.sources)


@_skip_without("PERPLEXITY_API_KEY")
async def test_perplexity_cites_and_suggests_with_004_inputs() -> None:
    async with create_client(timeout=120) as client:
        provider = PerplexitySearchProvider(
            api_key=LIVE_ENVIRONMENT["PERPLEXITY_API_KEY"],
            base_url=LIVE_ENVIRONMENT.get("PERPLEXITY_BASE_URL"),
            client=client,
            model=LIVE_ENVIRONMENT.get("PERPLEXITY_MODEL") or "sonar",
        )
        request = SearchRequest(
            "What is the latest stable release of Python?",
            max_results=3,
            num_search_results=5,
            max_tokens=400,
            temperature=0.2,
        )
        result = await provider.search(request)
    assert result.content
    assert 0 < len(result.sources) <= 3
    assert all(citation.url.startswith("http") for citation in result.citations)
    assert all(question.strip() for question in result.related)


@_skip_without("SEARXNG_BASE_URL")
async def test_searxng_cuts_to_the_breadth() -> None:
    async with create_client(timeout=30) as client:
        provider = SearxngSearchProvider(
            base_url=LIVE_ENVIRONMENT["SEARXNG_BASE_URL"],
            token=LIVE_ENVIRONMENT.get("SEARXNG_API_KEY"),
            client=client,
        )
        result = await provider.search(SearchRequest("Python programming language", max_results=2))
    assert 0 < len(result.sources) <= 2
    assert all(suggestion.strip() for suggestion in result.related)
