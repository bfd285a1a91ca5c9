"""The API server over Chat Completions, driven by the official openai SDK."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from client_sockets import abandon
from providers_for_tests import ScriptedSearch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import openai_client
from server_harness import gated_search
from webreach.seam import SearchRequest, SearchResult
from webreach.server.app import ServerSettings
from webreach.server.core.loop.runner import FORCED_ANSWER, RETRY_ANSWER

USER = [{"role": "user", "content": "How many people live in Iceland?"}]
WEB = [{"type": "deepseek_web_search"}]


def search_step(*query_lists: list[str]) -> Step:
    return Step(calls=[Call("web_search", {"queries": q}) for q in query_lists])


def clients(url: str) -> list[openai.OpenAI]:
    return [
        openai_client(url),
        openai_client(url, strict=True),
    ]


def raw_stream(url: str, body: dict[str, Any]) -> Iterator[dict[str, Any] | str]:
    """The SSE payloads as sent: parsed JSON, or the raw line for comments and [DONE]."""
    with httpx.stream(
        "POST", url + "/chat/completions", json={**body, "stream": True}, timeout=30
    ) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: {"):
                yield json.loads(line[6:])
            elif line:
                yield line


def test_requests_without_web_tools_are_relayed_unchanged(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    for client in clients(webreach_url):
        reply = client.chat.completions.create(model="any-model", messages=USER, temperature=0.3)
        assert reply.choices[0].message.content == "Hello from the scripted upstream."
        chunks = list(client.chat.completions.create(model="any-model", messages=USER, stream=True))
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
            "Hello from the scripted upstream."
        )
    assert upstream.requests[0] == {"model": "any-model", "messages": USER, "temperature": 0.3}
    response = httpx.post(webreach_url + "/chat/completions", json={"model": "m", "messages": USER})
    assert response.headers["server-timing"].startswith("webreach;dur=")


def test_a_search_round_answers_with_citations(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    for client in clients(webreach_url):
        upstream.queue(
            search_step(["Iceland population 2025"]),
            Step(
                content=[
                    "Iceland has about 390,000 ",
                    "people【1",
                    "】【2】. Reykjavík is the capital【9】.",
                ]
            ),
        )
        reply = client.chat.completions.create(model="m", messages=USER, tools=WEB)  # type: ignore[list-item]
        message = reply.choices[0].message
        assert message.content == "Iceland has about 390,000 people. Reykjavík is the capital."
        annotations = message.annotations or []
        assert [
            (a.url_citation.url, a.url_citation.start_index, a.url_citation.end_index)
            for a in annotations
        ] == [
            ("https://iceland-population-2025.example/1", 0, 32),
            ("https://iceland-population-2025.example/2", 0, 32),
        ]
        steps = message.model_extra["server_tool_calls"]
        (call,) = steps[0]["calls"]
        assert call["type"] == "deepseek_web_search"
        assert call["kind"] == "search"
        assert call["action"] == {
            "type": "search",
            "queries": ["Iceland population 2025"],
            "query": "Iceland population 2025",
        }
        assert call["status"] == "completed"
        assert call["sources"][0]["url"] == "https://iceland-population-2025.example/1"
        usage = reply.usage
        assert usage is not None
        assert (usage.prompt_tokens, usage.completion_tokens) == (20, 10)
        assert usage.model_extra["server_tool_use"] == {
            "web_search_requests": 1,
            "web_fetch_requests": 0,
            "tool_search": 1,
            "tool_fetch": 0,
            "tool_image_search": 0,
        }
        assert reply.choices[0].finish_reason == "stop"

    first, second = upstream.requests[:2]
    assert [t["function"]["name"] for t in first["tools"]] == ["web_search"]
    assert first["tools"][0]["function"]["parameters"]["properties"]["queries"]["maxItems"] == 4
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "[1] Iceland population 2025 — result 1" in tool_message["content"]
    assert "【n】" in tool_message["content"]


def test_streamed_search_round_and_the_stream_helper(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    body = {"model": "m", "messages": USER, "tools": WEB}
    upstream.queue(search_step(["a", "b"]), Step(content="Answer【1】."))
    payloads = list(raw_stream(webreach_url, body))
    events = [
        p["choices"][0].get("server_tool_event")
        for p in payloads
        if isinstance(p, dict) and p["choices"]
    ]
    kinds = [e["type"] for e in events if e]
    assert kinds == ["step_reasoning_done", "call_started", "call_completed"]
    started = next(e for e in events if e and e["type"] == "call_started")
    assert started["call"]["action"]["queries"] == ["a", "b"]
    assert "sources" not in started["call"]
    last = [p for p in payloads if isinstance(p, dict)][-1]
    assert last["choices"][0]["finish_reason"] == "stop"
    assert last["choices"][0]["delta"]["server_tool_calls"][0]["calls"][0]["status"] == "completed"
    assert (
        last["choices"][0]["delta"]["annotations"][0]["url_citation"]["url"]
        == "https://a.example/1"
    )
    assert payloads[-1] == "data: [DONE]"

    for client in clients(webreach_url):
        upstream.queue(search_step(["a"]), Step(content="Answer【1】."))
        with client.chat.completions.stream(model="m", messages=USER, tools=WEB) as stream:  # type: ignore[arg-type]
            final = stream.get_final_completion()
        message = final.choices[0].message
        assert message.content == "Answer."
        assert message.annotations is not None
        assert message.annotations[0].url_citation.end_index == 6


def test_the_start_event_arrives_while_the_search_is_still_running(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    gate = threading.Event()
    search.behaviour = gated_search(gate).behaviour
    upstream.queue(search_step(["slow query"]), Step(content="Done."))
    seen: list[str] = []
    try:
        for payload in raw_stream(webreach_url, {"model": "m", "messages": USER, "tools": WEB}):
            if isinstance(payload, dict) and payload["choices"]:
                event = payload["choices"][0].get("server_tool_event")
                if event:
                    seen.append(event["type"])
                    if event["type"] == "call_started":
                        deadline = time.monotonic() + 60
                        while search.in_flight == 0 and time.monotonic() < deadline:
                            time.sleep(0.01)
                        assert search.in_flight == 1  # running, held by the gate
                        assert not search.finished
                        gate.set()
    finally:
        gate.set()
    assert seen == ["step_reasoning_done", "call_started", "call_completed"]


def test_keep_alive_comments_fill_the_silence(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    gate = threading.Event()
    search.behaviour = gated_search(gate).behaviour
    upstream.queue(search_step(["q"]), Step(content="Done."))
    timer = threading.Timer(1.0, gate.set)
    timer.start()
    try:
        lines = list(raw_stream(webreach_url, {"model": "m", "messages": USER, "tools": WEB}))
    finally:
        timer.cancel()
        gate.set()
    assert ": keep-alive" in lines


def test_several_calls_in_one_step_run_concurrently(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    fallback = search.behaviour
    assert fallback is not None

    async def together(request: SearchRequest) -> SearchResult:
        deadline = time.monotonic() + 60
        while search.max_in_flight < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return await fallback(request)

    search.behaviour = together
    upstream.queue(search_step(["one"], ["two"]), Step(content="Both."))
    payloads = list(raw_stream(webreach_url, {"model": "m", "messages": USER, "tools": WEB}))
    kinds = [
        p["choices"][0]["server_tool_event"]["type"]
        for p in payloads
        if isinstance(p, dict) and p["choices"] and "server_tool_event" in p["choices"][0]
    ]
    assert kinds == [
        "step_reasoning_done",
        "call_started",
        "call_started",
        "call_completed",
        "call_completed",
    ]
    assert search.max_in_flight == 2
    tool_messages = [m for m in upstream.requests[1]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 2
    numbers = re.findall(r"^\[(\d+)\]", "\n".join(m["content"] for m in tool_messages), re.M)
    assert sorted(map(int, numbers)) == [1, 2, 3, 4, 5, 6]  # numbered once across the round


def test_the_budget_forces_an_answer_with_an_iteration_local_nudge(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(*(search_step([f"q{n}"]) for n in range(5)), Step(content="Final【1】."))
    reply = clients(webreach_url)[0].chat.completions.create(model="m", messages=USER, tools=WEB)  # type: ignore[list-item]
    assert reply.choices[0].message.content == "Final."
    assert len(upstream.requests) == 6
    forced = upstream.requests[5]
    assert "tools" not in forced
    assert forced["messages"][-1] == {"role": "system", "content": FORCED_ANSWER}
    assert all(
        m.get("content") != FORCED_ANSWER for r in upstream.requests[:5] for m in r["messages"]
    )
    assert reply.usage is not None
    assert reply.usage.model_extra["server_tool_use"]["web_search_requests"] == 5
    assert "provider" not in (reply.model_extra or {})  # OpenRouter's field, for its dialect


def test_no_nudge_when_no_search_really_ran_and_one_retry_for_an_empty_answer(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    async def down(_: SearchRequest) -> SearchResult:
        from webreach.seam import WebError, WebErrorCode

        raise WebError(WebErrorCode.WEB_PROVIDER_ERROR, "replay: server error (HTTP 500)")

    search.behaviour = down
    upstream.queue(
        *(search_step([f"q{n}"]) for n in range(5)), Step(content=""), Step(content="Sorry.")
    )
    reply = clients(webreach_url)[0].chat.completions.create(model="m", messages=USER, tools=WEB)  # type: ignore[list-item]
    assert reply.choices[0].message.content == "Sorry."
    forced, retry = upstream.requests[5], upstream.requests[6]
    assert all(m.get("content") != FORCED_ANSWER for m in forced["messages"])
    assert retry["messages"][-1] == {"role": "system", "content": RETRY_ANSWER}
    assert len(upstream.requests) == 7
    calls = [
        c for s in reply.choices[0].message.model_extra["server_tool_calls"] for c in s["calls"]
    ]
    assert {c["status"] for c in calls} == {"failed"}
    assert {c["error"]["code"] for c in calls} == {"unavailable"}
    assert reply.usage is not None
    assert "server_tool_use" not in (reply.usage.model_extra or {})  # nothing billed


def test_max_uses_beyond_the_budget_in_one_step(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(search_step(*([f"q{n}"] for n in range(7))), Step(content="ok"))
    reply = clients(webreach_url)[0].chat.completions.create(model="m", messages=USER, tools=WEB)  # type: ignore[list-item]
    calls = reply.choices[0].message.model_extra["server_tool_calls"][0]["calls"]
    assert [c["status"] for c in calls] == ["completed"] * 5 + ["failed"] * 2
    assert calls[-1]["error"]["code"] == "max_uses_exceeded"


def test_invalid_search_arguments_are_a_failed_call_not_a_failed_request(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    upstream.queue(Step(calls=[Call("web_search", {"queries": []})]), Step(content="ok"))
    reply = clients(webreach_url)[0].chat.completions.create(model="m", messages=USER, tools=WEB)  # type: ignore[list-item]
    (call,) = reply.choices[0].message.model_extra["server_tool_calls"][0]["calls"]
    assert call["error"]["code"] == "invalid_tool_input"
    assert search.calls == []
    assert "INVALID_ARGUMENTS" in upstream.requests[1]["messages"][-1]["content"]


def test_a_client_tool_call_ends_the_turn(upstream: ScriptedUpstream, webreach_url: str) -> None:
    weather = {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object"}},
    }
    upstream.queue(Step(calls=[Call("get_weather", {"city": "Reykjavík"})]))
    for client in clients(webreach_url):
        upstream.queue(Step(calls=[Call("get_weather", {"city": "Reykjavík"})]))
        reply = client.chat.completions.create(model="m", messages=USER, tools=[*WEB, weather])  # type: ignore[list-item]
        choice = reply.choices[0]
        assert choice.finish_reason == "tool_calls"
        assert choice.message.tool_calls is not None
        call = choice.message.tool_calls[0]
        assert call.function.name == "get_weather"  # type: ignore[union-attr]
        assert json.loads(call.function.arguments) == {"city": "Reykjavík"}  # type: ignore[union-attr]


def test_tool_choice_none_turns_every_tool_off(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    clients(webreach_url)[0].chat.completions.create(
        model="m",
        messages=USER,
        tools=WEB,
        tool_choice="none",  # type: ignore[list-item]
    )
    assert "tools" not in upstream.requests[0] or upstream.requests[0].get("tool_choice") == "none"
    assert all(t["function"]["name"] != "web_search" for t in upstream.requests[0].get("tools", []))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"tools": [*WEB, *WEB]}, "tools: `deepseek_web_search` can only be declared once"),
        (
            {
                "tools": WEB,
                "tool_choice": {"type": "function", "function": {"name": "deepseek_web_search"}},
            },
            "tool_choice: `deepseek_web_search` cannot be forced",
        ),
        (
            {"tools": [{"type": "deepseek_web_search", "allowed_domains": ["a.com"]}]},
            "tools: `allowed_domains` is not supported by `deepseek_web_search`",
        ),
        (
            {"tools": [{"type": "deepseek_web_search", "user_location": {}}]},
            "tools: `user_location` is not supported by `deepseek_web_search`",
        ),
        ({"tools": WEB, "web_search_options": {}}, "web_search_options: not supported together"),
        (
            {
                "tools": WEB,
                "messages": [
                    *USER,
                    {
                        "role": "assistant",
                        "content": "Partial",
                        "prefix": True,
                        "server_tool_calls": [{"index": 0, "calls": []}],
                    },
                ],
            },
            "messages: the last `assistant` message used `deepseek_web_search` or "
            "`deepseek_read_url` and cannot be continued; resend the previous request",
        ),
    ],
)
def test_refused_requests(
    upstream: ScriptedUpstream, webreach_url: str, body: dict[str, Any], message: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        clients(webreach_url)[0].chat.completions.create(**{"model": "m", "messages": USER, **body})
    assert caught.value.status_code == 400
    assert caught.value.message.startswith(message) or message in str(caught.value.body)
    assert upstream.requests == []


def test_upstream_errors_before_the_stream_keep_their_status(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(Step(status=400, error="bad temperature"))
    with pytest.raises(openai.BadRequestError) as caught:
        clients(webreach_url)[0].chat.completions.create(model="m", messages=USER, tools=WEB)  # type: ignore[list-item]
    assert "bad temperature" in str(caught.value.body)
    upstream.queue(Step(status=429, error="slow down"))
    with pytest.raises(openai.RateLimitError):
        clients(webreach_url)[0].chat.completions.create(model="m", messages=USER)


def test_an_unreachable_upstream_is_502(search: ScriptedSearch) -> None:
    from server_harness import LiveServer
    from webreach.seam import WebRuntime
    from webreach.server.app import create_app
    from webreach.tools import ToolOptions

    runtime = WebRuntime()
    runtime.register_search_provider(search)
    app = create_app(
        ServerSettings(upstream_base_url="http://127.0.0.1:9/v1"), runtime, ToolOptions()
    )
    with LiveServer(app) as server:
        for body in (
            {"model": "m", "messages": USER, "tools": WEB},
            {"model": "m", "messages": USER},
        ):
            response = httpx.post(server.url + "/v1/chat/completions", json=body)
            assert response.status_code == 502
            assert response.json()["error"]["message"].startswith("upstream unreachable")


def test_a_failure_after_the_stream_started(upstream: ScriptedUpstream, webreach_url: str) -> None:
    upstream.queue(search_step(["q"]), Step(content=["partial ", "answer"], break_after=2))
    payloads = list(raw_stream(webreach_url, {"model": "m", "messages": USER, "tools": WEB}))
    last = payloads[-1]
    assert isinstance(last, dict)
    assert last["choices"] == []
    assert last["error"]["type"] == "api_error"
    assert last["usage"]["server_tool_use"]["web_search_requests"] == 1
    assert "data: [DONE]" not in payloads


def test_a_client_that_goes_away_cancels_the_search(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    gate = threading.Event()
    search.behaviour = gated_search(gate).behaviour
    upstream.queue(search_step(["abandoned"]), Step(content="never read"))
    try:
        with httpx.stream(
            "POST",
            webreach_url + "/chat/completions",
            json={"model": "m", "messages": USER, "tools": WEB, "stream": True},
            timeout=30,
        ) as response:
            for line in response.iter_lines():
                if "call_started" in line:
                    break
        deadline = time.monotonic() + 60
        while not search.cancelled and time.monotonic() < deadline:
            time.sleep(0.02)
        assert search.cancelled == ["abandoned"]
        assert len(upstream.requests) == 1  # no further model step after the client left
    finally:
        gate.set()


def test_inbound_keys(upstream: ScriptedUpstream, search: ScriptedSearch) -> None:
    from server_harness import LiveServer
    from webreach.seam import WebRuntime
    from webreach.server.app import create_app
    from webreach.tools import ToolOptions

    config = ServerSettings(upstream_base_url=upstream.url, server_api_keys="key-one,key-two")
    with LiveServer(create_app(config, WebRuntime(), ToolOptions())) as server:
        url = server.url + "/v1/chat/completions"
        body = {"model": "m", "messages": USER}
        assert httpx.post(url, json=body).status_code == 401
        assert (
            httpx.post(url, json=body, headers={"Authorization": "Bearer nope"}).status_code == 401
        )
        assert (
            httpx.post(url, json=body, headers={"Authorization": "Bearer key-two"}).status_code
            == 200
        )
        assert httpx.post(url, json=body, headers={"x-api-key": "key-one"}).status_code == 200
        assert httpx.get(server.url + "/v1/models").status_code == 401
        assert httpx.get(server.url + "/healthz").status_code == 200
    assert len(upstream.requests) == 2


def test_models_and_health(webreach_url: str) -> None:
    models = clients(webreach_url)[0].models.list()
    assert [m.id for m in models.data] == ["scripted-model"]
    assert httpx.get(webreach_url.removesuffix("/v1") + "/healthz").json() == {"status": "ok"}


def test_every_response_carries_server_timing(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    refused = httpx.post(
        webreach_url + "/chat/completions",
        json={"model": "m", "messages": USER, "tools": [*WEB, *WEB]},
    )
    assert refused.status_code == 400
    assert refused.headers["server-timing"].startswith("webreach;dur=")
    health = httpx.get(webreach_url.removesuffix("/v1") + "/healthz")
    assert health.headers["server-timing"].startswith("webreach;dur=")
    upstream.queue(search_step(["q"]), Step(content="ok"))
    searched = httpx.post(
        webreach_url + "/chat/completions", json={"model": "m", "messages": USER, "tools": WEB}
    )
    timing = dict(
        part.strip().split(";dur=") for part in searched.headers["server-timing"].split(",")
    )
    assert set(timing) == {"webreach", "upstream", "web"}
    assert float(timing["web"]) > 0


def test_a_non_streaming_client_that_goes_away_cancels_the_search(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    gate = threading.Event()
    search.behaviour = gated_search(gate).behaviour
    upstream.queue(search_step(["abandoned"]), Step(content="never read"))
    try:
        abandon(
            webreach_url + "/chat/completions",
            {"model": "m", "messages": USER, "tools": WEB},
            until=lambda: search.in_flight == 1,
        )
        deadline = time.monotonic() + 60
        while not search.cancelled and time.monotonic() < deadline:
            time.sleep(0.02)
        assert search.cancelled == ["abandoned"]
        assert len(upstream.requests) == 1
    finally:
        gate.set()


@pytest.mark.parametrize("web", [True, False], ids=["loop", "relay"])
def test_a_stream_asks_proxies_not_to_buffer_it(
    webreach_url: str, upstream: ScriptedUpstream, web: bool
) -> None:
    """nginx holds a response back until its buffer fills unless told not to."""
    upstream.queue(Step(content="Hello."))
    body: dict[str, Any] = {
        "model": "m",
        "messages": [{"role": "user", "content": "Hi"}],
        "stream": True,
    }
    if web:
        body["tools"] = [{"type": "deepseek_web_search"}]
    with httpx.stream("POST", f"{webreach_url}/chat/completions", json=body) as reply:
        assert reply.headers["x-accel-buffering"] == "no"
        assert "Hello." in reply.read().decode()
