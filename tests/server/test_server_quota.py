"""A key's daily search and fetch quota holds under concurrent requests: units are reserved
from the day counter before any web call runs (one atomic increment, the excess given back at
once), so concurrent turns and endpoint calls, on one replica or two sharing a redis-server,
never make more than the key's day allows; what a turn reserved and did not use is given back
when it ends, also when its client leaves."""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

import httpx
import openai
import pytest
import redis

from providers_for_tests import ScriptedFetch, ScriptedSearch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import openai_client
from server_harness import LiveServer, default_search
from webreach.cache import MemoryStore, RedisStore
from webreach.seam import CacheStore, FetchResult, HtmlBody, WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.settings.server import KeyLimits
from webreach.tools import ToolOptions

ALICE = "sk-alice-secret-4242"
ADMIN = "admin-secret-7777"
KEYS = f"alice:{ALICE}"
USER = [{"role": "user", "content": "hi"}]
WEB = [{"type": "deepseek_web_search"}]
AUTH = {"authorization": f"Bearer {ALICE}"}
PAGES = [f"https://page-{n}.example/" for n in range(3)]


def settings(upstream: ScriptedUpstream, limits: KeyLimits) -> ServerSettings:
    return ServerSettings(
        upstream_base_url=upstream.url,
        upstream_api_key="upstream-key",
        signing_key="test-signing-key-of-32-bytes-or-more",
        server_api_keys=KEYS,
        server_key_limits={"alice": limits},
        admin_api_key=ADMIN,
    )


def slow_search(seconds: float = 0.3) -> ScriptedSearch:
    """Searches that take a while, so concurrent requests overlap."""
    quick = default_search()
    assert quick.behaviour is not None
    answer = quick.behaviour

    async def slowly(request: Any) -> Any:
        await asyncio.sleep(seconds)
        return await answer(request)

    return ScriptedSearch("replay", behaviour=slowly)


def app_for(
    config: ServerSettings, search: ScriptedSearch, store: CacheStore | None = None
) -> tuple[Any, ScriptedFetch]:
    body = HtmlBody("<html><title>A page</title><p>Some text.</p></html>")
    fetch = ScriptedFetch(pages={url: FetchResult(url, 200, body) for url in PAGES})
    runtime = WebRuntime()
    runtime.register_search_provider(search)
    runtime.register_fetch_provider(fetch)
    app = create_app(config, runtime, ToolOptions(), store=store or MemoryStore())
    return app, fetch


def day_counter(redis_url: str, tool: str = "searches") -> int:
    client = redis.Redis.from_url(redis_url)
    try:
        value = client.get(f"webreach:tenant:alice:{tool}:{int(time.time() // 86_400)}")
    finally:
        client.close()
    return int(value) if value is not None else 0


def usage(url: str) -> dict[str, int]:
    answer = httpx.get(f"{url}/admin/usage", headers={"authorization": f"Bearer {ADMIN}"})
    assert answer.status_code == 200, answer.text
    shown: dict[str, int] = answer.json()["keys"]["alice"]
    return shown


def ran_calls(reply: Any) -> list[dict[str, Any]]:
    steps = (reply.choices[0].message.model_extra or {}).get("server_tool_calls") or []
    return [call for step in steps for call in step["calls"]]


def chat(url: str) -> openai.OpenAI:
    return openai_client(url + "/v1", ALICE, timeout=30)


