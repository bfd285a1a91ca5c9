"""SearXNG against a local server that replays responses shaped like its JSON search API."""

from __future__ import annotations

import httpx
import pytest

from replay_server import ReplayServer, Reply
from webreach.providers.search.searxng import SearxngSearchProvider
from webreach.seam import SearchRequest, WebError, WebErrorCode

CANARY = "searxng-canary-token-91c7d2"

SEARXNG_RESPONSE = {
    "query": "python 3.13",
    "number_of_results": 0,
    "results": [
        {
            "url": "https://docs.python.org/3/whatsnew/3.13.html",
            "title": "What’s New In Python 3.13 — Python 3.13.0 documentation",
            "content": "This article explains the new features in <b>Python</b> 3.13,"
            " compared to 3.12.",
            "thumbnail": "",
            "engine": "duckduckgo",
            "template": "default.html",
            "parsed_url": ["https", "docs.python.org", "/3/whatsnew/3.13.html", "", "", ""],
            "img_src": "",
            "priority": "",
            "engines": ["duckduckgo", "brave", "startpage"],
            "positions": [1, 1, 2],
            "score": 6.0,
            "category": "general",
            "publishedDate": None,
        },
        {
            "url": "https://www.python.org/downloads/release/python-3130/",
            "title": "Python Release Python 3.13.0",
            "content": "Python 3.13.0 is the newest major release of the Python language.",
            "engine": "google",
            "engines": ["google"],
            "positions": [3],
            "score": 0.33,
            "category": "general",
            "publishedDate": "2024-10-07T00:00:00",
        },
        {"url": "https://realpython.com/python313-new-features/", "engine": "bing"},
        {"title": "dropped: no url", "engine": "bing"},
    ],
    "answers": [],
    "corrections": [],
    "infoboxes": [],
    "suggestions": ["python 3.13 download", "python 3.13 release date"],
    "unresponsive_engines": [["wikidata", "timeout"]],
}


