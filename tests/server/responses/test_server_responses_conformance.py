"""What the Open Responses specification asks of ``/v1/responses`` beyond the SDK's models,
through the official SDKs against the running server: the sampling settings as numbers,
``completed_at``, the error codes, ``tool_choice`` as sent and ``required`` honoured,
``external_web_access: false``, and client function arguments streamed as they arrive (in the
Chat and Messages streams too)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from providers_for_tests import ScriptedFetch, ScriptedSearch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from server_harness import LiveServer, default_search
from webreach.cache import MemoryStore
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.server.core.web_tools.cache_only import NOT_CACHED_NOTE
from webreach.tools import ToolOptions

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
WEB = {"type": "web_search"}
ARGUMENTS = {"city": "Reykjavík", "unit": "celsius"}


def client(url: str) -> openai.OpenAI:
    return openai_client(url, strict=True)


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = httpx.post(f"{url}/responses", json={"model": "m", "input": "Hi", **body}, timeout=30)
    assert answer.status_code == 200, answer.text
    reply: dict[str, Any] = answer.json()
    return reply


def test_sampling_settings_are_numbers_and_completed_at_is_null_until_completion(
    webreach_url: str,
) -> None:
    with client(webreach_url).responses.stream(model="m", input="Hi") as stream:
        events = list(stream)
    created = next(e for e in events if e.type == "response.created").response
    done = next(e for e in events if e.type == "response.completed").response
    assert created.completed_at is None
    assert done.completed_at is not None and done.completed_at >= created.created_at
    assert (done.temperature, done.top_p, done.service_tier) == (1, 1, "default")
    raw = _post(webreach_url, {})
    assert (raw["presence_penalty"], raw["frequency_penalty"]) == (0, 0)
    assert isinstance(raw["completed_at"], int)


def test_penalties_reach_the_upstream_and_are_echoed(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    penalties = {"presence_penalty": 0.5, "frequency_penalty": -0.25}
    raw = client(webreach_url).responses.with_raw_response.create(
        model="m", input="Hi", extra_body=penalties
    )
    echoed = json.loads(raw.text)
    assert {name: echoed[name] for name in penalties} == penalties
    assert {name: upstream.requests[-1][name] for name in penalties} == penalties


@pytest.mark.parametrize(
    ("tools", "choice"),
    [
        ([WEATHER, WEB], "required"),
        ([WEB], {"type": "web_search"}),
        (
            [{"type": "namespace", "name": "weather", "tools": [WEATHER]}, WEB],
            {"type": "function", "name": "get_weather"},
        ),
    ],
)
def test_tool_choice_is_echoed_as_the_client_sent_it(
    webreach_url: str, tools: list[dict[str, Any]], choice: Any
) -> None:
    with httpx.stream(
        "POST",
        f"{webreach_url}/responses",
        json={"model": "m", "input": "Hi", "tools": tools, "tool_choice": choice, "stream": True},
        timeout=30,
    ) as answer:
        carried = [
            json.loads(line[6:])["response"]
            for line in answer.iter_lines()
            if line.startswith("data: ") and '"response":{' in line
        ]
    assert len(carried) == 3
    assert all(response["tool_choice"] == choice for response in carried)


def test_required_makes_the_first_step_call_a_tool_and_the_next_free_to_answer(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["iceland population"]})]),
        Step(content="About 390,000 people."),
    )
    response = client(webreach_url).responses.create(
        model="m", input="How many live in Iceland?", tools=[WEB], tool_choice="required"
    )
    assert response.output_text == "About 390,000 people."
    assert response.tool_choice == "required"
    assert [r["tool_choice"] for r in upstream.requests] == ["required", "auto"]


def test_chat_and_messages_honour_required_and_any_with_web_tools(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    openai_client(webreach_url).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "Hi"}],
        tools=[{"type": "function", "function": {"name": "get_weather", "parameters": {}}}],
        tool_choice="required",
        extra_body={"web_search_options": {}},
    )
    anthropic_client(webreach_url.removesuffix("/v1")).messages.create(
        model="m",
        max_tokens=64,
        messages=[{"role": "user", "content": "Hi"}],
        tools=[{"type": "web_search_20250305", "name": "web_search"}],
        tool_choice={"type": "any"},
    )
    assert [r["tool_choice"] for r in upstream.requests] == ["required", "required"]


def test_an_unknown_previous_response_id_is_previous_response_not_found(
    webreach_url: str,
) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client(webreach_url).responses.create(
            model="m", input="Hi", previous_response_id="resp_never_made"
        )
    assert raised.value.code == "previous_response_not_found"
    assert raised.value.param == "previous_response_id"


def test_function_call_arguments_stream_as_the_upstream_sends_them(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    text = json.dumps(ARGUMENTS)
    upstream.queue(Step(calls=[Call("get_weather", ARGUMENTS)]))
    with client(webreach_url).responses.stream(
        model="m", input="Weather?", tools=[WEATHER]
    ) as stream:
        events = list(stream)
        final = stream.get_final_response()
    deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    half = len(text) // 2
    assert deltas == [text[:half], text[half:]]
    (done,) = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert done.arguments == text
    kinds = [e.type for e in events]
    added = kinds.index("response.output_item.added")
    assert added < kinds.index("response.function_call_arguments.delta")
    (call,) = final.output
    assert call.type == "function_call" and call.arguments == text
    assert call.status == "completed"


def test_chat_and_messages_stream_client_tool_arguments_as_they_arrive(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    text = json.dumps(ARGUMENTS)
    half = len(text) // 2
    upstream.queue(
        Step(calls=[Call("get_weather", ARGUMENTS)]),
        Step(calls=[Call("get_weather", ARGUMENTS)]),
    )
    chunks = openai_client(webreach_url).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "Weather?"}],
        tools=[{"type": "function", "function": {"name": "get_weather", "parameters": {}}}],
        extra_body={"web_search_options": {}},
        stream=True,
    )
    pieces = [
        call.function.arguments
        for chunk in chunks
        for choice in chunk.choices
        for call in choice.delta.tool_calls or ()
        if call.function is not None and call.function.arguments
    ]
    assert pieces == [text[:half], text[half:]]
    with anthropic_client(webreach_url.removesuffix("/v1")).messages.stream(
        model="m",
        max_tokens=64,
        messages=[{"role": "user", "content": "Weather?"}],
        tools=[
            {"name": "get_weather", "input_schema": {"type": "object"}},
            {"type": "web_search_20250305", "name": "web_search"},
        ],
    ) as stream:
        events = list(stream)
        message = stream.get_final_message()
    partial = [
        e.delta.partial_json
        for e in events
        if e.type == "content_block_delta" and e.delta.type == "input_json_delta"
    ]
    assert partial == [text[:half], text[half:]]
    (block,) = message.content
    assert block.type == "tool_use" and block.input == ARGUMENTS


# --- external_web_access: false ----------------------------------------------------------


@pytest.fixture
def cached_server(upstream: ScriptedUpstream) -> Iterator[tuple[str, ScriptedSearch]]:
    """A server whose runtime has a cache, and the search provider behind it."""
    search = default_search()
    runtime = WebRuntime(cache=MemoryStore())
    runtime.register_search_provider(search)
    runtime.register_fetch_provider(ScriptedFetch())
    settings = ServerSettings(
        upstream_base_url=upstream.url,
        upstream_api_key="upstream-key",
        signing_key="test-signing-key-of-32-bytes-or-more",
    )
    app = create_app(settings, runtime, ToolOptions(), store=MemoryStore())
    with LiveServer(app) as live:
        yield live.url + "/v1", search


def _searched(upstream: ScriptedUpstream, url: str, query: str, live: bool) -> Any:
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": [query]})]), Step(content="Found it.")
    )
    tool = {"type": "web_search", "external_web_access": live}
    return client(url).responses.create(model="m", input="Look it up.", tools=[tool])


def test_without_external_web_access_only_the_cache_answers(
    upstream: ScriptedUpstream, cached_server: tuple[str, ScriptedSearch]
) -> None:
    url, search = cached_server
    live = _searched(upstream, url, "iceland population", True)
    assert len(search.calls) == 1
    cached = _searched(upstream, url, "iceland population", False)
    assert len(search.calls) == 1
    for response in (live, cached):
        call = response.output[0]
        assert call.type == "web_search_call" and call.status == "completed"
        assert [s.url for s in call.action.sources] == [
            f"https://iceland-population.example/{n}" for n in (1, 2, 3)
        ]
    missed = _searched(upstream, url, "faroe population", False)
    assert len(search.calls) == 1
    call = missed.output[0]
    assert call.type == "web_search_call" and call.action.sources == []
    told = [m["content"] for m in upstream.requests[-1]["messages"] if m["role"] == "tool"]
    assert len(told) == 1 and NOT_CACHED_NOTE in told[0]
