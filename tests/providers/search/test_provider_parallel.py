"""Parallel against a local server that replays answers shaped like Parallel's Search API
(``POST /v1/search``: ``search_id``, ``results[]`` with excerpts, ``warnings``, ``usage``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from provider_failure_cases import FAILURES, check_failure
from replay_server import ReplayServer, Reply
from webreach.config import build_runtime
from webreach.providers.search.parallel import (
    ParallelSearchProvider,
    ParallelSettings,
)
from webreach.seam import Recency, SearchRequest, WebError

CANARY = "parallel-canary-key-3f9a0e"
PATH = "/v1/search"

PARALLEL_RESPONSE: dict[str, Any] = {
    "search_id": "search_e749586f-00f0-43a0-9f33-730a574d32b9",
    "results": [
        {
            "url": "https://www.un.org/en/about-us/history-of-the-un",
            "title": "History of the United Nations | United Nations",
            "publish_date": "2024-01-15",
            "excerpts": [
                "The United Nations officially came into existence on 24 October 1945,",
                "  when the Charter had been ratified by China, France, the Soviet Union, the"
                " United Kingdom, the United States and by a majority of other signatories.\n",
            ],
        },
        {
            "url": "http://un.org/",
            "title": "Welcome to the United Nations",
            "publish_date": None,
            "excerpts": [],
        },
        {"url": "https://en.wikipedia.org/wiki/United_Nations", "excerpts": ["", "  "]},
        {"title": "dropped: no url", "excerpts": ["x"]},
    ],
    "warnings": None,
    "usage": [{"name": "sku_search", "count": 1}],
}


def parallel(replay: ReplayServer, client: httpx.AsyncClient) -> ParallelSearchProvider:
    return ParallelSearchProvider(api_key=CANARY, base_url=replay.url + "/", client=client)


def settings(body: dict[str, object]) -> dict[str, Any]:
    advanced = body["advanced_settings"]
    assert isinstance(advanced, dict)
    return advanced


async def _sent(
    replay: ReplayServer, client: httpx.AsyncClient, request: SearchRequest
) -> dict[str, object]:
    replay.route("POST", PATH, Reply(json={"search_id": "s", "results": []}))
    await parallel(replay, client).search(request)
    body: dict[str, object] = replay.requests[-1].json()
    return body


async def test_request_shape(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=PARALLEL_RESPONSE))
    await parallel(replay, client).search(SearchRequest("when was the UN founded", 5))

    sent = replay.requests[0]
    assert (sent.method, sent.path, sent.query) == ("POST", PATH, {})
    assert sent.headers["x-api-key"] == CANARY
    assert "parallel-beta" not in sent.headers
    assert "authorization" not in sent.headers
    assert sent.headers["content-type"] == "application/json"
    assert sent.json() == {
        "objective": "when was the UN founded",
        "search_queries": ["when was the UN founded"],
        "mode": "fast",
        "advanced_settings": {
            "max_results": 5,
            "excerpt_settings": {"max_chars_per_result": 10000},
        },
    }


@pytest.mark.parametrize(
    ("request_", "count"),
    [
        pytest.param(SearchRequest("q"), 10, id="default"),
        pytest.param(SearchRequest("q", max_results=100), 20, id="capped"),
        pytest.param(SearchRequest("q", max_results=1), 1, id="one"),
        pytest.param(SearchRequest("q", max_results=3, num_search_results=15), 15, id="breadth"),
    ],
)
async def test_max_results_is_the_breadth_within_1_to_20(
    replay: ReplayServer, client: httpx.AsyncClient, request_: SearchRequest, count: int
) -> None:
    assert settings(await _sent(replay, client, request_))["max_results"] == count


async def test_a_query_too_long_for_a_keyword_search_is_cut_there_at_a_word(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """V1 requires ``search_queries``, each at most 200 characters; the objective stays whole."""
    long = "what " * 41
    body = await _sent(replay, client, SearchRequest(long))
    assert body["objective"] == long
    assert body["search_queries"] == [("what " * 40).strip()]
    assert (await _sent(replay, client, SearchRequest("x" * 200)))["search_queries"] == ["x" * 200]


async def test_mapping(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=PARALLEL_RESPONSE))
    result = await parallel(replay, client).search(SearchRequest("q"))

    first, second, third = result.sources
    assert first.url == "https://www.un.org/en/about-us/history-of-the-un"
    assert first.title == "History of the United Nations | United Nations"
    assert first.snippet == (
        "The United Nations officially came into existence on 24 October 1945,\n\nwhen the"
        " Charter had been ratified by China, France, the Soviet Union, the United Kingdom,"
        " the United States and by a majority of other signatories."
    )
    assert first.published_at == "2024-01-15"
    assert (second.title, second.snippet, second.published_at) == (
        "Welcome to the United Nations",
        None,
        None,
    )
    assert (third.title, third.snippet) == (None, None)
    assert (result.content, result.citations, result.related, result.queries) == (
        None,
        (),
        (),
        (),
    )
    assert result.unfiltered == frozenset()


def _days_ago(days: int) -> set[str]:
    """The date ``days`` ago, either side of a midnight the test may straddle."""
    now = datetime.now(UTC)
    return {(now - timedelta(days=days)).date().isoformat()} | {
        (now - timedelta(days=days, minutes=1)).date().isoformat()
    }


@pytest.mark.parametrize(("recency", "days"), [("day", 1), ("week", 7), ("month", 31)])
async def test_recency_is_the_source_policys_after_date(
    replay: ReplayServer, client: httpx.AsyncClient, recency: Recency, days: int
) -> None:
    body = await _sent(replay, client, SearchRequest("q", recency=recency))
    policy = settings(body)["source_policy"]
    assert isinstance(policy, dict)
    assert set(policy) == {"after_date"}
    assert policy["after_date"] in _days_ago(days)


async def test_domains_go_in_the_source_policy(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    include = await _sent(
        replay, client, SearchRequest("q", include_domains=("un.org", "who.int"), recency="year")
    )
    policy = settings(include)["source_policy"]
    assert isinstance(policy, dict)
    assert policy.pop("after_date") in _days_ago(366)
    assert policy == {"include_domains": ["un.org", "who.int"]}
    exclude = await _sent(replay, client, SearchRequest("q", exclude_domains=("reddit.com",)))
    assert settings(exclude)["source_policy"] == {"exclude_domains": ["reddit.com"]}


@pytest.mark.parametrize(
    ("include", "exclude", "policy", "unfiltered"),
    [
        pytest.param(
            ("un.org",),
            ("reddit.com",),
            {"include_domains": ["un.org"]},
            {"exclude_domains"},
            id="both: Parallel applies only the included",
        ),
        pytest.param(
            tuple(f"site{n}.org" for n in range(11)),
            (),
            None,
            {"include_domains"},
            id="too many included",
        ),
        pytest.param(
            (),
            tuple(f"site{n}.org" for n in range(12)),
            {"exclude_domains": [f"site{n}.org" for n in range(10)]},
            {"exclude_domains"},
            id="too many excluded: the first 10",
        ),
        pytest.param(
            tuple(f"in{n}.org" for n in range(11)),
            ("reddit.com",),
            {"exclude_domains": ["reddit.com"]},
            {"include_domains"},
            id="too many included, the excluded sent",
        ),
    ],
)
async def test_what_the_source_policy_cannot_say_is_left_to_the_seam(
    replay: ReplayServer,
    client: httpx.AsyncClient,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    policy: dict[str, list[str]] | None,
    unfiltered: set[str],
) -> None:
    replay.route("POST", PATH, Reply(json={"search_id": "s", "results": []}))
    request = SearchRequest("q", include_domains=include, exclude_domains=exclude)
    result = await parallel(replay, client).search(request)
    assert settings(replay.requests[0].json()).get("source_policy") == policy
    assert result.unfiltered == unfiltered


async def test_the_seam_applies_a_domain_parallel_could_not_take(
    replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_un_org = {**PARALLEL_RESPONSE, "results": PARALLEL_RESPONSE["results"][:2]}
    replay.route("POST", PATH, Reply(json=on_un_org))
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "parallel")
    monkeypatch.setenv("PARALLEL_API_KEY", CANARY)
    monkeypatch.setenv("PARALLEL_BASE_URL", replay.url)
    request = SearchRequest("q", include_domains=("un.org",), exclude_domains=("www.un.org",))
    async with build_runtime() as runtime:
        result = await runtime.search(request)
    assert settings(replay.requests[0].json())["source_policy"] == {"include_domains": ["un.org"]}
    assert [s.url for s in result.sources] == ["http://un.org/"]
    assert result.filtered_by_provider == {"include_domains"}
    assert result.filtered_after == {"exclude_domains"}


@pytest.mark.parametrize(("reply", "expected"), FAILURES)
async def test_failures_are_provider_errors_naming_parallel(
    replay: ReplayServer, client: httpx.AsyncClient, reply: Reply, expected: str
) -> None:
    replay.route("POST", PATH, reply)
    with pytest.raises(WebError) as caught:
        await parallel(replay, client).search(SearchRequest("q"))
    check_failure(caught.value, "parallel", reply, expected)


async def test_the_key_never_reaches_errors_or_repr(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    echo = {"error": {"message": f"invalid key {CANARY}", "detail": CANARY}}
    provider = parallel(replay, client)
    for status in (401, 429, 500):
        replay.route("POST", PATH, Reply(status, json=echo))
        with pytest.raises(WebError) as caught:
            await provider.search(SearchRequest("q"))
        assert CANARY not in caught.value.message + repr(caught.value) + str(caught.value)
    assert CANARY not in repr(provider)


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert ParallelSearchProvider(api_key=CANARY, client=client).available()
    assert not ParallelSearchProvider(api_key=None, client=client).available()
    assert not ParallelSearchProvider(api_key="", client=client).available()


def test_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ParallelSettings().parallel_base_url is None
    monkeypatch.setenv("PARALLEL_API_KEY", CANARY)
    monkeypatch.setenv("PARALLEL_BASE_URL", "http://127.0.0.1:1234")
    settings = ParallelSettings()
    assert settings.parallel_api_key is not None
    assert settings.parallel_api_key.get_secret_value() == CANARY
    assert settings.parallel_base_url == "http://127.0.0.1:1234"
    assert CANARY not in repr(settings) + str(settings.model_dump())


async def test_the_runtime_builds_it_from_the_environment(
    replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay.route("POST", PATH, Reply(json=PARALLEL_RESPONSE))
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "parallel")
    monkeypatch.setenv("PARALLEL_API_KEY", CANARY)
    monkeypatch.setenv("PARALLEL_BASE_URL", replay.url)
    async with build_runtime() as runtime:
        result = await runtime.search(SearchRequest("when was the UN founded"))
    assert result.provider == "parallel"
    assert len(result.sources) == 3
    assert replay.requests[0].headers["x-api-key"] == CANARY


async def test_the_country_is_the_location(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    body = await _sent(replay, client, SearchRequest("q", country="de"))
    assert settings(body)["location"] == "DE"
    assert set(body) == {"objective", "search_queries", "mode", "advanced_settings"}