def until(condition: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


def searching_model(upstream: ScriptedUpstream) -> None:
    """A model that searches at every step it is offered tools, and answers once withdrawn."""
    numbers = itertools.count()

    def respond(body: dict[str, Any]) -> Step:
        if body.get("tools"):
            return Step(calls=[Call("web_search", {"queries": [f"query {next(numbers)}"]})])
        return Step(content="ok")

    upstream.respond = respond


@pytest.fixture
def two_replicas(
    upstream: ScriptedUpstream, redis_url: str
) -> Iterator[tuple[list[str], list[ScriptedSearch]]]:
    config = settings(upstream, KeyLimits(searches_per_day=2))
    searches = [slow_search(), slow_search()]
    with ExitStack() as stack:
        urls = [
            stack.enter_context(LiveServer(app_for(config, s, RedisStore(redis_url))[0])).url
            for s in searches
        ]
        yield urls, searches


def test_concurrent_turns_on_two_replicas_make_exactly_the_days_searches(
    upstream: ScriptedUpstream,
    two_replicas: tuple[list[str], list[ScriptedSearch]],
    redis_url: str,
) -> None:
    urls, searches = two_replicas
    searching_model(upstream)

    def turn(n: int) -> Any:
        try:
            return chat(urls[n % 2]).chat.completions.create(
                model="m",
                messages=USER,  # type: ignore[arg-type]
                tools=WEB,  # type: ignore[list-item]
            )
        except openai.RateLimitError as refused:
            return refused

    with ThreadPoolExecutor(6) as pool:
        outcomes = list(pool.map(turn, range(6)))
    assert sum(len(s.calls) for s in searches) == 2
    replies = [o for o in outcomes if not isinstance(o, openai.RateLimitError)]
    assert replies, "at least the first turn is let in"
    calls = [call for reply in replies for call in ran_calls(reply)]
    assert [c["status"] for c in calls].count("completed") == 2
    for call in calls:
        if call["status"] != "completed":
            assert call["error"]["code"] == "max_uses_exceeded"
    for refused in outcomes:
        if isinstance(refused, openai.RateLimitError):
            assert "2 searches for today" in refused.message
    assert usage(urls[0])["searches"] == usage(urls[1])["searches"] == 2
    assert day_counter(redis_url) == 2


@pytest.mark.parametrize("path", ["/v1/search", "/openwebui/search"])
def test_concurrent_search_endpoint_calls_get_one_search_and_429s(
    upstream: ScriptedUpstream, path: str
) -> None:
    search = slow_search()
    app, _ = app_for(settings(upstream, KeyLimits(searches_per_day=1)), search)
    with LiveServer(app) as server:

        def call(_: int) -> httpx.Response:
            return httpx.post(
                server.url + path, json={"query": "iceland"}, headers=AUTH, timeout=30
            )

        with ThreadPoolExecutor(5) as pool:
            answers = list(pool.map(call, range(5)))
        statuses = sorted(a.status_code for a in answers)
        assert statuses == [200, 429, 429, 429, 429], [a.text for a in answers]
        assert len(search.calls) == 1
        for refused in (a for a in answers if a.status_code == 429):
            assert 1 <= int(refused.headers["retry-after"]) <= 86_400
            error = refused.json()["error"]
            assert error["code"] == "RATE_LIMITED"
            assert error["message"] == "quota: key 'alice' has made its 1 searches for today (UTC)"
            assert ALICE not in refused.text
        assert usage(server.url)["searches"] == 1


def test_the_loader_reads_only_the_pages_the_day_has_left(upstream: ScriptedUpstream) -> None:
    app, fetch = app_for(settings(upstream, KeyLimits(fetches_per_day=2)), default_search())
    with LiveServer(app) as server:
        loaded = httpx.post(
            server.url + "/openwebui/loader", json={"urls": PAGES}, headers=AUTH, timeout=30
        )
        assert loaded.status_code == 200, loaded.text
        assert [d["metadata"]["source"] for d in loaded.json()] == PAGES[:2]
        assert fetch.calls == PAGES[:2]
        refused = httpx.post(
            server.url + "/v1/fetch", json={"url": PAGES[2]}, headers=AUTH, timeout=30
        )
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "RATE_LIMITED"
        assert "2 fetches for today" in refused.json()["error"]["message"]
        assert usage(server.url)["fetches"] == 2


def test_what_a_turn_reserved_and_did_not_use_is_given_back(
    upstream: ScriptedUpstream, redis_url: str
) -> None:
    """The turn holds its whole search budget while it runs (so nothing else can spend it),
    and gives back what it did not use when it ends."""
    search = default_search()
    config = settings(upstream, KeyLimits(searches_per_day=5))
    held = threading.Event()
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["one"]})]), Step(content="ok", hold=held)
    )
    with LiveServer(app_for(config, search, RedisStore(redis_url))[0]) as server:
        client = chat(server.url)
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(
                client.chat.completions.create,
                model="m",
                messages=USER,  # type: ignore[arg-type]
                tools=WEB,  # type: ignore[list-item]
            )
            try:
                until(lambda: len(upstream.requests) == 2)
                assert day_counter(redis_url) == 5  # the turn's 5 searches are reserved
            finally:
                held.set()
            assert [c["status"] for c in ran_calls(first.result())] == ["completed"]
        until(lambda: day_counter(redis_url) == 1)
        calls = [Call("web_search", {"queries": [f"q{n}"]}) for n in range(5)]
        upstream.queue(Step(calls=calls), Step(content="ok"))
        reply = client.chat.completions.create(model="m", messages=USER, tools=WEB)  # type: ignore[arg-type, list-item]
        assert [c["status"] for c in ran_calls(reply)] == ["completed"] * 4 + ["failed"]
        assert len(search.calls) == 5
        assert day_counter(redis_url) == 5
        assert usage(server.url)["searches"] == 5


