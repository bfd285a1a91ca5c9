"""``webreach serve --log-level debug`` answers "why didn't it search?": each upstream step's
tools and ``tool_choice``, each step's calls and the budget left, and why the loop stopped,
read from the process's stderr as an operator reads it (text and JSON), and none of it at
``info``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from replay_server import ReplayServer
from scripted_upstream import Call, ScriptedUpstream, Step
from test_server_logs import (
    SEARCH,
    USER,
    Served,
    exa_results,
    field,
    search_then_answer,
    server_env,
    serving,
)

SIGNED = "https://page.invalid/report?sig=SIGNED-5521"


@dataclass
class Debug:
    upstream: ScriptedUpstream
    served: Served

    def lines_of(self, request_id: str) -> list[str]:
        return [line for line in self.served.lines() if f"id={request_id}]" in line]


@pytest.fixture(scope="module")
def debug(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Debug]:
    with ScriptedUpstream() as upstream, ReplayServer() as exa:
        exa.route("POST", "/search", exa_results)
        env = server_env(upstream.url, exa.url)
        with serving(tmp_path_factory.mktemp("debug"), env, "--log-level", "debug") as served:
            yield Debug(upstream, served)


def _access_id(served: Served, path: str, request_id: str) -> str:
    return field(served.wait_line(f"POST {path} 200", f"id={request_id}"), "id")


def test_a_turn_that_searches_says_what_it_offered_called_and_why_it_stopped(
    debug: Debug,
) -> None:
    debug.upstream.queue(*search_then_answer())
    response = debug.served.chat().chat.completions.with_raw_response.create(
        model="m", messages=USER, tools=SEARCH, tool_choice="auto"
    )
    request = response.headers["x-request-id"]
    _access_id(debug.served, "/v1/chat/completions", request)
    lines = debug.lines_of(request)
    expected = [
        " DEBUG step 1 to the upstream: function tools: web web_search; tool_choice=auto [",
        ' DEBUG step 1 calls: search ["iceland population"]; left: 4 searches, 10 reads [',
        " DEBUG step 2 to the upstream: function tools: web web_search; tool_choice=auto [",
        " DEBUG turn stopped after 2 steps: answer written (end_turn) [reason=answer ",
    ]
    for needle in expected:
        assert any(needle in line for line in lines), (needle, lines)


def test_a_turn_without_a_web_tool_says_so(debug: Debug) -> None:
    debug.upstream.queue(Step(content="Hello."))
    response = debug.served.chat().chat.completions.with_raw_response.create(
        model="m", messages=USER
    )
    request = response.headers["x-request-id"]
    _access_id(debug.served, "/v1/chat/completions", request)
    lines = debug.lines_of(request)
    said = (
        "DEBUG step 1 to the upstream: relayed as sent, no tools; no web tool: no web tool "
        "declared; tool_choice not sent ["
    )
    assert any(said in line for line in lines), lines


def test_tool_choice_none_and_a_spent_budget_are_named(debug: Debug) -> None:
    """``tool_choice: none`` turns the web tools off; once ``max_uses`` is spent the next step
    is answer-only, and the stop says so."""
    debug.upstream.queue(Step(content="No search."))
    off = httpx.post(
        debug.served.base + "/v1/chat/completions",
        json={"model": "m", "messages": USER, "tools": SEARCH, "tool_choice": "none"},
    )
    request = off.headers["x-request-id"]
    _access_id(debug.served, "/v1/chat/completions", request)
    assert any(
        "no web tool: tool_choice none turns the web tools off; tool_choice not sent" in line
        for line in debug.lines_of(request)
    ), debug.lines_of(request)

    debug.upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["iceland population"]})]),
        Step(content="About 390,000."),
    )
    tool = {"type": "web_search_20250305", "name": "web_search", "max_uses": 1}
    body = {"model": "m", "max_tokens": 64, "messages": USER, "tools": [tool]}
    spent = httpx.post(debug.served.base + "/v1/messages", json=body)
    request = spent.headers["x-request-id"]
    _access_id(debug.served, "/v1/messages", request)
    lines = debug.lines_of(request)
    for needle in (
        'step 1 calls: search ["iceland population"]; left: 0 searches',
        "step 2 to the upstream: no tools; no web tool: answer-only step (the search budget "
        "is spent: 1 of 1); tool_choice not sent; told to answer now",
        "turn stopped after 2 steps: answer written (end_turn) once the search budget is "
        "spent: 1 of 1 [reason=budget ",
    ):
        assert any(needle in line for line in lines), (needle, lines)


def test_calls_show_urls_without_their_query_and_client_calls_by_name(debug: Debug) -> None:
    debug.upstream.queue(
        Step(
            calls=[
                Call("read_link", {"url": SIGNED}),
                Call("get_weather", {"city": "Reykjavik", "api_key": "SECRET-ARG-3"}),
            ]
        )
    )
    weather = {"type": "function", "function": {"name": "get_weather", "parameters": {}}}
    response = httpx.post(
        debug.served.base + "/v1/chat/completions",
        json={
            "model": "m",
            "messages": [{"role": "user", "content": f"Read {SIGNED} and the weather"}],
            "tools": [{"type": "deepseek_read_url"}, weather],
        },
    )
    request = response.headers["x-request-id"]
    _access_id(debug.served, "/v1/chat/completions", request)
    lines = debug.lines_of(request)
    for needle in (
        "step 1 to the upstream: function tools: web read_link; client's get_weather;",
        "step 1 calls: read_link https://page.invalid/report?…; get_weather (the client's "
        "tool); left: 0 searches, 9 reads",
        "turn stopped after 1 step: the client's tool: get_weather [reason=client_tool ",
    ):
        assert any(needle in line for line in lines), (needle, lines)
    assert "SIGNED-5521" not in debug.served.text()
    assert "SECRET-ARG-3" not in debug.served.text()


def test_at_info_there_are_no_turn_lines(tmp_path: Path) -> None:
    with ScriptedUpstream() as upstream, ReplayServer() as exa:
        exa.route("POST", "/search", exa_results)
        with serving(tmp_path, server_env(upstream.url, exa.url)) as served:
            upstream.queue(*search_then_answer())
            served.chat().chat.completions.create(model="m", messages=USER, tools=SEARCH)
            served.wait_line("POST /v1/chat/completions 200")
            text = served.text()
    assert " DEBUG " not in text
    for needle in ("to the upstream:", "calls:", "turn stopped"):
        assert needle not in text


def test_json_lines_carry_the_same_as_fields(tmp_path: Path) -> None:
    with ScriptedUpstream() as upstream, ReplayServer() as exa:
        exa.route("POST", "/search", exa_results)
        env = server_env(
            upstream.url, exa.url, WEBREACH_LOG_LEVEL="debug", WEBREACH_LOG_FORMAT="json"
        )
        with serving(tmp_path, env) as served:
            upstream.queue(*search_then_answer())
            served.chat().chat.completions.create(model="m", messages=USER, tools=SEARCH)
            served.wait_line('"event": "access"')
            records = served.records()
    access = next(r for r in records if r["event"] == "access")
    mine = [r for r in records if r["id"] == access["id"]]

    def only(event: str, **match: Any) -> dict[str, Any]:
        found = [r for r in mine if r["event"] == event and match.items() <= r.items()]
        assert len(found) == 1, (event, mine)
        return found[0]

    first = only("turn_step", step=1)
    assert first["level"] == "debug"
    assert (first["web_tools"], first["client_tools"]) == (["web_search"], [])
    assert (first["no_web_tools"], first["tool_choice"], first["nudge"]) == (None, None, None)
    calls = only("turn_calls", step=1)
    assert calls["calls"] == [{"call": "search", "queries": ["iceland population"]}]
    assert (calls["searches_left"], calls["reads_left"]) == (4, 10)
    stopped = only("turn_stopped")
    assert (stopped["reason"], stopped["steps"]) == ("answer", 2)
    assert stopped["message"] == "turn stopped after 2 steps: answer written (end_turn)"
