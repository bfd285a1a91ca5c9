"""Chat completions the server builds itself (the web-tools loop) carry every field OpenAI's
schema requires, nullable ones included: the SDK fills a missing field with None, so the raw
bodies are checked key by key, and a strict SDK client reads them too."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest

from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import openai_client

USER = [{"role": "user", "content": "How many people live in Iceland?"}]
WEB = [{"type": "deepseek_web_search"}]
WEATHER = {
    "type": "function",
    "function": {"name": "weather", "parameters": {"type": "object", "properties": {}}},
}

# The `required` lists of OpenAI's published schema (CreateChatCompletionResponse, its choice,
# ChatCompletionResponseMessage, …). `content`, `refusal` and `logprobs` are nullable yet
# required: the SDK's types cannot tell them from optional ones.
COMPLETION = {"id", "object", "created", "model", "choices"}
CHOICE = {"index", "message", "finish_reason", "logprobs"}
MESSAGE = {"role", "content", "refusal"}
TOOL_CALL = {"id", "type", "function"}
FUNCTION = {"name", "arguments"}
ANNOTATION = {"type", "url_citation"}
URL_CITATION = {"url", "title", "start_index", "end_index"}
CHUNK = {"id", "object", "created", "model", "choices"}
CHUNK_CHOICE = {"index", "delta", "finish_reason"}


def test_the_lists_cover_what_the_sdk_itself_requires() -> None:
    from openai.types.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionMessage
    from openai.types.chat.chat_completion import Choice
    from openai.types.chat.chat_completion_chunk import Choice as ChunkChoice

    for model, listed in [
        (ChatCompletion, COMPLETION),
        (Choice, CHOICE),
        (ChatCompletionMessage, MESSAGE),
        (ChatCompletionChunk, CHUNK),
        (ChunkChoice, CHUNK_CHOICE),
    ]:
        required = {name for name, field in model.model_fields.items() if field.is_required()}
        assert required <= listed, model.__name__


def assert_complete(body: dict[str, Any]) -> None:
    assert body.keys() >= COMPLETION
    for choice in body["choices"]:
        assert choice.keys() >= CHOICE
        message = choice["message"]
        assert message.keys() >= MESSAGE, sorted(message)
        for call in message.get("tool_calls") or ():
            assert call.keys() >= TOOL_CALL and call["function"].keys() >= FUNCTION
        for annotation in message.get("annotations") or ():
            assert annotation.keys() >= ANNOTATION
            assert annotation["url_citation"].keys() >= URL_CITATION


def whole(url: str, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(url + "/chat/completions", json=body, timeout=30)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = json.loads(response.text)
    return answer


def chunks(url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    with httpx.stream(
        "POST", url + "/chat/completions", json={**body, "stream": True}, timeout=30
    ) as response:
        assert response.status_code == 200
        lines = [line for line in response.iter_lines() if line.startswith("data: {")]
    return [json.loads(line[6:]) for line in lines]


def strict(url: str) -> openai.OpenAI:
    return openai_client(url, strict=True)


SCRIPTS: dict[str, tuple[list[dict[str, Any]], list[Step]]] = {
    "answer": (WEB, [Step(content="About 390,000.")]),
    "search": (
        WEB,
        [
            Step(calls=[Call("web_search", {"queries": ["Iceland population"]})]),
            Step(content="About 390,000【1】."),
        ],
    ),
    "client tool": ([*WEB, WEATHER], [Step(calls=[Call("weather", {})])]),
}


@pytest.mark.parametrize("script", list(SCRIPTS))
def test_a_loop_answer_has_every_required_field(
    upstream: ScriptedUpstream, webreach_url: str, script: str
) -> None:
    tools, steps = SCRIPTS[script]
    body = {"model": "m", "messages": USER, "tools": tools}
    upstream.queue(*steps)
    answer = whole(webreach_url, body)
    assert_complete(answer)
    message = answer["choices"][0]["message"]
    assert message["refusal"] is None
    assert answer["choices"][0]["logprobs"] is None

    upstream.queue(*steps)
    reply = strict(webreach_url).chat.completions.create(**body)
    assert reply.choices[0].message.refusal is None
    assert reply.choices[0].message.content == message["content"]

    upstream.queue(*steps)
    streamed = chunks(webreach_url, body)
    assert streamed
    for chunk in streamed:
        assert chunk.keys() >= CHUNK
        for choice in chunk["choices"]:
            assert choice.keys() >= CHUNK_CHOICE
    assert streamed[-1]["choices"][0]["finish_reason"] == answer["choices"][0]["finish_reason"]
