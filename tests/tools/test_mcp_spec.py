"""``webreach mcp`` as the MCP specification asks, through the official SDK's client over stdio
and streamable HTTP: titles and output schemas that the structured results match, a tool list
clients may cache, progress while a slow call runs, and a per-session rate limit."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2
import jsonschema
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

import test_mcp
from providers_for_tests import ScriptedSearch, sources
from replay_server import ReplayServer, Reply
from slow_provider import TricklingServer
from test_mcp import EXA_RESPONSE, PAGE, Connect, server_env, text_of
from webreach.seam import SearchRequest, SearchResult, WebRuntime
from webreach.tools.mcp.calls import CALL_WINDOW_S, OUTPUT_SCHEMAS, CallRateLimit
from webreach.tools.mcp.server import TOOLS_TTL_MS, create_server

SLOW_S = 3.0  # progress comes at 1 s and 2 s: a second of margin for a loaded machine
connect = test_mcp.connect  # the fixtures of test_mcp.py: a fresh ``webreach mcp`` per transport
http_servers = test_mcp.http_servers


async def test_tools_have_titles_and_results_match_their_output_schema(
    connect: Connect, replay: ReplayServer
) -> None:
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    replay.route("GET", "/page", Reply(body=PAGE, headers={"content-type": "text/html"}))
    env = server_env(replay, WEBREACH_SEARCH_CONTEXT_SIZE="low")
    async with connect(env, mode="legacy") as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {name: tool.title for name, tool in listed.items()} == {
            "web_search": "Web search",
            "web_fetch": "Read a web page",
        }
        for tool in listed.values():
            assert tool.output_schema is not None
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        found = await client.call_tool("web_search", {"queries": ["python 3.13"]})
        page = await client.call_tool("web_fetch", {"url": f"{replay.url}/page"})
    for name, result in (("web_search", found), ("web_fetch", page)):
        assert not result.is_error
        jsonschema.validate(result.structured_content, listed[name].output_schema or {})
    # The text block is still what the model reads: the web content, not the JSON.
    assert text_of(found).startswith('Web search for "python 3.13": 2 sources')
    assert "The page text for the MCP test" in text_of(page)
    assert not text_of(page).lstrip().startswith("{")


async def test_an_in_process_answer_matches_the_search_schema() -> None:
    """In process, through the SDK's memory transport, with a provider's written answer."""
    runtime = WebRuntime()
    answers = {"q": SearchResult(sources=sources("https://example.com/q"), content="An answer.")}
    runtime.register_search_provider(ScriptedSearch(answers=answers))
    async with Client(create_server(runtime), mode="legacy") as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        result = await client.call_tool("web_search", {"queries": ["q"]})
    assert not result.is_error
    assert listed["web_search"].output_schema is not None
    assert result.structured_content is not None
    assert result.structured_content["content"] == "An answer."
    jsonschema.validate(result.structured_content, listed["web_search"].output_schema)


async def test_the_tool_list_may_be_cached(connect: Connect, replay: ReplayServer) -> None:
    async with connect(server_env(replay), mode="auto") as client:
        listed = await client.list_tools()
    assert listed.ttl_ms == TOOLS_TTL_MS
    assert listed.cache_scope == "public"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_slow_search_sends_progress_before_its_result(
    connect: Connect, replay: ReplayServer, mode: str
) -> None:
    arrived: list[tuple[float, str | None, float]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        arrived.append((progress, message, time.monotonic()))

    with TricklingServer(interval=0, delay=SLOW_S) as slow:
        env = server_env(replay, WEBREACH_SEARCH_CONTEXT_SIZE="low") | {"EXA_BASE_URL": slow.url}
        async with connect(env, mode=mode) as client:
            await client.list_tools()
            result = await client.call_tool(
                "web_search", {"queries": ["slow"]}, progress_callback=on_progress
            )
            answered = time.monotonic()
    assert not result.is_error, text_of(result)
    assert "A result that took its time" in text_of(result)
    assert arrived, "no progress notification for a slow call"
    assert all(at <= answered for _, _, at in arrived)
    assert [p for p, _, _ in arrived] == sorted({p for p, _, _ in arrived})
    assert arrived[0][1] == "web_search: still working after 1 s"


@pytest.mark.slow  # waits for the progress notice a second in
async def test_progress_in_process_with_a_slow_provider() -> None:
    async def slow(request: SearchRequest) -> SearchResult:
        import anyio

        await anyio.sleep(SLOW_S)
        return SearchResult(sources=sources("https://example.com/slow"))

    runtime = WebRuntime()
    runtime.register_search_provider(ScriptedSearch(behaviour=slow))
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with Client(create_server(runtime), mode="legacy") as client:
        result = await client.call_tool(
            "web_search", {"queries": ["q"]}, progress_callback=on_progress
        )
        quick = await client.call_tool("web_fetch", {"url": "http://10.0.0.1/"})
    assert not result.is_error
    assert progress[:2] == [1.0, 2.0]
    assert quick.is_error  # a quick call (blocked at once) finished before any progress


async def test_calls_over_the_session_limit_are_refused_with_when_to_retry(
    connect: Connect, replay: ReplayServer
) -> None:
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    env = server_env(replay, WEBREACH_MCP_CALLS_PER_MINUTE="2", WEBREACH_SEARCH_CONTEXT_SIZE="low")
    async with connect(env) as client:
        first = await client.call_tool("web_search", {"queries": ["a"]})
        second = await client.call_tool("web_search", {"queries": ["b"]})
        third = await client.call_tool("web_search", {"queries": ["c"]})
        fetch = await client.call_tool("web_fetch", {"url": f"{replay.url}/page"})
    assert not first.is_error and not second.is_error
    for refused, name in ((third, "web_search"), (fetch, "web_fetch")):
        assert refused.is_error
        assert text_of(refused).startswith(f"Error: {name} failed with RATE_LIMITED: ")
        assert "retry after" in text_of(refused)
        assert refused.structured_content is None
        assert refused.meta is not None
        error: dict[str, Any] = refused.meta["webreach/error"]
        assert error["code"] == "RATE_LIMITED"
        assert 1 <= error["retry_after"] <= 60
        assert f"retry after {error['retry_after']} s" in text_of(refused)
    assert len(replay.requests) == 2, "a refused call never reaches a provider"


def test_the_limit_is_per_session_and_slides() -> None:
    now = [1000.0]
    limit = CallRateLimit(2, clock=lambda: now[0])
    assert limit.admit("a") is None
    now[0] += 10
    assert limit.admit("a") is None
    assert limit.admit("a") == 50
    assert limit.admit("b") is None, "another session has its own budget"
    now[0] += CALL_WINDOW_S - 10
    assert limit.admit("a") is None, "the first call left the window"
    assert limit.admit("a") == 10


def test_an_invalid_limit_fails_before_serving() -> None:
    from cli_helpers import clean_env, run_cli

    env = clean_env(WEBREACH_MCP_CALLS_PER_MINUTE="0")
    done = run_cli("mcp", env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "WEBREACH_MCP_CALLS_PER_MINUTE=0: Input should be greater than 0" in done.stderr


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_each_http_session_has_its_own_budget_and_sessionless_calls_one_per_address(
    replay: ReplayServer,
    tmp_path: Path,
    http_servers: list[subprocess.Popen[bytes]],
    mode: str,
) -> None:
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    env = server_env(replay, WEBREACH_MCP_CALLS_PER_MINUTE="1", WEBREACH_SEARCH_CONTEXT_SIZE="low")
    port, log = test_mcp.free_port(), tmp_path / "server-stderr.log"
    command = [sys.executable, "-m", "webreach", "mcp", "--http", "--port", str(port)]
    http_servers.append(test_mcp.spawn(command, env, tmp_path, log))
    test_mcp.wait_until_listening(http_servers[-1], port, log)
    url = f"http://127.0.0.1:{port}/mcp"
    async with Client(url, mode=mode) as first, Client(url, mode=mode) as second:
        assert not (await first.call_tool("web_search", {"queries": ["a"]})).is_error
        assert (await first.call_tool("web_search", {"queries": ["b"]})).is_error
        other = await second.call_tool("web_search", {"queries": ["c"]})
    if mode == "legacy":
        assert not other.is_error, "each MCP session has a budget of its own"
    else:  # 2026-07-28 has no sessions: the calls of one address share a budget
        assert other.is_error
        assert "RATE_LIMITED" in text_of(other)


async def test_sessionless_calls_with_inbound_keys_have_a_budget_per_key(
    replay: ReplayServer, tmp_path: Path, http_servers: list[subprocess.Popen[bytes]]
) -> None:
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    env = server_env(
        replay,
        WEBREACH_MCP_CALLS_PER_MINUTE="1",
        WEBREACH_SEARCH_CONTEXT_SIZE="low",
        WEBREACH_SERVER_API_KEYS="alice:alice-key-1234,bob:bob-key-5678",
    )
    port, log = test_mcp.free_port(), tmp_path / "server-stderr.log"
    command = [sys.executable, "-m", "webreach", "mcp", "--http", "--port", str(port)]
    http_servers.append(test_mcp.spawn(command, env, tmp_path, log))
    test_mcp.wait_until_listening(http_servers[-1], port, log)
    url = f"http://127.0.0.1:{port}/mcp"

    def keyed(key: str) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"})

    # The SDK leaves a client it is handed open: the test closes its own.
    async with (
        keyed("alice-key-1234") as alice_http,
        keyed("bob-key-5678") as bob_http,
        Client(streamable_http_client(url, http_client=alice_http)) as alice,
        Client(streamable_http_client(url, http_client=bob_http)) as bob,
    ):
        assert not (await alice.call_tool("web_search", {"queries": ["a"]})).is_error
        again = await alice.call_tool("web_search", {"queries": ["b"]})
        other = await bob.call_tool("web_search", {"queries": ["c"]})
    assert again.is_error and "RATE_LIMITED" in text_of(again), "one key shares one budget"
    assert not other.is_error, "another key from the same address has a budget of its own"
    assert len(replay.requests) == 2


def _type_lists(schema: Any, path: str = "") -> list[str]:
    if isinstance(schema, dict):
        here = [path or "/"] if isinstance(schema.get("type"), list) else []
        return here + [p for k, v in schema.items() for p in _type_lists(v, f"{path}/{k}")]
    if isinstance(schema, list):
        return [p for i, v in enumerate(schema) for p in _type_lists(v, f"{path}/{i}")]
    return []


@pytest.mark.parametrize("name", sorted(OUTPUT_SCHEMAS))
def test_output_schemas_spell_null_as_a_branch_not_a_type_list(name: str) -> None:
    schema = OUTPUT_SCHEMAS[name]
    jsonschema.Draft202012Validator.check_schema(schema)
    assert _type_lists(schema) == [], "a type list is less portable than anyOf branches"
    nullable = [v for v in schema["properties"].values() if "anyOf" in v]
    assert nullable, "the nullable fields are anyOf branches"
    for field in nullable:
        assert jsonschema.Draft202012Validator(field).is_valid(None)
        assert not jsonschema.Draft202012Validator(field).is_valid(True)
