"""Tavily against a local server that replays responses shaped like Tavily's Search API."""

from __future__ import annotations

import httpx
import pytest

from replay_server import ReplayServer, Reply
from webreach.providers.search.tavily import TavilySearchProvider
from webreach.seam import SearchRequest

CANARY = "tvly-canary-key-0b8e44"

TAVILY_RESPONSE = {
    "query": "when was python 3.13 released",
    "follow_up_questions": None,
    "answer": "Python 3.13 was released on October 7, 2024, with a new interactive interpreter.",
    "images": [],
    "results": [
        {
            "title": "What's New In Python 3.13",
            "url": "https://docs.python.org/3/whatsnew/3.13.html",
            "content": "Python 3.13 is the latest stable release of the Python programming"
            " language, with a mix of changes to the language, the implementation and the"
            " standard library.",
            "score": 0.9834,
            "raw_content": None,
            "published_date": "Mon, 07 Oct 2024 00:00:00 GMT",
        },
        {
            "title": "Python Release Python 3.13.0",
            "url": "https://www.python.org/downloads/release/python-3130/",
            "content": "",
            "score": 0.8112,
            "raw_content": None,
        },
        {"url": "https://peps.python.org/pep-0719/", "score": 0.5},
        {"title": "dropped: no url", "content": "x", "score": 0.1},
    ],
    "response_time": 1.67,
    "request_id": "123e4567-e89b-12d3-a456-426614174111",
}


def tavily(replay: ReplayServer, client: httpx.AsyncClient) -> TavilySearchProvider:
    return TavilySearchProvider(api_key=CANARY, base_url=replay.url + "/", client=client)


async def test_request_shape(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", "/search", Reply(json=TAVILY_RESPONSE))
    await tavily(replay, client).search(SearchRequest("when was python 3.13 released", 5))

    sent = replay.requests[0]
    assert (sent.method, sent.path, sent.query) == ("POST", "/search", {})
    assert sent.headers["authorization"] == f"Bearer {CANARY}"
    assert sent.headers["content-type"] == "application/json"
    assert sent.json() == {
        "query": "when was python 3.13 released",
        "max_results": 5,
        "include_answer": True,
    }


async def test_mapping_and_answer_as_content(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", "/search", Reply(json=TAVILY_RESPONSE))
    result = await tavily(replay, client).search(SearchRequest("q"))

    first, second, third = result.sources
    assert first.url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert first.title == "What's New In Python 3.13"
    assert first.snippet is not None
    assert first.snippet.startswith("Python 3.13 is the latest stable release")
    assert first.published_at == "Mon, 07 Oct 2024 00:00:00 GMT"
    assert (second.title, second.snippet, second.published_at) == (
        "Python Release Python 3.13.0",
        None,
        None,
    )
    assert (third.url, third.title, third.snippet) == (
        "https://peps.python.org/pep-0719/",
        None,
        None,
    )
    assert result.content == TAVILY_RESPONSE["answer"]


@pytest.mark.parametrize("answer", [None, "", "  "])
async def test_no_answer_means_no_content(
    replay: ReplayServer, client: httpx.AsyncClient, answer: str | None
) -> None:
    replay.route("POST", "/search", Reply(json={**TAVILY_RESPONSE, "answer": answer}))
    result = await tavily(replay, client).search(SearchRequest("q"))
    assert result.content is None
    assert len(result.sources) == 3


async def test_max_results_is_capped_and_optional(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", "/search", Reply(json={"query": "q", "results": []}))
    provider = tavily(replay, client)
    await provider.search(SearchRequest("q", max_results=40))
    result = await provider.search(SearchRequest("q"))
    assert replay.requests[0].json()["max_results"] == 20
    assert "max_results" not in replay.requests[1].json()
    assert (result.sources, result.content) == ((), None)


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert TavilySearchProvider(api_key=CANARY, client=client).available()
    assert not TavilySearchProvider(api_key=None, client=client).available()
    assert not TavilySearchProvider(api_key="", client=client).available()
