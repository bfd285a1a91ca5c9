"""Smoke tests of kimi, parallel and synthetic against the real services. Each skips itself
unless one of its keys was set when the session began; each is built through its spec from
those variables, so the key order and the endpoint settings are the ones a user gets."""

from __future__ import annotations

from typing import Any

import pytest

from live_environment import LIVE_ENVIRONMENT
from webreach.net import create_client
from webreach.providers.search import kimi, parallel, synthetic
from webreach.providers.spec import ProviderContext
from webreach.seam import SearchProvider, SearchRequest

KIMI_KEYS = ("MOONSHOT_SEARCH_API_KEY", "KIMI_SEARCH_API_KEY", "KIMI_API_KEY", "MOONSHOT_API_KEY")


def _live(module: Any, variables: tuple[str, ...]) -> object:
    return pytest.param(
        module,
        id=module.PROVIDER.id,
        marks=pytest.mark.skipif(
            not any(LIVE_ENVIRONMENT.get(name) for name in variables),
            reason=f"none of {', '.join(variables)} is set",
        ),
    )


@pytest.mark.parametrize(
    "module",
    [
        _live(kimi, KIMI_KEYS),
        _live(parallel, ("PARALLEL_API_KEY",)),
        _live(synthetic, ("SYNTHETIC_API_KEY",)),
    ],
)
async def test_answers_a_real_query(module: Any) -> None:
    spec = module.PROVIDER
    fields = spec.settings.model_fields
    values = {
        name: LIVE_ENVIRONMENT[name.upper()]
        for name in fields
        if LIVE_ENVIRONMENT.get(name.upper())
    }
    async with create_client(timeout=60) as client:
        context = ProviderContext(
            client=client,
            model_client=client,
            search_timeout=60,
            proxy=None,
            fetch_timeout=30,
            fetch_max_bytes=1024 * 1024,
            fetch_allow=None,
        )
        provider: SearchProvider = spec.create(spec.settings(**values), context)
        assert provider.available()
        result = await provider.search(SearchRequest("Python programming language", max_results=3))
    assert result.sources
    assert len(result.sources) <= 3
    assert all(source.url.startswith("http") for source in result.sources)
