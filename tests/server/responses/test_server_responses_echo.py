"""The Responses object repeats the request's settings back, as OpenAI's does, field by field.

Each response is read with the official SDK's strict validation (``Response.model_validate``
with ``strict=True``, and the SDK client with ``_strict_response_validation``), over a running
server: the JSON body, and every stream event that carries the response object. The client's
``parallel_tool_calls`` also reaches the upstream's Chat Completions request.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from openai.types.responses import Response

from scripted_upstream import ScriptedUpstream, ToolCaller
from sdk_clients import openai_client

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "strict": False,
}

SENT: dict[str, Any] = {
    "instructions": "Answer in French.",
    "metadata": {"ticket": "T-42", "team": "search"},
    "parallel_tool_calls": False,
    "temperature": 0.25,
    "top_p": 0.5,
    "max_output_tokens": 321,
    "max_tool_calls": 3,
    "tool_choice": "auto",
    "tools": [WEATHER],
    "truncation": "auto",
    "store": False,
    "reasoning": {"effort": "low", "summary": "auto"},
    "text": {"format": {"type": "text"}, "verbosity": "low"},
    "user": "user-7",
    "safety_identifier": "hashed-user-7",
    "prompt_cache_key": "cache-key-1",
    "prompt_cache_retention": "24h",
    "service_tier": "flex",
    "background": False,
}
"""Every setting OpenAI echoes, each set to something other than its default."""

ECHOED: dict[str, Any] = {
    **SENT,
    "tool_choice": "auto",
    "top_logprobs": 0,
}
"""What the response carries for :data:`SENT`."""

DEFAULTS: dict[str, Any] = {
    "instructions": None,
    "metadata": {},
    "parallel_tool_calls": True,
    "temperature": 1.0,
    "top_p": 1.0,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "max_output_tokens": None,
    "max_tool_calls": None,
    "tool_choice": "auto",
    "tools": [],
    "truncation": "disabled",
    "store": True,
    "reasoning": {"effort": None, "summary": None},
    "text": {"format": {"type": "text"}},
    "user": None,
    "safety_identifier": None,
    "prompt_cache_key": None,
    "prompt_cache_retention": None,
    "service_tier": "default",
    "background": False,
    "top_logprobs": 0,
    "previous_response_id": None,
}
"""What the response carries when the request sets nothing."""

RESPONSE_EVENTS = ("response.created", "response.in_progress", "response.completed")


def _post(url: str, body: dict[str, Any]) -> httpx.Response:
    with httpx.Client(timeout=30) as http:
        return http.post(f"{url}/responses", json={"model": "m", "input": "Bonjour ?", **body})


def _events(text: str) -> list[dict[str, Any]]:
    return [
        json.loads(line.removeprefix("data: "))
        for line in text.splitlines()
        if line.startswith("data: ")
    ]


def _strict(raw: dict[str, Any]) -> Response:
    return Response.model_validate(raw, strict=True)


def _echoed(raw: dict[str, Any], expected: dict[str, Any]) -> None:
    parsed = _strict(raw)
    for name, value in expected.items():
        assert name in raw, name
        assert raw[name] == value, name
        if name in Response.model_fields:
            typed = getattr(parsed, name)
            shown = typed.model_dump(exclude_unset=True) if hasattr(typed, "model_dump") else typed
            if isinstance(typed, list):
                shown = [t.model_dump(exclude_unset=True) for t in typed]
            assert shown == value, name


@pytest.mark.parametrize("name", sorted(SENT))
def test_json_echoes_each_field_sent(webreach_url: str, name: str) -> None:
    answer = _post(webreach_url, SENT)
    assert answer.status_code == 200, answer.text
    _echoed(answer.json(), {name: ECHOED[name]})


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_json_echoes_the_defaults_when_nothing_is_sent(webreach_url: str, name: str) -> None:
    answer = _post(webreach_url, {})
    assert answer.status_code == 200, answer.text
    _echoed(answer.json(), {name: DEFAULTS[name]})


@pytest.mark.parametrize("name", sorted(SENT))
def test_every_stream_event_with_the_response_echoes_each_field(
    webreach_url: str, name: str
) -> None:
    answer = _post(webreach_url, {**SENT, "stream": True})
    assert answer.status_code == 200, answer.text
    carried = [e for e in _events(answer.text) if e["type"] in RESPONSE_EVENTS]
    assert [e["type"] for e in carried] == list(RESPONSE_EVENTS)
    for event in carried:
        _echoed(event["response"], {name: ECHOED[name]})


def test_the_sdk_client_reads_the_echo_strictly(webreach_url: str) -> None:
    client = openai_client(webreach_url, strict=True)
    response = client.responses.create(model="m", input="Bonjour ?", **SENT)
    assert response.instructions == SENT["instructions"]
    assert response.metadata == SENT["metadata"]
    assert response.parallel_tool_calls is False
    assert (response.temperature, response.top_p) == (0.25, 0.5)
    assert (response.max_output_tokens, response.max_tool_calls) == (321, 3)
    assert response.truncation == "auto"
    assert response.reasoning is not None
    assert (response.reasoning.effort, response.reasoning.summary) == ("low", "auto")
    assert response.text is not None and response.text.verbosity == "low"
    assert (response.user, response.safety_identifier) == ("user-7", "hashed-user-7")
    assert (response.prompt_cache_key, response.prompt_cache_retention) == ("cache-key-1", "24h")
    assert response.service_tier == "flex"
    assert response.background is False
    assert [tool.type for tool in response.tools] == ["function"]

    with client.responses.stream(model="m", input="Bonjour ?", **SENT) as stream:
        final = stream.get_final_response()
    assert final.instructions == SENT["instructions"]
    assert final.metadata == SENT["metadata"]
    assert final.parallel_tool_calls is False


def test_previous_response_id_is_echoed(webreach_url: str) -> None:
    first = _post(webreach_url, {}).json()
    second = _post(webreach_url, {"previous_response_id": first["id"]})
    assert second.status_code == 200, second.text
    _echoed(second.json(), {"previous_response_id": first["id"]})


@pytest.mark.parametrize("sent", [False, True])
def test_parallel_tool_calls_reaches_the_upstream(
    upstream: ScriptedUpstream, webreach_url: str, sent: bool
) -> None:
    answer = _post(webreach_url, {"tools": [WEATHER], "parallel_tool_calls": sent})
    assert answer.status_code == 200, answer.text
    assert upstream.requests[-1]["parallel_tool_calls"] is sent
    assert answer.json()["parallel_tool_calls"] is sent


def test_parallel_tool_calls_unsent_is_left_to_the_upstream(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    assert _post(webreach_url, {"tools": [WEATHER]}).status_code == 200
    assert "parallel_tool_calls" not in upstream.requests[-1]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"metadata": {"n": 1}}, "metadata.n: must be a string"),
        ({"truncation": "sometimes"}, "truncation: must be `auto` or `disabled`"),
        ({"background": "yes"}, "background: must be a boolean"),
        ({"user": 7}, "user: must be a string"),
        ({"reasoning": {"effort": 5}}, "reasoning.effort: must be a string"),
        ({"text": {"verbosity": "loud"}}, "text.verbosity: must be `low`, `medium` or `high`"),
    ],
)
def test_a_setting_that_cannot_be_echoed_is_refused_by_name(
    webreach_url: str, body: dict[str, Any], message: str
) -> None:
    answer = _post(webreach_url, body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["message"] == message


def test_a_step_offered_no_tools_is_not_sent_parallel_tool_calls(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    """Once the search budget is spent the loop asks for an answer without tools; OpenAI
    refuses ``parallel_tool_calls`` on a request that declares none."""
    model = upstream.respond = ToolCaller(gives_up=12)
    answer = _post(webreach_url, {"tools": [{"type": "web_search"}], "parallel_tool_calls": False})
    assert answer.status_code == 200, answer.text
    with_tools = [body for body in model.bodies if "tools" in body]
    without = [body for body in model.bodies if "tools" not in body]
    assert with_tools and without
    assert all(body["parallel_tool_calls"] is False for body in with_tools)
    assert all("parallel_tool_calls" not in body for body in without)
