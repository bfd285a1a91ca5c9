"""Rate limits: a provider paced by ``<ID>_REQUESTS_PER_SECOND``, and the one retry a 429 with a
``Retry-After`` gets, against a local Brave replay that enforces one request a second."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from pathlib import Path

import httpx
import pytest

from replay_server import Recorded, ReplayServer, Reply
from webreach.config import ConfigError, build_runtime, load_settings
from webreach.seam import SearchRequest, WebError, WebErrorCode
from webreach.tools import ToolOptions, web_search_tool

PATH = "/res/v1/web/search"
KEY = "brave-pacing-canary-5d1e"
QUERIES = ["first question", "second question", "third question", "fourth question"]
INTERVAL = 1.0
"""What the replay enforces: one request a second."""
SLACK = 0.5
"""How much closer than ``INTERVAL`` two arrivals may be seen on a busy machine (a request held
up on its way while the next is not); unpaced, they arrive together."""


def brave_answer(query: str) -> Reply:
    slug = query.replace(" ", "-")
    return Reply(
        json={
            "type": "search",
            "web": {
                "type": "search",
                "results": [
                    {
                        "title": f"About {query}",
                        "url": f"https://example.com/{slug}",
                        "description": f"What {query} means.",
                        "type": "search_result",
                    }
                ],
            },
        }
    )


class OnePerSecond:
    """Brave's free plan as a replay: a request closer than ``INTERVAL - SLACK / 2`` to the last
    one it answered gets 429 with ``Retry-After: 1``; every arrival's time is kept."""

    def __init__(self) -> None:
        self.arrivals: list[float] = []
        self.refused = 0
        self._answered: float | None = None
        self._lock = threading.Lock()

    def __call__(self, request: Recorded) -> Reply:
        with self._lock:
            now = time.monotonic()
            self.arrivals.append(now)
            if self._answered is not None and now - self._answered < INTERVAL - SLACK / 2:
                self.refused += 1
                return Reply(429, json={"error": "rate limited"}, headers={"Retry-After": "1"})
            self._answered = now
        return brave_answer(request.query["q"][0])

    def gaps(self) -> list[float]:
        times = sorted(self.arrivals)
        return [later - earlier for earlier, later in itertools.pairwise(times)]


def use_brave(monkeypatch: pytest.MonkeyPatch, replay: ReplayServer, **extra: str) -> None:
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "brave")
    monkeypatch.setenv("WEBREACH_CACHE_TTL", "0")
    monkeypatch.setenv("BRAVE_API_KEY", KEY)
    monkeypatch.setenv("BRAVE_BASE_URL", replay.url)
    for name, value in extra.items():
        monkeypatch.setenv(name, value)


async def four_queries() -> list[str]:
    options = ToolOptions(search_context_size="low")
    async with build_runtime() as runtime:
        result = await web_search_tool(runtime, options).execute({"queries": QUERIES})
    return [source.url for source in result.data.sources]


async def test_a_paced_four_query_call_succeeds_against_one_request_a_second(
    monkeypatch: pytest.MonkeyPatch, replay: ReplayServer
) -> None:
    limiter = OnePerSecond()
    replay.route("GET", PATH, limiter)
    use_brave(monkeypatch, replay, BRAVE_REQUESTS_PER_SECOND="1")

    urls = await four_queries()

    assert sorted(urls) == sorted(f"https://example.com/{q.replace(' ', '-')}" for q in QUERIES)
    assert len(limiter.arrivals) >= 4
    assert min(limiter.gaps()) >= INTERVAL - SLACK


async def test_unpaced_the_same_call_fails_on_the_rate_limit(
    monkeypatch: pytest.MonkeyPatch, replay: ReplayServer
) -> None:
    """The seed rule stands: one query that is still refused after its one retry fails the call."""
    limiter = OnePerSecond()
    replay.route("GET", PATH, limiter)
    use_brave(monkeypatch, replay)

    with pytest.raises(WebError) as caught:
        await four_queries()

    assert caught.value.status == 429
    assert "rate limited (HTTP 429)" in caught.value.message
    assert limiter.refused >= 1


async def test_the_pace_is_shared_by_runtimes_of_one_process(
    monkeypatch: pytest.MonkeyPatch, replay: ReplayServer
) -> None:
    limiter = OnePerSecond()
    replay.route("GET", PATH, limiter)
    use_brave(monkeypatch, replay, BRAVE_REQUESTS_PER_SECOND="1")

    async def one_caller(query: str) -> str:
        async with build_runtime() as runtime:
            result = await runtime.search(SearchRequest(query, max_results=3))
        return result.sources[0].url

    urls = await asyncio.gather(*(one_caller(q) for q in QUERIES[:3]))

    assert len(set(urls)) == 3
    assert min(limiter.gaps()) >= INTERVAL - SLACK


