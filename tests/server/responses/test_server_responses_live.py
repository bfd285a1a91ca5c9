"""The running server's ``/v1/responses``, driven by the official openai SDK end to end."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from providers_for_tests import ScriptedSearch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import openai_client
from server_harness import gated_search
from webreach.seam import SearchRequest, SearchResult, WebError, WebErrorCode

QUESTION = "How many people live in Iceland?"
WEB = [{"type": "deepseek_web_search"}]
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
ANSWER_CHUNKS = ["冰岛约有 39 万人 🇮🇸", "【1", "】【2】，首都是雷克雅未克【9】😀。"]
ANSWER = "冰岛约有 39 万人 🇮🇸，首都是雷克雅未克😀。"


def clients(url: str) -> list[openai.OpenAI]:
    return [
        openai_client(url),
        openai_client(url, strict=True),
    ]


def search_step(*query_lists: list[str]) -> Step:
    return Step(calls=[Call("web_search", {"queries": q}) for q in query_lists])


def finals(
    client: openai.OpenAI, upstream: ScriptedUpstream, *steps: Step, **body: Any
) -> list[Any]:
    """The final response from ``create`` and from ``stream(...).get_final_response()``."""
    request = {"model": "m", "input": QUESTION, **body}
    upstream.queue(*steps)
    created = client.responses.create(**request)
    upstream.queue(*steps)
    with client.responses.stream(**request) as stream:
        streamed = stream.get_final_response()
    return [created, streamed]


def raw_events(url: str, body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    with httpx.stream(
        "POST", url + "/responses", json={**body, "stream": True}, timeout=30
    ) as response:
        assert response.status_code == 200
        event = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
                assert data["type"] == event
                yield event, data


def test_a_request_without_web_tools_is_answered_plainly(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    for client in clients(webreach_url):
        for response in finals(
            client, upstream, Step(content=["Hello ", "世界 👋"]), instructions="Be kind."
        ):
            assert response.status == "completed"
            assert response.output_text == "Hello 世界 👋"
            assert [item.type for item in response.output] == ["message"]
            assert response.usage.input_tokens == 10 and response.usage.output_tokens == 5
            assert "server_tool_use" not in (response.usage.model_extra or {})
    first = upstream.requests[0]
    assert first["messages"] == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": QUESTION},
    ]
    assert "tools" not in first


def test_a_search_round_answers_with_citations(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    steps = (search_step(["Iceland population 2025"]), Step(content=ANSWER_CHUNKS))
    for client in clients(webreach_url):
        for response in finals(client, upstream, *steps, tools=WEB):
            assert response.status == "completed"
            call, message = response.output
            assert call.type == "web_search_call" and call.status == "completed"
            assert call.id.startswith("srvtoolu_s_00_")
            assert call.model_extra["kind"] == "search"
            assert call.action.queries == ["Iceland population 2025"]
            assert call.action.query == "Iceland population 2025"
            assert [s.url for s in call.action.sources] == [
                f"https://iceland-population-2025.example/{n}" for n in (1, 2, 3)
            ]
            assert call.action.sources[0].model_extra["title"].endswith("result 1")
            text = message.content[0].text
            assert text == ANSWER == response.output_text
            cited = [
                (a.url, text[a.start_index : a.end_index]) for a in message.content[0].annotations
            ]
            assert cited == [
                ("https://iceland-population-2025.example/1", "冰岛约有 39 万人 🇮🇸"),
                ("https://iceland-population-2025.example/2", "冰岛约有 39 万人 🇮🇸"),
            ]
            assert response.usage.model_extra["server_tool_use"] == {
                "web_search_requests": 1,
                "web_fetch_requests": 0,
                "tool_search": 1,
                "tool_fetch": 0,
                "tool_image_search": 0,
            }
            assert (response.usage.input_tokens, response.usage.output_tokens) == (20, 10)


def test_the_stream_announces_the_call_before_the_search_ends(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    gate = threading.Event()
    search.behaviour = gated_search(gate).behaviour
    upstream.queue(search_step(["slow query"]), Step(content="Done【1】."))
    seen: list[str] = []
    try:
        for kind, data in raw_events(webreach_url, {"model": "m", "input": QUESTION, "tools": WEB}):
            seen.append(kind)
            if kind == "response.web_search_call.searching":
                deadline = time.monotonic() + 60
                while search.in_flight == 0 and time.monotonic() < deadline:
                    time.sleep(0.01)
                assert search.in_flight == 1 and not search.finished
                gate.set()
            if kind == "response.output_item.added" and data["item"]["type"] == "web_search_call":
                assert data["item"]["action"]["queries"] == ["slow query"]
                assert data["item"]["status"] == "in_progress"
    finally:
        gate.set()
    calls = [k for k in seen if k.startswith("response.web_search_call.")]
    assert calls == [
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
    ]
    assert seen[:2] == ["response.created", "response.in_progress"]
    assert seen[-1] == "response.completed"
    assert "response.output_text.annotation.added" in seen


def test_a_failed_search_is_a_failed_call_not_a_failed_request(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    async def down(_: SearchRequest) -> SearchResult:
        raise WebError(WebErrorCode.WEB_PROVIDER_ERROR, "replay: server error (HTTP 500)")

    search.behaviour = down
    steps = (search_step(["q"]), Step(content="The search failed."))
    for client in clients(webreach_url):
        for response in finals(client, upstream, *steps, tools=WEB):
            assert response.status == "completed"
            call, message = response.output
            assert call.status == "failed"
            assert call.model_extra["error"] == {"code": "unavailable"}
            assert message.content[0].text == "The search failed."
            assert message.content[0].annotations == []
            assert "server_tool_use" not in (response.usage.model_extra or {})


def test_a_client_function_call_ends_the_turn_and_its_output_continues_it(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    steps = (Step(calls=[Call("get_weather", {"city": "Reykjavík"})]),)
    for client in clients(webreach_url):
        for response in finals(client, upstream, *steps, tools=[*WEB, WEATHER]):
            assert response.status == "completed"
            (call,) = response.output
            assert (call.type, call.name, call.status) == (
                "function_call",
                "get_weather",
                "completed",
            )
            assert json.loads(call.arguments) == {"city": "Reykjavík"}
        upstream.queue(Step(content="It is 5 °C."))
        follow = client.responses.create(
            model="m",
            tools=[*WEB, WEATHER],
            input=[
                {"role": "user", "content": QUESTION},
                call.model_dump(exclude_none=True),
                {"type": "function_call_output", "call_id": call.call_id, "output": "5 °C"},
            ],
        )
        assert follow.output_text == "It is 5 °C."
        sent = upstream.requests[-1]["messages"]
        assert sent[-2]["tool_calls"][0]["id"] == call.call_id
        assert sent[-1] == {"role": "tool", "tool_call_id": call.call_id, "content": "5 °C"}


def test_a_failure_after_the_stream_started_is_response_failed(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(search_step(["q"]), Step(content=["partial ", "answer"], break_after=2))
    events = list(raw_events(webreach_url, {"model": "m", "input": QUESTION, "tools": WEB}))
    kind, last = events[-1]
    assert kind == "response.failed"
    assert last["response"]["status"] == "failed"
    assert last["response"]["error"]["code"] == "server_error"
    assert last["response"]["usage"]["server_tool_use"]["web_search_requests"] == 1
    assert all("error" not in data for _, data in events)
    # Without streaming nothing was sent yet: the failure is an HTTP error the SDKs raise.
    for client in clients(webreach_url):
        upstream.queue(search_step(["q"]), Step(content=["partial ", "answer"], break_after=2))
        with pytest.raises(openai.InternalServerError) as caught:
            client.responses.create(model="m", input=QUESTION, tools=WEB)
        assert caught.value.status_code == 502


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"tools": WEB * 2}, "tools: `deepseek_web_search` can only be declared once"),
        (
            {"tools": WEB, "tool_choice": {"type": "web_search"}},
            "tool_choice: `deepseek_web_search` cannot be forced",
        ),
        (
            {"tools": [{"type": "deepseek_web_search", "user_location": {"type": "approximate"}}]},
            "tools: `user_location` is not supported by `deepseek_web_search`",
        ),
        (
            {"tools": [{"type": "namespace", "name": "crm", "tools": [{"type": "mcp"}]}]},
            "tools: namespace `crm` may only hold `function` and `custom` tools",
        ),
        (
            {
                "input": [
                    {"role": "user", "content": "Poem?"},
                    {"role": "assistant", "content": "Roses"},
                ]
            },
            "input: ends with an assistant `message`",
        ),
        (
            {"previous_response_id": "resp_1"},
            "previous_response_id: response `resp_1` is unknown or has expired",
        ),
        (
            {"input": [{"type": "item_reference", "id": "msg_1"}]},
            "input: item `msg_1` is unknown or has expired",
        ),
    ],
)
def test_refused_requests(
    upstream: ScriptedUpstream, webreach_url: str, body: dict[str, Any], message: str
) -> None:
    for client in clients(webreach_url):
        with pytest.raises(openai.BadRequestError) as caught:
            client.responses.create(**{"model": "m", "input": QUESTION, **body})
        assert caught.value.status_code == 400
        assert isinstance(caught.value.body, dict)
        assert caught.value.body["message"].startswith(message)
        assert caught.value.body["type"] == "invalid_request_error"
    assert upstream.requests == []


def test_tool_choice_none_turns_the_web_off(upstream: ScriptedUpstream, webreach_url: str) -> None:
    response = clients(webreach_url)[1].responses.create(
        model="m",
        input=QUESTION,
        tools=WEB,
        tool_choice="none",
    )
    assert response.output_text == "Hello from the scripted upstream."
    sent = upstream.requests[0]
    assert all(t["function"]["name"] != "web_search" for t in sent.get("tools", []))
