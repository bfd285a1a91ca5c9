"""Synthetic against a local server that replays answers shaped like Synthetic's search API
(``POST /v2/search`` with a query; ``results[]`` of url, title, text, published)."""

from __future__ import annotations

import httpx
import pytest

from provider_failure_cases import FAILURES, check_failure
from replay_server import ReplayServer, Reply
from webreach.config import build_runtime
from webreach.providers.search.synthetic import SyntheticSearchProvider, SyntheticSettings
from webreach.seam import SearchRequest, WebError

CANARY = "syn_canary-key-92c4d1"
PATH = "/v2/search"

SYNTHETIC_RESPONSE = {
    "results": [
        {
            "url": "https://docs.python-requests.org/en/latest/",
            "title": "Requests: HTTP for Humans™ — Requests 2.32.3 documentation",
            "text": "Requests is an elegant and simple HTTP library for Python, built for"
            " human beings.",
            "published": "2025-11-05T00:00:00.000Z",
        },
        {
            "url": "https://pypi.org/project/requests/",
            "title": "requests · PyPI",
            "text": "",
        },
        {"url": "https://github.com/psf/requests", "title": "", "published": None},
        {"url": "https://realpython.com/python-requests/", "title": "Python's Requests Library"},
        {"title": "dropped: no url", "text": "x"},
    ]
}


def synthetic(replay: ReplayServer, client: httpx.AsyncClient) -> SyntheticSearchProvider:
    return SyntheticSearchProvider(api_key=CANARY, base_url=replay.url + "/", client=client)


async def test_request_shape(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=SYNTHETIC_RESPONSE))
    request = SearchRequest(
        "python requests library documentation",
        max_results=2,
        recency="week",
        max_tokens=100,
        temperature=0.5,
    )
    await synthetic(replay, client).search(request)

    sent = replay.requests[0]
    assert (sent.method, sent.path, sent.query) == ("POST", PATH, {})
    assert sent.headers["authorization"] == f"Bearer {CANARY}"
    assert sent.headers["content-type"] == "application/json"
    # Only the query: the API takes no count, no filter, and no model settings.
    assert sent.json() == {"query": "python requests library documentation"}


async def test_mapping(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=SYNTHETIC_RESPONSE))
    result = await synthetic(replay, client).search(SearchRequest("q"))

    first, second, third, fourth = result.sources
    assert first.url == "https://docs.python-requests.org/en/latest/"
    assert first.title == "Requests: HTTP for Humans™ — Requests 2.32.3 documentation"
    assert first.snippet == (
        "Requests is an elegant and simple HTTP library for Python, built for human beings."
    )
    assert first.published_at == "2025-11-05T00:00:00.000Z"
    assert (second.title, second.snippet, second.published_at) == ("requests · PyPI", None, None)
    assert (third.title, third.snippet, third.published_at) == (None, None, None)
    assert fourth.title == "Python's Requests Library"
    assert (result.content, result.citations, result.related, result.queries) == (
        None,
        (),
        (),
        (),
    )


@pytest.mark.parametrize(
    ("request_", "count"),
    [
        pytest.param(SearchRequest("q"), 4, id="all without a count"),
        pytest.param(SearchRequest("q", max_results=2), 2, id="max_results"),
        pytest.param(SearchRequest("q", max_results=2, num_search_results=3), 3, id="breadth"),
        pytest.param(SearchRequest("q", max_results=20), 4, id="fewer than asked"),
    ],
)
async def test_sources_are_cut_to_the_breadth(
    replay: ReplayServer, client: httpx.AsyncClient, request_: SearchRequest, count: int
) -> None:
    replay.route("POST", PATH, Reply(json=SYNTHETIC_RESPONSE))
    result = await synthetic(replay, client).search(request_)
    assert len(result.sources) == count


async def test_nothing_found_is_an_empty_result(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json={"results": []}))
    result = await synthetic(replay, client).search(SearchRequest("q"))
    assert (result.sources, result.has_content()) == ((), False)


@pytest.mark.parametrize(("reply", "expected"), FAILURES)
async def test_failures_are_provider_errors_naming_synthetic(
    replay: ReplayServer, client: httpx.AsyncClient, reply: Reply, expected: str
) -> None:
    replay.route("POST", PATH, reply)
    with pytest.raises(WebError) as caught:
        await synthetic(replay, client).search(SearchRequest("q"))
    check_failure(caught.value, "synthetic", reply, expected)


async def test_the_key_never_reaches_errors_or_repr(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    echo = {"error": f"invalid key {CANARY}"}
    provider = synthetic(replay, client)
    for status in (401, 429, 500):
        replay.route("POST", PATH, Reply(status, json=echo))
        with pytest.raises(WebError) as caught:
            await provider.search(SearchRequest("q"))
        assert CANARY not in caught.value.message + repr(caught.value) + str(caught.value)
    assert CANARY not in repr(provider)


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert SyntheticSearchProvider(api_key=CANARY, client=client).available()
    assert not SyntheticSearchProvider(api_key=None, client=client).available()
    assert not SyntheticSearchProvider(api_key="", client=client).available()


def test_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    assert SyntheticSettings().synthetic_base_url is None
    monkeypatch.setenv("SYNTHETIC_API_KEY", CANARY)
    monkeypatch.setenv("SYNTHETIC_BASE_URL", "http://127.0.0.1:1234")
    settings = SyntheticSettings()
    assert settings.synthetic_api_key is not None
    assert settings.synthetic_api_key.get_secret_value() == CANARY
    assert settings.synthetic_base_url == "http://127.0.0.1:1234"
    assert CANARY not in repr(settings) + str(settings.model_dump())


async def test_the_runtime_builds_it_and_the_seam_filters_after(
    replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay.route("POST", PATH, Reply(json=SYNTHETIC_RESPONSE))
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "synthetic")
    monkeypatch.setenv("SYNTHETIC_API_KEY", CANARY)
    monkeypatch.setenv("SYNTHETIC_BASE_URL", replay.url)
    async with build_runtime() as runtime:
        result = await runtime.search(SearchRequest("q", exclude_domains=("pypi.org",)))
    assert result.provider == "synthetic"
    assert "https://pypi.org/project/requests/" not in [s.url for s in result.sources]
    assert len(result.sources) == 3
    assert result.filtered_after == {"exclude_domains"}
    assert replay.requests[0].json() == {"query": "q"}
