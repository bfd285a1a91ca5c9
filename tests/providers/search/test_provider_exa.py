"""Exa against a local server that replays responses shaped like Exa's documented API."""

from __future__ import annotations

import httpx

from replay_server import ReplayServer, Reply
from webreach.providers.search.exa import ExaSearchProvider
from webreach.seam import SearchRequest

CANARY = "exa-canary-key-7c1d9e"

EXA_RESPONSE = {
    "requestId": "b5947044c4b78efa9552a7c89b306d95",
    "resolvedSearchType": "neural",
    "results": [
        {
            "id": "https://docs.python.org/3/whatsnew/3.13.html",
            "title": "What's New In Python 3.13",
            "url": "https://docs.python.org/3/whatsnew/3.13.html",
            "publishedDate": "2024-10-07T00:00:00.000Z",
            "author": None,
            "score": 0.41,
            "highlights": ["Python 3.13 ships a new interactive interpreter.", "second"],
            "highlightScores": [0.62, 0.2],
        },
        {
            "id": "https://realpython.com/python313-new-features/",
            "title": "",
            "url": "https://realpython.com/python313-new-features/",
            "highlights": [],
        },
        {"id": "no-url", "title": "dropped: no url"},
    ],
    "costDollars": {"total": 0.005},
}


def exa(
    replay: ReplayServer, client: httpx.AsyncClient, key: str | None = CANARY
) -> ExaSearchProvider:
    return ExaSearchProvider(api_key=key, base_url=replay.url + "/", client=client)


async def test_request_shape_and_mapping(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    result = await exa(replay, client).search(SearchRequest("python 3.13", max_results=5))

    sent = replay.requests[0]
    assert sent.headers["x-api-key"] == CANARY
    assert sent.headers["user-agent"].startswith("webreach/")
    body = sent.json()
    assert body["query"] == "python 3.13"
    assert body["numResults"] == 5
    assert "highlights" in body["contents"]

    first, second = result.sources
    assert first.url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert first.title == "What's New In Python 3.13"
    assert first.snippet == "Python 3.13 ships a new interactive interpreter."
    assert first.published_at == "2024-10-07T00:00:00.000Z"
    assert (second.title, second.snippet, second.published_at) == (None, None, None)
    assert result.content is None


async def test_no_max_results_sends_no_count(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", "/search", Reply(json={"results": []}))
    result = await exa(replay, client).search(SearchRequest("q"))
    assert "numResults" not in replay.requests[0].json()
    assert result.sources == ()


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert ExaSearchProvider(api_key=CANARY, client=client).available()
    assert not ExaSearchProvider(api_key=None, client=client).available()
    assert not ExaSearchProvider(api_key="", client=client).available()


async def test_highlights_are_asked_by_max_characters(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """Exa documents ``numSentences`` and ``highlightsPerUrl`` as deprecated."""
    replay.route("POST", "/search", Reply(json={"results": []}))
    await exa(replay, client).search(SearchRequest("q"))
    highlights = replay.requests[0].json()["contents"]["highlights"]
    assert highlights == {"maxCharacters": 1000}


async def test_a_result_with_text_but_no_highlight_gets_a_snippet_from_its_text(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    long_text = "# Python 3.13\n\nThe   release adds a JIT. " + "More words here. " * 100
    answer = {
        "requestId": "c1e2",
        "results": [
            {
                "id": "https://peps.python.org/pep-0744/",
                "url": "https://peps.python.org/pep-0744/",
                "title": "PEP 744 – JIT Compilation",
                "publishedDate": "2024-04-11T00:00:00.000Z",
                "text": "PEP 744 describes the\n\nexperimental JIT compiler.",
            },
            {
                "id": "https://docs.python.org/3.13/",
                "url": "https://docs.python.org/3.13/",
                "title": "Python 3.13 documentation",
                "text": long_text,
                "highlights": [],
            },
            {"id": "https://x.example/", "url": "https://x.example/", "text": "   "},
        ],
    }
    replay.route("POST", "/search", Reply(json=answer))
    pep, docs, blank = (await exa(replay, client).search(SearchRequest("jit"))).sources

    assert pep.snippet == "PEP 744 describes the experimental JIT compiler."
    assert docs.snippet is not None
    assert docs.snippet.startswith("# Python 3.13 The release adds a JIT. More words here.")
    assert docs.snippet.endswith(" …")
    assert " ".join(long_text.split()).startswith(docs.snippet.removesuffix(" …"))
    assert len(docs.snippet) <= 1002
    assert blank.snippet is None