async def test_request_shape_without_a_token(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("GET", "/search", Reply(json=SEARXNG_RESPONSE))
    provider = SearxngSearchProvider(base_url=replay.url, client=client)
    await provider.search(SearchRequest("python 3.13", max_results=3))

    sent = replay.requests[0]
    assert (sent.method, sent.path) == ("GET", "/search")
    assert sent.query == {"q": ["python 3.13"], "format": ["json"]}
    assert "authorization" not in sent.headers
    assert sent.headers["user-agent"].startswith("webreach/")


async def test_a_token_is_sent_as_bearer_under_a_path_prefix(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("GET", "/searx/search", Reply(json=SEARXNG_RESPONSE))
    provider = SearxngSearchProvider(base_url=replay.url + "/searx/", token=CANARY, client=client)
    await provider.search(SearchRequest("q"))
    assert replay.requests[0].headers["authorization"] == f"Bearer {CANARY}"


async def test_mapping(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("GET", "/search", Reply(json=SEARXNG_RESPONSE))
    result = await SearxngSearchProvider(base_url=replay.url, client=client).search(
        SearchRequest("python 3.13")
    )

    first, second, third = result.sources
    assert first.url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert first.title == "What’s New In Python 3.13 — Python 3.13.0 documentation"
    assert (
        first.snippet == "This article explains the new features in Python 3.13, compared to 3.12."
    )
    assert first.published_at is None
    assert second.published_at == "2024-10-07T00:00:00"
    assert second.snippet == "Python 3.13.0 is the newest major release of the Python language."
    assert (third.title, third.snippet, third.published_at) == (None, None, None)
    assert result.content is None


async def test_a_403_hints_at_the_json_format(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("GET", "/search", Reply(403, body=b"<html>Forbidden</html>"))
    with pytest.raises(WebError) as caught:
        await SearxngSearchProvider(base_url=replay.url, client=client).search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.status == 403
    assert caught.value.message.startswith("searxng: authorization failed (HTTP 403)")
    assert "search.formats" in caught.value.message


def test_available_iff_a_base_url_is_set(client: httpx.AsyncClient) -> None:
    assert SearxngSearchProvider(base_url="http://127.0.0.1:8888", client=client).available()
    assert not SearxngSearchProvider(base_url=None, client=client).available()
    assert not SearxngSearchProvider(base_url="", token=CANARY, client=client).available()


async def test_searching_without_a_base_url_names_the_variable(client: httpx.AsyncClient) -> None:
    with pytest.raises(WebError) as caught:
        await SearxngSearchProvider(base_url=None, client=client).search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_UNAVAILABLE
    assert "SEARXNG_BASE_URL" in caught.value.message


def many(count: int) -> dict[str, object]:
    results = [{"url": f"https://example.org/{n}", "title": f"r{n}"} for n in range(count)]
    return {**SEARXNG_RESPONSE, "results": results}


@pytest.mark.parametrize(
    ("request_", "kept"),
    [
        (SearchRequest("q"), 10),
        (SearchRequest("q", max_results=3), 3),
        (SearchRequest("q", max_results=50), 20),
        (SearchRequest("q", max_results=3, num_search_results=15), 15),
    ],
    ids=["default-10", "max-results", "at-most-20", "breadth"],
)
async def test_results_are_cut_to_the_breadth_within_1_to_20(
    replay: ReplayServer, client: httpx.AsyncClient, request_: SearchRequest, kept: int
) -> None:
    """SearXNG takes no count, so none is sent; the answer is cut instead."""
    replay.route("GET", "/search", Reply(json=many(30)))
    result = await SearxngSearchProvider(base_url=replay.url, client=client).search(request_)
    assert [s.url for s in result.sources] == [f"https://example.org/{n}" for n in range(kept)]
    assert result.truncated
    assert set(replay.requests[0].query) == {"q", "format"}


async def test_fewer_results_than_the_breadth_are_not_truncated(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("GET", "/search", Reply(json=many(4)))
    result = await SearxngSearchProvider(base_url=replay.url, client=client).search(
        SearchRequest("q", max_results=4)
    )
    assert len(result.sources) == 4
    assert not result.truncated


async def test_suggestions_are_related_searches(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("GET", "/search", Reply(json=SEARXNG_RESPONSE))
    result = await SearxngSearchProvider(base_url=replay.url, client=client).search(
        SearchRequest("python 3.13")
    )
    assert result.related == ("python 3.13 download", "python 3.13 release date")
    assert (result.citations, result.queries) == ((), ())


@pytest.mark.parametrize(
    ("suggestions", "related"),
    [
        (None, ()),
        ("python", ()),
        (["a <b>b</b>", "", "  ", 3, None, "a b", "c"], ("a b", "c")),
    ],
    ids=["null", "not-a-list", "mixed"],
)
async def test_only_text_suggestions_are_kept_once(
    replay: ReplayServer,
    client: httpx.AsyncClient,
    suggestions: object,
    related: tuple[str, ...],
) -> None:
    replay.route("GET", "/search", Reply(json={**SEARXNG_RESPONSE, "suggestions": suggestions}))
    result = await SearxngSearchProvider(base_url=replay.url, client=client).search(
        SearchRequest("q")
    )
    assert result.related == related


@pytest.mark.parametrize(
    ("recency", "time_range"),
    [("day", "day"), ("week", "month"), ("month", "month"), ("year", "year")],
)
async def test_a_week_asks_for_a_month(
    replay: ReplayServer, client: httpx.AsyncClient, recency: str, time_range: str
) -> None:
    """SearXNG's ``time_range`` takes day, month and year only."""
    replay.route("GET", "/search", Reply(json=SEARXNG_RESPONSE))
    await SearxngSearchProvider(base_url=replay.url, client=client).search(
        SearchRequest("q", recency=recency)  # type: ignore[arg-type]
    )
    assert replay.requests[0].query["time_range"] == [time_range]
