"""Kagi against a local server that replays responses shaped like the Kagi Search API v1 (the
``Search200Response`` of Kagi's OpenAPI spec: ``meta``, and ``data`` holding results by kind)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import httpx
import pytest

from replay_server import ReplayServer, Reply
from webreach.config import build_runtime
from webreach.providers.search.kagi import KagiSearchProvider, KagiSettings
from webreach.seam import SearchRequest, WebError, WebErrorCode

CANARY = "kagi-canary-key-a41f08"
PATH = "/api/v1/search"
NOW = datetime(2026, 3, 31, 23, 30, tzinfo=UTC)

KAGI_RESPONSE: dict[str, Any] = {
    "meta": {"trace": "7d1c9a1e0f3b4c2a", "node": "us-east4", "ms": 412},
    "data": {
        "search": [
            {
                "url": "https://docs.python.org/3/whatsnew/3.13.html",
                "title": "What’s New In Python 3.13",
                "snippet": "This article explains the new features in <b>Python 3.13</b>.",
                "time": "2024-10-07T00:00:00Z",
                "image": {"url": "https://kagi.com/proxy/python.png", "width": 64, "height": 64},
                "props": {},
            },
            {
                "url": "https://www.python.org/downloads/release/python-3130/",
                "title": "Python Release Python 3.13.0",
            },
            {"title": "dropped: no url", "snippet": "nothing to link"},
        ],
        "video": [
            {
                "url": "https://www.youtube.com/watch?v=abc123",
                "title": "Python 3.13 in 10 minutes",
                "time": "2024-10-09T12:00:00Z",
                "props": {"duration": "10:12"},
            }
        ],
        "news": [
            {
                "url": "https://lwn.net/Articles/990000/",
                "title": "Python 3.13 released",
                "snippet": "The free-threaded build is experimental.",
                "time": "2024-10-08T09:00:00Z",
            },
            {"url": "https://news.example/untitled"},
        ],
        "infobox": [
            {
                "url": "https://en.wikipedia.org/wiki/Python_(programming_language)",
                "title": "Python (programming language)",
                "snippet": "Python is a high-level, general-purpose programming language.",
                "props": {"Designed by": "Guido van Rossum"},
            }
        ],
        "adjacent_question": [
            {
                "url": "https://www.reddit.com/r/Python/comments/1/",
                "title": "Is Python 3.13 faster? : r/Python",
                "props": {"question": "Is Python 3.13 faster than 3.12?"},
            },
            {"url": "https://example.org/q", "title": "What is the GIL?"},
        ],
        "related_search": [
            {
                "url": "https://kagi.com/search?q=python+3.13+jit",
                "title": "python 3.13 jit",
                "props": {"query": "python 3.13 jit"},
            },
            {"url": "https://kagi.com/search?q=python+3.14", "title": "python 3.14"},
            {"props": {"question": "Is Python 3.13 faster than 3.12?"}},
            {"props": {}},
        ],
        "direct_answer": [
            {"url": "https://kagi.com", "title": "Python 3.13", "snippet": "Released 7 Oct 2024"}
        ],
        "interesting_news": [{"url": "https://kagi.com/news/x", "title": "not a source"}],
        "image": [{"url": "https://img.example/1.png", "title": "not a source"}],
    },
}


def kagi(replay: ReplayServer, client: httpx.AsyncClient) -> KagiSearchProvider:
    return KagiSearchProvider(
        api_key=CANARY, base_url=replay.url + "/", client=client, clock=lambda: NOW
    )


async def search(
    replay: ReplayServer, client: httpx.AsyncClient, request: SearchRequest, reply: Any = None
) -> tuple[Any, Any]:
    replay.route("POST", PATH, Reply(json=KAGI_RESPONSE if reply is None else reply))
    result = await kagi(replay, client).search(request)
    return replay.requests[-1], result


# --- the request -------------------------------------------------------------------------------


async def test_request_shape(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    sent, _ = await search(replay, client, SearchRequest("python 3.13", max_results=7))
    assert (sent.method, sent.path) == ("POST", PATH)
    assert sent.query == {}
    assert sent.headers["authorization"] == f"Bearer {CANARY}"
    assert sent.headers["content-type"] == "application/json"
    assert sent.json() == {"query": "python 3.13", "workflow": "search", "limit": 7}


@pytest.mark.parametrize(
    ("request_", "limit"),
    [
        (SearchRequest("q"), 10),
        (SearchRequest("q", max_results=1), 1),
        (SearchRequest("q", max_results=40), 40),
        (SearchRequest("q", max_results=41), 40),
        (SearchRequest("q", max_results=3, num_search_results=12), 12),
        (SearchRequest("q", num_search_results=99), 40),
    ],
    ids=["default", "one", "forty", "past-forty", "breadth", "breadth-past-forty"],
)
async def test_the_limit_is_the_breadth_within_1_to_40(
    replay: ReplayServer, client: httpx.AsyncClient, request_: SearchRequest, limit: int
) -> None:
    sent, _ = await search(replay, client, request_)
    assert sent.json()["limit"] == limit


@pytest.mark.parametrize(
    ("recency", "after"),
    [
        ("day", "2026-03-30"),
        ("week", "2026-03-24"),
        ("month", "2026-02-28"),
        ("year", "2025-03-30"),
    ],
)
async def test_recency_is_filters_after_as_a_utc_date(
    replay: ReplayServer, client: httpx.AsyncClient, recency: str, after: str
) -> None:
    """As far back as the seam's own window (``seam.filters.cutoff``: 1, 7, 31, 366 days)."""
    sent, _ = await search(replay, client, SearchRequest("q", recency=recency))  # type: ignore[arg-type]
    assert sent.json() == {
        "query": "q",
        "workflow": "search",
        "limit": 10,
        "filters": {"after": after},
    }


