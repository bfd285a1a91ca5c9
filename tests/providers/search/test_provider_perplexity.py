"""Perplexity against a local server replaying Sonar chat completions shaped like its API docs."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from replay_server import ReplayServer, Reply
from webreach.config import build_runtime
from webreach.providers.search.perplexity import PerplexitySearchProvider
from webreach.seam import SearchRequest, WebError, WebErrorCode

CANARY = "pplx-canary-key-3f8a2b"
PATH = "/chat/completions"

ANSWER = "Python 3.13 adds a new interactive interpreter [1] and an experimental JIT [2]."
CITATIONS = [
    "https://docs.python.org/3/whatsnew/3.13.html",
    "https://peps.python.org/pep-0744/",
    "https://realpython.com/python313-new-features/",
]


def completion(**extra: Any) -> dict[str, Any]:
    """A Sonar response as the API reference shows it, with ``extra`` top-level fields."""
    return {
        "id": "3c90c3cc-0d44-4b50-8888-8dd25736052a",
        "model": "sonar",
        "created": 1735689600,
        "usage": {
            "prompt_tokens": 9,
            "completion_tokens": 28,
            "total_tokens": 37,
            "search_context_size": "low",
        },
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": ANSWER},
                "delta": {"role": "assistant", "content": ""},
            }
        ],
        **extra,
    }


SEARCH_RESULTS = [
    {
        "title": "What's New In Python 3.13",
        "url": "https://docs.python.org/3/whatsnew/3.13.html",
        "date": "2024-10-07",
        "last_updated": "2025-01-10",
        "snippet": "Python 3.13 ships a new interactive interpreter.",
        "source": "web",
    },
    {
        "title": "",
        "url": "https://peps.python.org/pep-0744/",
        "date": None,
        "last_updated": None,
        "snippet": "",
        "source": "web",
    },
    {"title": "dropped: no url", "date": "2024-01-01"},
    {"url": "https://realpython.com/python313-new-features/"},
]


def perplexity(
    replay: ReplayServer, client: httpx.AsyncClient, key: str | None = CANARY, **options: str
) -> PerplexitySearchProvider:
    return PerplexitySearchProvider(
        api_key=key, base_url=replay.url + "/", client=client, **options
    )


async def test_request_shape(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=completion(citations=CITATIONS)))
    await perplexity(replay, client).search(SearchRequest("python 3.13", max_results=5))

    sent = replay.requests[0]
    assert (sent.method, sent.path) == ("POST", PATH)
    assert sent.headers["authorization"] == f"Bearer {CANARY}"
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["user-agent"].startswith("webreach/")
    assert sent.json() == {
        "model": "sonar",
        "messages": [{"role": "user", "content": "python 3.13"}],
        "search_mode": "web",
        "return_related_questions": True,
    }


async def test_004_inputs_are_sent_when_the_request_sets_them(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """``num_search_results`` is the breadth Perplexity reads, apart from ``max_results``."""
    replay.route("POST", PATH, Reply(json=completion()))
    request = SearchRequest(
        "python 3.13", max_results=3, num_search_results=12, max_tokens=900, temperature=0.0
    )
    await perplexity(replay, client).search(request)
    assert replay.requests[0].json() == {
        "model": "sonar",
        "messages": [{"role": "user", "content": "python 3.13"}],
        "search_mode": "web",
        "return_related_questions": True,
        "num_search_results": 12,
        "max_tokens": 900,
        "temperature": 0.0,
    }


async def test_max_results_is_not_sent_and_slices_the_sources(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    reply = completion(citations=CITATIONS, search_results=SEARCH_RESULTS)
    replay.route("POST", PATH, Reply(json=reply))
    result = await perplexity(replay, client).search(SearchRequest("q", max_results=2))
    assert "num_search_results" not in replay.requests[0].json()
    assert [s.url for s in result.sources] == CITATIONS[:2]
    assert result.truncated
    assert [c.url for c in result.citations] == CITATIONS


async def test_the_model_is_configurable(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=completion()))
    await perplexity(replay, client, model="sonar-pro").search(SearchRequest("q"))
    assert replay.requests[0].json()["model"] == "sonar-pro"


async def test_search_results_map_to_sources(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    reply = completion(citations=CITATIONS, search_results=SEARCH_RESULTS)
    replay.route("POST", PATH, Reply(json=reply))
    result = await perplexity(replay, client).search(SearchRequest("python 3.13"))

    assert result.content == ANSWER
    first, second, third = result.sources
    assert first.url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert first.title == "What's New In Python 3.13"
    assert first.snippet == "Python 3.13 ships a new interactive interpreter."
    assert first.published_at == "2024-10-07"
    assert second.url == "https://peps.python.org/pep-0744/"
    assert (second.title, second.snippet, second.published_at) == (None, None, None)
    assert third.url == "https://realpython.com/python313-new-features/"
    assert (third.title, third.snippet, third.published_at) == (None, None, None)
    assert not result.truncated


@pytest.mark.parametrize("search_results", [None, [], [{"title": "no url"}]])
async def test_citations_are_the_fallback(
    replay: ReplayServer, client: httpx.AsyncClient, search_results: Any
) -> None:
    extra: dict[str, Any] = {"citations": [*CITATIONS, "", 42]}
    if search_results is not None:
        extra["search_results"] = search_results
    replay.route("POST", PATH, Reply(json=completion(**extra)))
    result = await perplexity(replay, client).search(SearchRequest("q"))

    assert [source.url for source in result.sources] == CITATIONS
    assert all(
        (source.title, source.snippet, source.published_at) == (None, None, None)
        for source in result.sources
    )
    assert result.content == ANSWER


async def test_no_sources_and_no_content(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    reply = completion()
    reply["choices"][0]["message"]["content"] = ""
    replay.route("POST", PATH, Reply(json=reply))
    result = await perplexity(replay, client).search(SearchRequest("q"))
    assert result.sources == ()
    assert result.content is None


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert PerplexitySearchProvider(api_key=CANARY, client=client).available()
    assert not PerplexitySearchProvider(api_key=None, client=client).available()
    assert not PerplexitySearchProvider(api_key="", client=client).available()


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            Reply(json={"id": "x", "citations": CITATIONS}),
            "perplexity: unexpected response shape (no valid 'choices')",
        ),
        (Reply(json={"choices": []}), "perplexity: unexpected response shape (no valid 'choices')"),
        (
            Reply(json={"choices": [{"index": 0}]}),
            "perplexity: unexpected response shape (no valid 'choices')",
        ),
    ],
)
async def test_failures_are_provider_errors_naming_perplexity(
    replay: ReplayServer, client: httpx.AsyncClient, reply: Reply, expected: str
) -> None:
    replay.route("POST", PATH, reply)
    with pytest.raises(WebError) as caught:
        await perplexity(replay, client).search(SearchRequest("q"))
    error = caught.value
    assert error.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert error.provider == "perplexity"
    assert error.message.startswith(expected)
    assert error.status is None
    assert CANARY not in error.message + repr(error) + str(error)


RELATED = [
    "What is the free-threaded build in Python 3.13?",
    "How do I enable the JIT in Python 3.13?",
]


async def test_citations_are_titled_from_the_search_results(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    reply = completion(
        citations=[*CITATIONS, "https://unlisted.example/", "", 7],
        search_results=SEARCH_RESULTS,
        related_questions=RELATED,
    )
    replay.route("POST", PATH, Reply(json=reply))
    result = await perplexity(replay, client).search(SearchRequest("python 3.13"))

    assert [(c.url, c.title, c.cited_text) for c in result.citations] == [
        ("https://docs.python.org/3/whatsnew/3.13.html", "What's New In Python 3.13", None),
        ("https://peps.python.org/pep-0744/", None, None),
        ("https://realpython.com/python313-new-features/", None, None),
        ("https://unlisted.example/", None, None),
    ]
    assert result.related == tuple(RELATED)
    assert result.queries == ()


async def test_without_citations_or_related_questions_there_are_none(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json=completion(search_results=SEARCH_RESULTS)))
    result = await perplexity(replay, client).search(SearchRequest("q"))
    assert (result.citations, result.related) == ((), ())
    assert len(result.sources) == 3


@pytest.mark.parametrize(
    "related", [None, "one question", [None, "", "  ", 3, "Kept?"]], ids=["null", "str", "mixed"]
)
async def test_only_related_questions_that_are_text_are_kept(
    replay: ReplayServer, client: httpx.AsyncClient, related: Any
) -> None:
    replay.route("POST", PATH, Reply(json=completion(related_questions=related)))
    result = await perplexity(replay, client).search(SearchRequest("q"))
    assert result.related == (("Kept?",) if isinstance(related, list) else ())


async def test_built_from_the_environment(
    replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERPLEXITY_API_KEY", CANARY)
    monkeypatch.setenv("PERPLEXITY_BASE_URL", replay.url)
    monkeypatch.setenv("PERPLEXITY_MODEL", "sonar-pro")
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "perplexity")
    reply = completion(
        citations=CITATIONS, search_results=SEARCH_RESULTS, related_questions=RELATED
    )
    replay.route("POST", PATH, Reply(json=reply))
    async with build_runtime() as runtime:
        result = await runtime.search(SearchRequest("python 3.13", num_search_results=5))
    assert result.provider == "perplexity"
    assert result.content == ANSWER
    assert result.related == tuple(RELATED)
    assert len(result.citations) == 3
    sent = replay.requests[0].json()
    assert (sent["model"], sent["num_search_results"]) == ("sonar-pro", 5)
