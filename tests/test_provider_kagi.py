"""Kagi against a local server that replays responses shaped like the Kagi Search API (v0)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from replay_server import ReplayServer, Reply
from webreach.net import create_client
from webreach.providers.search.kagi import KagiSearchProvider
from webreach.seam import SearchRequest

CANARY = "kagi-canary-key-a41f08"
PATH = "/api/v0/search"

KAGI_RESPONSE = {
    "meta": {
        "id": "120145af-f2a5-4e4c-9b1a-5d1e6a4c1f00",
        "node": "us-east4",
        "ms": 261,
        "api_balance": 4.975,
    },
    "data": [
        {
            "t": 0,
            "rank": 1,
            "url": "https://docs.python.org/3/whatsnew/3.13.html",
            "title": "What’s New In Python 3.13",
            "snippet": "This article explains the new features in Python 3.13, compared to 3.12.",
            "published": "2024-10-07T00:00:00Z",
            "thumbnail": {"url": "/proxy/docs.python.org.png", "width": 64, "height": 64},
        },
        {
            "t": 0,
            "rank": 2,
            "url": "https://www.python.org/downloads/release/python-3130/",
            "title": "Python Release Python 3.13.0",
        },
        {"t": 1, "list": ["python 3.13 features", "python 3.13 download"]},
        {"t": 2, "url": "https://example.com/not-a-search-result", "title": "another kind"},
        {"rank": 3, "url": "https://example.com/no-kind", "title": "no t at all"},
        {"t": 0, "rank": 4, "title": "dropped: no url"},
    ],
}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with create_client(timeout=5) as client:
        yield client


def kagi(replay: ReplayServer, client: httpx.AsyncClient) -> KagiSearchProvider:
    return KagiSearchProvider(api_key=CANARY, base_url=replay.url + "/", client=client)


async def test_request_shape(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("GET", PATH, Reply(json=KAGI_RESPONSE))
    await kagi(replay, client).search(SearchRequest("python 3.13", max_results=7))

    sent = replay.requests[0]
    assert (sent.method, sent.path) == ("GET", PATH)
    assert sent.query == {"q": ["python 3.13"], "limit": ["7"]}
    assert sent.headers["authorization"] == f"Bot {CANARY}"


async def test_no_max_results_sends_no_limit(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("GET", PATH, Reply(json=KAGI_RESPONSE))
    await kagi(replay, client).search(SearchRequest("q"))
    assert "limit" not in replay.requests[0].query


async def test_only_search_results_become_sources(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("GET", PATH, Reply(json=KAGI_RESPONSE))
    result = await kagi(replay, client).search(SearchRequest("python 3.13"))

    first, second = result.sources
    assert first.url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert first.title == "What’s New In Python 3.13"
    assert (
        first.snippet == "This article explains the new features in Python 3.13, compared to 3.12."
    )
    assert first.published_at == "2024-10-07T00:00:00Z"
    assert second.url == "https://www.python.org/downloads/release/python-3130/"
    assert (second.snippet, second.published_at) == (None, None)
    assert result.content is None


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert KagiSearchProvider(api_key=CANARY, client=client).available()
    assert not KagiSearchProvider(api_key=None, client=client).available()
    assert not KagiSearchProvider(api_key="", client=client).available()
