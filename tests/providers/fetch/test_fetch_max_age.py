"""``max_age``: a cached page older than that many seconds is fetched again, 0 always fetches;
on ``web_fetch`` (and so MCP), ``/v1/fetch`` and ``webreach fetch --max-age``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from _servers import LocalServer, respond
from cli_helpers import clean_env, run_cli
from providers_for_tests import register_owned
from replay_server import ReplayServer, Reply
from webreach.cache import MemoryStore
from webreach.providers.fetch.http import HttpFetchProvider
from webreach.seam import FetchRequest, InvalidValueError, WebRuntime
from webreach.seam.cache import cache_key
from webreach.tools import ToolError, web_fetch_tool


def counting() -> Any:
    seen = {"n": 0}

    async def route(exchange: Any) -> None:
        seen["n"] += 1
        await respond(exchange, 200, f"copy {seen['n']}".encode(), {"Content-Type": "text/plain"})

    return route


def runtime(store: MemoryStore) -> WebRuntime:
    rt = WebRuntime(cache=store)
    register_owned(rt, HttpFetchProvider(allow="127.0.0.1"))
    return rt


async def test_zero_always_fetches_and_a_long_age_reads_the_cache() -> None:
    async with LocalServer({"/": counting()}) as srv, runtime(MemoryStore()) as rt:
        url = srv.url("/")
        first = await rt.fetch(FetchRequest(url))
        cached = await rt.fetch(FetchRequest(url, max_age=3600))
        fresh = await rt.fetch(FetchRequest(url, max_age=0))
        after = await rt.fetch(FetchRequest(url))
    assert [r.body.content for r in (first, cached, fresh, after)] == [
        "copy 1",
        "copy 1",
        "copy 2",
        "copy 2",
    ]


async def test_an_entry_older_than_max_age_is_fetched_again() -> None:
    """An entry written before pages carried their fetch time counts as too old."""
    store = MemoryStore()
    async with LocalServer({"/": counting()}) as srv, runtime(store) as rt:
        url = srv.url("/")
        await rt.fetch(FetchRequest(url))
        stale = {"url": url, "status_code": 200, "body": {"kind": "text", "content": "old"}}
        stale["truncated"] = False
        provider = HttpFetchProvider(allow="127.0.0.1")
        key = cache_key("fetch", "http", {"scope": provider.cache_scope()}, url)
        await provider.aclose()
        await store.set(key, json.dumps(stale).encode(), 600)
        plain = await rt.fetch(FetchRequest(url))
        aged = await rt.fetch(FetchRequest(url, max_age=60))
    assert plain.body.content == "old"
    assert aged.body.content == "copy 2"


@pytest.mark.parametrize("value", [-1, float("nan")])
def test_a_negative_max_age_is_refused(value: float) -> None:
    with pytest.raises(InvalidValueError) as caught:
        FetchRequest("https://example.com/", max_age=value)
    assert caught.value.field == "max_age"


async def test_web_fetch_takes_max_age() -> None:
    async with LocalServer({"/": counting()}) as srv, runtime(MemoryStore()) as rt:
        tool = web_fetch_tool(rt)
        assert "max_age" in tool.input_schema["properties"]
        first = await tool.execute({"url": srv.url("/")})
        again = await tool.execute({"url": srv.url("/"), "max_age": 0})
        with pytest.raises(ToolError) as caught:
            await tool.execute({"url": srv.url("/"), "max_age": -5})
    assert "copy 1" in first.text and "copy 2" in again.text
    assert caught.value.code == "INVALID_ARGUMENTS" and "max_age" in caught.value.message


@pytest.mark.slow
def test_webreach_fetch_max_age(replay: ReplayServer, tmp_path: Any) -> None:
    count = {"n": 0}

    def reply(_request: Any) -> Reply:
        count["n"] += 1
        return Reply(body=f"copy {count['n']}".encode(), headers={"content-type": "text/plain"})

    replay.route("GET", "/p", reply)
    env = clean_env(
        WEBREACH_FETCH_ALLOW="127.0.0.1", WEBREACH_CACHE=f"sqlite:///{tmp_path}/cache.db"
    )
    url = f"{replay.url}/p"
    contents = [
        json.loads(run_cli("fetch", url, "--json", *extra, env=env).stdout)["content"]
        for extra in ((), (), ("--max-age", "0"), ("--max-age", "3600"))
    ]
    assert contents == ["copy 1", "copy 1", "copy 2", "copy 2"]
    bad = run_cli("fetch", url, "--max-age", "-1", env=env)
    assert bad.returncode == 2