async def test_the_date_is_the_utc_one(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    """01:00 on April 1st in UTC+2 is still March 31st in UTC."""
    local = datetime(2026, 4, 1, 1, 0, tzinfo=timezone(timedelta(hours=2)))
    provider = KagiSearchProvider(
        api_key=CANARY, base_url=replay.url, client=client, clock=lambda: local
    )
    replay.route("POST", PATH, Reply(json=KAGI_RESPONSE))
    await provider.search(SearchRequest("q", recency="day"))
    assert replay.requests[0].json()["filters"] == {"after": "2026-03-30"}


async def test_the_country_is_the_region_filter(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """Kagi v1's ``filters`` take ``region`` beside ``after`` and ``before``."""
    sent, result = await search(replay, client, SearchRequest("q", country="DE", recency="day"))
    assert sent.json()["filters"] == {"after": "2026-03-30", "region": "de"}
    assert "country" not in result.unfiltered


async def test_only_recency_and_country_are_declared_and_no_other_filter_is_sent(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    request = SearchRequest(
        "q",
        include_domains=("python.org",),
        exclude_domains=("x.org",),
        language="de",
    )
    sent, _ = await search(replay, client, request)
    assert sent.json() == {"query": "q", "workflow": "search", "limit": 10}
    assert KagiSearchProvider.filters == {"recency", "country"}


# --- the mapping -------------------------------------------------------------------------------


async def test_sources_are_web_results_then_tagged_videos_news_and_infobox(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    _, result = await search(replay, client, SearchRequest("python 3.13"))
    assert [(s.url, s.title) for s in result.sources] == [
        ("https://docs.python.org/3/whatsnew/3.13.html", "What’s New In Python 3.13"),
        ("https://www.python.org/downloads/release/python-3130/", "Python Release Python 3.13.0"),
        ("https://www.youtube.com/watch?v=abc123", "[Video] Python 3.13 in 10 minutes"),
        ("https://lwn.net/Articles/990000/", "[News] Python 3.13 released"),
        ("https://news.example/untitled", "[News]"),
        (
            "https://en.wikipedia.org/wiki/Python_(programming_language)",
            "[Infobox] Python (programming language)",
        ),
    ]
    first, second, video, news, untitled, infobox = result.sources
    assert first.snippet == "This article explains the new features in Python 3.13."
    assert first.published_at == "2024-10-07T00:00:00Z"
    assert (second.snippet, second.published_at) == (None, None)
    assert video.published_at == "2024-10-09T12:00:00Z"
    assert news.snippet == "The free-threaded build is experimental."
    assert (untitled.snippet, untitled.published_at) == (None, None)
    assert infobox.snippet == "Python is a high-level, general-purpose programming language."


async def test_related_questions_and_searches(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """``props.question``, else ``props.query``, else the title; each once, in order."""
    _, result = await search(replay, client, SearchRequest("python 3.13"))
    assert result.related == (
        "Is Python 3.13 faster than 3.12?",
        "What is the GIL?",
        "python 3.13 jit",
        "python 3.14",
    )
    assert (result.citations, result.queries) == ((), ())


async def test_the_first_direct_answer_is_the_answer(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    _, result = await search(replay, client, SearchRequest("python 3.13"))
    assert result.content == "Released 7 Oct 2024"


async def test_a_direct_answer_without_a_snippet_answers_with_its_title(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    reply = {"meta": {}, "data": {"direct_answer": [{"url": "https://kagi.com", "title": "42"}]}}
    _, result = await search(replay, client, SearchRequest("6*7"), reply)
    assert (result.sources, result.content, result.related) == ((), "42", ())
    assert result.has_content()


async def test_an_empty_data_object_is_an_empty_result(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    _, result = await search(replay, client, SearchRequest("q"), {"meta": {}, "data": {}})
    assert (result.sources, result.content, result.related) == ((), None, ())
    assert not result.has_content()


# --- failures (the shared ones are in test_provider_rest_failures.py) --------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ({"meta": {}, "data": []}, "kagi: unexpected response shape (no valid 'data')"),
        ({"meta": {}}, "kagi: unexpected response shape (no valid 'data')"),
        (
            {"meta": {}, "data": {"search": {"url": "https://x.org"}}},
            "kagi: unexpected response shape (no valid 'search')",
        ),
        (
            {"meta": {}, "data": {"related_search": "python"}},
            "kagi: unexpected response shape (no valid 'related_search')",
        ),
        (
            {"meta": {}, "data": None, "error": [{"code": 101, "msg": "Insufficient credit"}]},
            "kagi: the search failed (Insufficient credit)",
        ),
        (
            {"meta": {}, "data": None, "error": [{"code": 2, "message": f"bad key {CANARY}"}]},
            "kagi: the search failed (bad key ***)",
        ),
        (
            {"meta": {}, "data": None, "error": [{"code": 1}]},
            "kagi: unexpected response shape (no valid 'data')",
        ),
    ],
    ids=[
        "data-list",
        "no-data",
        "mistyped-search",
        "mistyped-related",
        "reported-error",
        "reported-error-echoing-the-key",
        "reported-error-without-message",
    ],
)
async def test_bad_answers_are_provider_errors_naming_kagi(
    replay: ReplayServer, client: httpx.AsyncClient, reply: Any, expected: str
) -> None:
    replay.route("POST", PATH, Reply(json=reply))
    with pytest.raises(WebError) as caught:
        await kagi(replay, client).search(SearchRequest("q"))
    error = caught.value
    assert error.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert error.provider == "kagi"
    assert error.message == expected
    assert CANARY not in error.message + repr(error) + str(error)


# --- settings ------------------------------------------------------------------------------------


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert KagiSearchProvider(api_key=CANARY, client=client).available()
    assert not KagiSearchProvider(api_key=None, client=client).available()
    assert not KagiSearchProvider(api_key="", client=client).available()


def test_the_key_stays_out_of_repr(client: httpx.AsyncClient) -> None:
    provider = KagiSearchProvider(api_key=CANARY, client=client)
    assert CANARY not in repr(provider)
    assert repr(provider) == "KagiSearchProvider(base_url='https://kagi.com')"


async def test_built_from_the_environment(
    replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAGI_API_KEY", CANARY)
    monkeypatch.setenv("KAGI_BASE_URL", replay.url)
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "kagi")
    settings = KagiSettings()
    assert settings.kagi_api_key is not None
    assert settings.kagi_api_key.get_secret_value() == CANARY
    replay.route("POST", PATH, Reply(json=KAGI_RESPONSE))
    async with build_runtime() as runtime:
        result = await runtime.search(SearchRequest("python 3.13", max_results=2))
    assert result.provider == "kagi"
    assert [s.url for s in result.sources] == [
        "https://docs.python.org/3/whatsnew/3.13.html",
        "https://www.python.org/downloads/release/python-3130/",
    ]
    assert result.related[0] == "Is Python 3.13 faster than 3.12?"
    assert replay.requests[0].headers["authorization"] == f"Bearer {CANARY}"
    assert replay.requests[0].json()["limit"] == 2
