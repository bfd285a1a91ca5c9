"""Conversation titles: ``"title": true`` asks the upstream for a short title beside the turn.

The title rides on the end of the reply in each protocol's own place (Messages
``message_delta.delta.title`` / top-level ``title``; Responses the response's ``title``, also
in ``response.completed``; Chat ``delta.title`` of the last chunk / ``message.title``), read here
through the official SDKs. A title that fails is ``null``; the answer never suffers for it.
"""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import pytest

from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from server_harness import PROTOCOL_IDS, SMALLEST_REQUESTS
from webreach.server.core.loop.title import TITLE_ASK

QUESTION = "How many people live in Iceland?"
ANSWER = "About 390,000 people."
TITLE = "Iceland in numbers"


def claude_client(url: str) -> anthropic.Anthropic:
    return anthropic_client(url.removesuffix("/v1"), strict=True)


def chat_title(url: str, extra: dict[str, Any], *, stream: bool) -> tuple[str, Any]:
    """The answer and the title of a Chat completion, as the SDK hands them over."""
    request: dict[str, Any] = {
        "model": "m",
        "messages": [{"role": "user", "content": QUESTION}],
        "extra_body": extra,
    }
    client = openai_client(url)
    if not stream:
        message = client.chat.completions.create(**request).choices[0].message
        return message.content or "", (message.model_extra or {}).get("title", "absent")
    text, title = "", "absent"
    for chunk in client.chat.completions.create(**request, stream=True):
        choice = chunk.choices[0]
        text += choice.delta.content or ""
        if choice.finish_reason is not None:
            title = (choice.delta.model_extra or {}).get("title", "absent")
        else:
            assert "title" not in (choice.delta.model_extra or {})
    return text, title


def responses_title(url: str, extra: dict[str, Any], *, stream: bool) -> tuple[str, Any]:
    client = openai_client(url)
    request: dict[str, Any] = {"model": "m", "input": QUESTION, "extra_body": extra}
    if not stream:
        response = client.responses.create(**request)
        return response.output_text, (response.model_extra or {}).get("title", "absent")
    with client.responses.stream(**request) as events:
        for event in events:
            if event.type == "response.created":
                assert "title" not in (event.response.model_extra or {})
            if event.type == "response.completed":
                completed = event.response
        final = events.get_final_response()
    title = (completed.model_extra or {}).get("title", "absent")
    assert (final.model_extra or {}).get("title", "absent") == title
    return final.output_text, title


def messages_title(url: str, extra: dict[str, Any], *, stream: bool) -> tuple[str, Any]:
    client = claude_client(url)
    request: dict[str, Any] = {
        "model": "m",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": QUESTION}],
        "extra_body": extra,
    }
    if not stream:
        message = client.messages.create(**request)
        text = "".join(block.text for block in message.content if block.type == "text")
        return text, (message.model_extra or {}).get("title", "absent")
    title: Any = "absent"
    with client.messages.stream(**request) as events:
        for event in events:
            if event.type == "message_delta":
                title = (event.delta.model_extra or {}).get("title", "absent")
        message = events.get_final_message()
    text = "".join(block.text for block in message.content if block.type == "text")
    return text, title


PROTOCOLS = {"chat": chat_title, "responses": responses_title, "messages": messages_title}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_title_comes_with_the_answer_in_the_protocols_own_place(
    webreach_url: str, upstream: ScriptedUpstream, protocol: str, stream: bool
) -> None:
    upstream.queue(Step(content=ANSWER))
    text, title = PROTOCOLS[protocol](webreach_url, {"title": True}, stream=stream)
    assert (text, title) == (ANSWER, TITLE)
    (ask,) = upstream.asides
    assert ask["messages"][0] == {"role": "system", "content": TITLE_ASK}
    assert QUESTION in ask["messages"][1]["content"]
    assert ask["stream"] is False
    assert len(upstream.requests) == 1


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_failed_title_is_null_and_the_answer_is_whole(
    webreach_url: str, upstream: ScriptedUpstream, protocol: str, stream: bool
) -> None:
    upstream.title = Step(status=500, error="the title model is down")
    upstream.queue(Step(content=ANSWER))
    text, title = PROTOCOLS[protocol](webreach_url, {"title": {"enabled": True}}, stream=stream)
    assert (text, title) == (ANSWER, None)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_no_title_is_asked_for_unless_the_client_wants_one(
    webreach_url: str, upstream: ScriptedUpstream, protocol: str
) -> None:
    upstream.queue(Step(content=ANSWER))
    text, title = PROTOCOLS[protocol](webreach_url, {"title": {"enabled": False}}, stream=False)
    assert (text, title) == (ANSWER, "absent")
    assert upstream.asides == []


def test_the_title_is_written_while_the_web_search_runs(
    webreach_url: str, upstream: ScriptedUpstream
) -> None:
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["Iceland population"]})]),
        Step(content="About 390,000【1】."),
    )
    client = openai_client(webreach_url)
    completion = client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": QUESTION}],
        tools=[{"type": "deepseek_web_search"}],  # type: ignore[list-item]
        extra_body={"title": True},
    )
    message = completion.choices[0].message
    assert message.content == "About 390,000."
    assert (message.model_extra or {})["title"] == TITLE
    assert len(upstream.requests) == 2
    assert len(upstream.asides) == 1
    usage = completion.usage
    assert usage is not None
    assert usage.prompt_tokens == 3 * 10  # two steps and the title, each 10 in
    assert usage.completion_tokens == 3 * 5


@pytest.mark.parametrize(("path", "body"), SMALLEST_REQUESTS, ids=PROTOCOL_IDS)
@pytest.mark.parametrize("value", ["yes", 1, {"enabled": "yes"}, {"on": True}])
def test_a_title_that_is_neither_a_boolean_nor_enabled_is_refused(
    webreach_url: str, path: str, body: dict[str, Any], value: object
) -> None:
    reply = httpx.post(f"{webreach_url}{path}", json={"model": "m", **body, "title": value})
    assert reply.status_code == 400
    assert reply.json()["error"]["message"] == (
        'title: must be a boolean or an object {"enabled": boolean}'
    )