def test_a_client_that_leaves_mid_turn_gives_back_its_reservation(
    upstream: ScriptedUpstream, redis_url: str
) -> None:
    search = default_search()
    config = settings(upstream, KeyLimits(searches_per_day=3))
    upstream.queue(Step(calls=[Call("web_search", {"queries": ["one"]})]), Step(hang=True))
    with LiveServer(app_for(config, search, RedisStore(redis_url))[0]) as server:
        body = {"model": "m", "messages": USER, "tools": WEB, "stream": True}
        with httpx.stream(
            "POST", server.url + "/v1/chat/completions", json=body, headers=AUTH, timeout=30
        ) as streamed:
            assert streamed.status_code == 200
            lines = streamed.iter_lines()
            until(lambda: upstream.waiting == 1)
            next(lines)
            assert day_counter(redis_url) == 3  # reserved while the turn runs
        # The client has gone: the turn ends and gives back the 2 searches it did not make.
        until(lambda: day_counter(redis_url) == 1)
        calls = [Call("web_search", {"queries": [f"q{n}"]}) for n in range(3)]
        upstream.queue(Step(calls=calls), Step(content="ok"))
        reply = chat(server.url).chat.completions.create(model="m", messages=USER, tools=WEB)  # type: ignore[arg-type, list-item]
        assert [c["status"] for c in ran_calls(reply)] == ["completed"] * 2 + ["failed"]
        assert len(search.calls) == 3


class _LostStore:
    """A counter store whose server has gone away."""

    async def count(self, key: str, amount: int, ttl: float | None) -> int:
        raise ConnectionError("redis is gone")

    async def counted(self, key: str) -> int:
        raise ConnectionError("redis is gone")


def test_a_reservation_past_the_limit_is_given_back_at_once() -> None:
    from webreach.server.tenants import DayQuota, _LocalCounters

    async def run() -> None:
        counters = _LocalCounters()
        quota = DayQuota(counters, "alice", KeyLimits(searches_per_day=2))
        key = f"webreach:tenant:alice:searches:{int(time.time() // 86_400)}"
        assert await quota.take("searches", 5) == 2
        assert await counters.counted(key) == 2
        assert await quota.take("searches", 1) == 0
        assert await counters.counted(key) == 2  # never left above the limit
        await quota.give_back("searches", 1)
        assert await counters.counted(key) == 1
        assert await quota.take("searches", 3) == 1
        assert await quota.take("fetches", 7) == 7  # no fetch limit
        # Giving back more than was held returns only what was held.
        await quota.give_back("searches", 10)
        assert await counters.counted(key) == 0

    asyncio.run(run())


def test_a_lost_store_lets_the_reservation_through(caplog: pytest.LogCaptureFixture) -> None:
    from webreach.server.tenants import DayQuota

    async def run() -> None:
        quota = DayQuota(_LostStore(), "alice", KeyLimits(searches_per_day=2))  # type: ignore[arg-type]
        assert await quota.take("searches", 5) == 5
        await quota.give_back("searches", 5)

    caplog.set_level(logging.WARNING, logger="webreach.server")
    asyncio.run(run())
    assert "key quota not reserved: ConnectionError" in caplog.text
