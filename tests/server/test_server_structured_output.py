"""Structured output through a web-search turn: Chat ``response_format``, Responses
``text.format`` and the Agents SDK's ``output_type`` reach the upstream as Chat's
``response_format`` on the step that answers, never beside the web tools."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from agents import Agent, OpenAIResponsesModel, RunConfig, Runner, WebSearchTool
from pydantic import BaseModel

from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import openai_client as client

QUESTION = "What is the weather in Reykjavík?"
DRAFT = "It is 5 °C in Reykjavík【1】."
"""The answer the model writes while it still has tools (and so not the format)."""


class Weather(BaseModel):
    city: str
    celsius: int


ANSWER = Weather(city="Reykjavík", celsius=5)


def searched_then_answered(upstream: ScriptedUpstream) -> None:
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["reykjavik weather"]})]),
        Step(content=DRAFT),
        Step(content=[ANSWER.model_dump_json()[:10], ANSWER.model_dump_json()[10:]]),
    )


def format_only_on_the_answer(upstream: ScriptedUpstream) -> dict[str, Any]:
    """The three upstream steps: the two with web tools carry no format, the last no tools;
    that last step's format is returned."""
    search, draft, answer = upstream.requests
    assert "response_format" not in search and "response_format" not in draft
    assert [tool["function"]["name"] for tool in search["tools"]] == ["web_search"]
    assert "tools" not in answer
    shape: dict[str, Any] = answer["response_format"]
    return shape


def test_chat_parse_through_a_search(upstream: ScriptedUpstream, webreach_url: str) -> None:
    searched_then_answered(upstream)
    reply = client(webreach_url).chat.completions.parse(
        model="m",
        messages=[{"role": "user", "content": QUESTION}],
        response_format=Weather,
        web_search_options={},
    )
    message = reply.choices[0].message
    assert message.parsed == ANSWER
    assert DRAFT not in (message.content or "")
    shape = format_only_on_the_answer(upstream)
    assert shape["type"] == "json_schema"
    assert shape["json_schema"]["name"] == "Weather"
    assert shape["json_schema"]["strict"] is True
    assert set(shape["json_schema"]["schema"]["properties"]) == {"city", "celsius"}


def test_chat_stream_parse_through_a_search(upstream: ScriptedUpstream, webreach_url: str) -> None:
    searched_then_answered(upstream)
    with client(webreach_url).chat.completions.stream(
        model="m",
        messages=[{"role": "user", "content": QUESTION}],
        response_format=Weather,
        extra_body={"plugins": [{"id": "web"}]},
    ) as stream:
        texts = [event.delta for event in stream if event.type == "content.delta"]
        final = stream.get_final_completion()
    assert final.choices[0].message.parsed == ANSWER
    assert "".join(texts) == ANSWER.model_dump_json()
    format_only_on_the_answer(upstream)


def test_chat_json_object_when_the_model_answers_at_once(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    """An answer written on the first step (no search) is asked for once more, formatted."""
    upstream.queue(Step(content="Sunny."), Step(content='{"sky": "sunny"}'))
    reply = client(webreach_url).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": QUESTION}],
        response_format={"type": "json_object"},
        tools=[{"type": "web_search"}],  # type: ignore[list-item]
    )
    assert json.loads(reply.choices[0].message.content or "") == {"sky": "sunny"}
    first, answer = upstream.requests
    assert "response_format" not in first and "tools" in first
    assert answer["response_format"] == {"type": "json_object"} and "tools" not in answer


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_responses_parse_through_a_search(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    searched_then_answered(upstream)
    responses = client(webreach_url).responses
    given: dict[str, Any] = {
        "model": "m",
        "input": QUESTION,
        "tools": [{"type": "web_search"}],
        "text_format": Weather,
    }
    if stream:
        with responses.stream(**given) as events:
            for _ in events:
                pass
            response = events.get_final_response()
    else:
        response = responses.parse(**given)
    assert response.output_parsed == ANSWER
    assert [item.type for item in response.output] == ["web_search_call", "message"]
    echoed = response.text.format if response.text is not None else None
    assert echoed is not None and echoed.type == "json_schema"
    assert (echoed.name, echoed.strict) == ("Weather", True)
    shape = format_only_on_the_answer(upstream)
    assert shape["json_schema"]["name"] == "Weather"
    assert "type" not in shape["json_schema"]


def test_responses_json_object_is_echoed_and_passed_on(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    """Without web tools there is no step to keep the format from: the one step has it."""
    upstream.queue(Step(content='{"ok": true}'))
    response = client(webreach_url).responses.create(
        model="m", input=QUESTION, text={"format": {"type": "json_object"}}
    )
    assert json.loads(response.output_text) == {"ok": True}
    assert response.text is not None and response.text.format.type == "json_object"
    (sent,) = upstream.requests
    assert sent["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ({"type": "json_schema", "schema": {}}, "text.format.name"),
        ({"type": "json_schema", "name": "x", "schema": 1}, "text.format.schema"),
        ({"type": "yaml"}, "text.format.type: must be `text`, `json_schema` or `json_object`"),
    ],
)
def test_responses_bad_formats_are_400s(
    upstream: ScriptedUpstream, webreach_url: str, shape: dict[str, Any], message: str
) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client(webreach_url).responses.create(model="m", input="hi", text={"format": shape})  # type: ignore[typeddict-item]
    assert message in str(raised.value)
    assert upstream.requests == []


def test_chat_bad_format_is_a_400(upstream: ScriptedUpstream, webreach_url: str) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client(webreach_url).chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": QUESTION}],
            response_format={"type": "json_schema"},  # type: ignore[typeddict-item]
            web_search_options={},
        )
    assert "response_format.json_schema" in str(raised.value)


async def test_agents_output_type_with_web_search(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    searched_then_answered(upstream)
    async with openai.AsyncOpenAI(base_url=webreach_url, api_key="k", max_retries=0) as sdk:
        agent = Agent(
            name="weather",
            instructions="Answer with the weather.",
            model=OpenAIResponsesModel(model="m", openai_client=sdk),
            tools=[WebSearchTool()],
            output_type=Weather,
        )
        result = await Runner.run(agent, QUESTION, run_config=RunConfig(tracing_disabled=True))
    assert result.final_output == ANSWER
    shape = format_only_on_the_answer(upstream)
    assert shape["type"] == "json_schema"
