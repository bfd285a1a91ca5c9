"""Jina against a local server that replays responses shaped like Jina's Search API (JSON)."""

from __future__ import annotations

import httpx

from replay_server import ReplayServer, Reply
from webreach.providers.search.jina import JinaSearchProvider
from webreach.seam import SearchRequest

CANARY = "jina_canary_key_6d2e57"

JINA_RESPONSE = {
    "code": 200,
    "status": 20000,
    "data": [
        {
            "title": "What's New In Python 3.13 — Python 3.13.0 documentation",
            "url": "https://docs.python.org/3/whatsnew/3.13.html",
            "description": "This article explains the new features in Python 3.13, compared to"
            " 3.12.",
            "date": "Oct 7, 2024",
            "usage": {"tokens": 1000},
        },
        {
            "title": "Python Release Python 3.13.0",
            "url": "https://www.python.org/downloads/release/python-3130/",
            "description": "",
            "content": "",
            "usage": {"tokens": 1000},
        },
        {"url": "https://peps.python.org/pep-0719/", "usage": {"tokens": 1000}},
        {"title": "dropped: no url", "description": "x"},
    ],
    "meta": {"usage": {"tokens": 3000}},
}


def jina(replay: ReplayServer, client: httpx.AsyncClient) -> JinaSearchProvider:
    return JinaSearchProvider(api_key=CANARY, base_url=replay.url + "/", client=client)


async def test_request_shape(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("GET", "/", Reply(json=JINA_RESPONSE))
    await jina(replay, client).search(SearchRequest("python 3.13 & more?", max_results=2))

    sent = replay.requests[0]
    assert (sent.method, sent.path) == ("GET", "/")
    assert sent.query == {"q": ["python 3.13 & more?"]}
    assert sent.headers["authorization"] == f"Bearer {CANARY}"
    assert sent.headers["accept"] == "application/json"
    assert sent.headers["x-respond-with"] == "no-content"


async def test_mapping(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("GET", "/", Reply(json=JINA_RESPONSE))
    result = await jina(replay, client).search(SearchRequest("python 3.13"))

    first, second, third = result.sources
    assert first.url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert first.title == "What's New In Python 3.13 — Python 3.13.0 documentation"
    assert (
        first.snippet == "This article explains the new features in Python 3.13, compared to 3.12."
    )
    assert first.published_at == "Oct 7, 2024"
    assert (second.title, second.snippet, second.published_at) == (
        "Python Release Python 3.13.0",
        None,
        None,
    )
    assert (third.title, third.snippet, third.published_at) == (None, None, None)
    assert result.content is None


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert JinaSearchProvider(api_key=CANARY, client=client).available()
    assert not JinaSearchProvider(api_key=None, client=client).available()
    assert not JinaSearchProvider(api_key="", client=client).available()