async def test_a_429_within_the_deadline_is_retried_once_after_retry_after(
    monkeypatch: pytest.MonkeyPatch, replay: ReplayServer
) -> None:
    replies = [Reply(429, json={}, headers={"Retry-After": "1"}), brave_answer("q")]
    arrivals: list[float] = []

    def script(_request: Recorded) -> Reply:
        arrivals.append(time.monotonic())
        return replies.pop(0)

    replay.route("GET", PATH, script)
    use_brave(monkeypatch, replay)
    async with build_runtime() as runtime:
        result = await runtime.search(SearchRequest("q"))

    assert [s.url for s in result.sources] == ["https://example.com/q"]
    assert len(arrivals) == 2
    assert arrivals[1] - arrivals[0] >= 1.0


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        ({"Retry-After": "3600"}, "a wait past the deadline"),
        ({}, "no Retry-After"),
    ],
)
async def test_a_429_that_cannot_be_waited_for_fails_at_once(
    monkeypatch: pytest.MonkeyPatch,
    replay: ReplayServer,
    headers: dict[str, str],
    why: str,
) -> None:
    replay.route("GET", PATH, Reply(429, json={}, headers=headers))
    use_brave(monkeypatch, replay, WEBREACH_SEARCH_TIMEOUT="20")
    async with build_runtime() as runtime:
        with pytest.raises(WebError) as caught:
            await runtime.search(SearchRequest("q"))

    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.status == 429, why
    assert len(replay.requests) == 1, why


async def test_a_second_429_fails_the_search(
    monkeypatch: pytest.MonkeyPatch, replay: ReplayServer
) -> None:
    replay.route("GET", PATH, Reply(429, json={}, headers={"Retry-After": "0"}))
    use_brave(monkeypatch, replay)
    async with build_runtime() as runtime:
        with pytest.raises(WebError) as caught:
            await runtime.search(SearchRequest("q"))

    assert caught.value.message == "brave: rate limited (HTTP 429), retry after 0 s"
    assert caught.value.retry_after == 0
    assert len(replay.requests) == 2


async def test_a_queue_longer_than_the_deadline_fails_fast_without_sending(
    monkeypatch: pytest.MonkeyPatch, replay: ReplayServer
) -> None:
    replay.route("GET", PATH, lambda request: brave_answer(request.query["q"][0]))
    use_brave(monkeypatch, replay, BRAVE_REQUESTS_PER_SECOND="0.01", WEBREACH_SEARCH_TIMEOUT="5")
    async with build_runtime() as runtime:
        await runtime.search(SearchRequest("first"))
        with pytest.raises(WebError) as caught:
            await runtime.search(SearchRequest("second"))

    assert caught.value.message == (
        "brave: paced at 0.01 requests a second, and no request could start within 5 s"
    )
    assert [r.query["q"] for r in replay.requests] == [["first"]]


def test_the_pace_is_read_from_webreach_toml() -> None:
    Path("webreach.toml").write_text("brave_requests_per_second = 0.5\n")
    from webreach.providers.search.brave import BraveSettings

    load_settings()
    assert BraveSettings().brave_requests_per_second == 0.5


@pytest.mark.parametrize("value", ["0", "-1", "fast"])
def test_an_invalid_pace_names_its_variable(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("BRAVE_REQUESTS_PER_SECOND", value)
    with pytest.raises(ConfigError) as caught:
        build_runtime()
    assert "BRAVE_REQUESTS_PER_SECOND" in str(caught.value)


async def test_the_retry_stays_within_the_first_attempts_deadline(
    monkeypatch: pytest.MonkeyPatch, replay: ReplayServer
) -> None:
    """The wait and the second attempt share the one deadline: a retry that hangs is cut off
    at it, and named after it."""
    never = threading.Event()
    replies = [Reply(429, json={}, headers={"Retry-After": "0"}), Reply(hold=never)]
    replay.route("GET", PATH, lambda _request: replies.pop(0))
    use_brave(monkeypatch, replay, WEBREACH_SEARCH_TIMEOUT="1")
    try:
        async with build_runtime() as runtime:
            with pytest.raises(WebError) as caught:
                await runtime.search(SearchRequest("q"))
    finally:
        never.set()
    assert caught.value.message == "brave: no answer within 1 s"
    assert len(replay.requests) == 2


async def test_without_a_deadline_a_long_retry_after_is_not_waited_for(
    replay: ReplayServer,
) -> None:
    from webreach.providers.search.brave import BraveSearchProvider
    from webreach.seam import WebRuntime
    from webreach.seam.pacing import LONGEST_RETRY_WAIT

    wait = str(int(LONGEST_RETRY_WAIT * 10))
    replay.route("GET", PATH, Reply(429, json={}, headers={"Retry-After": wait}))
    async with httpx.AsyncClient() as client, WebRuntime() as runtime:  # no search_timeout
        brave = BraveSearchProvider(api_key="k", client=client, base_url=replay.url)
        runtime.register_search_provider(brave)
        with pytest.raises(WebError) as caught:
            await asyncio.wait_for(runtime.search(SearchRequest("q")), 60)
    assert caught.value.status == 429
    assert len(replay.requests) == 1
