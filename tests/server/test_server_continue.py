"""Continue generation: a conversation that ends with a partial assistant reply gets only the
new part. Messages ends with the assistant message; Chat sets ``prefix: true`` on it (on the
beta endpoint, ``/beta/chat/completions``, as DeepSeek's clients send it); Responses
refuses. The upstream is asked in its own way (``WEBREACH_UPSTREAM_CONTINUE``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import openai
import pytest

from scripted_upstream import ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from server_harness import LiveServer
from webreach.seam import WebRuntime
from webreach.server import ServerSettings, create_app
from webreach.server.core.wire.framing import CANNOT_CONTINUE
from webreach.server.endpoints import CANNOT_CONTINUE_HERE
from webreach.tools import ToolOptions

ASKED = {"role": "user", "content": "Write a short poem about autumn."}
BEGUN = "The autumn wind rises,"
REST = " and the leaves let go."

Serve = Callable[..., Any]


@pytest.fixture
def serve(upstream: ScriptedUpstream) -> Serve:
    """Start a server with the given upstream dialect and continuation mode."""

    @contextmanager
    def start(dialect: str = "openai", mode: str = "auto") -> Iterator[str]:
        config = ServerSettings(
            upstream_base_url=upstream.url, upstream_dialect=dialect, upstream_continue=mode
        )
        with LiveServer(create_app(config, WebRuntime(), ToolOptions())) as server:
            yield server.url

    return start


def continue_messages(url: str, *, stream: bool) -> str:
    client = anthropic_client(url)
    request: dict[str, Any] = {
        "model": "m",
        "max_tokens": 128,
        "messages": [ASKED, {"role": "assistant", "content": BEGUN}],
        "extra_body": {"safety_check": {"level": "high"}},
    }
    if stream:
        with client.messages.stream(**request) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**request)
    assert message.stop_reason == "end_turn"
    return "".join(block.text for block in message.content if block.type == "text")


def continue_chat(url: str, *, stream: bool) -> str:
    client = openai_client(f"{url}/beta")
    messages: Any = [ASKED, {"role": "assistant", "content": BEGUN, "prefix": True}]
    if not stream:
        completion = client.chat.completions.create(model="m", messages=messages)
        return completion.choices[0].message.content or ""
    chunks = client.chat.completions.create(model="m", messages=messages, stream=True)
    return "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)


CONTINUERS = {"messages": continue_messages, "chat": continue_chat}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("protocol", CONTINUERS)
def test_a_deepseek_upstream_continues_with_prefix_and_only_the_new_part_returns(
    serve: Serve, upstream: ScriptedUpstream, protocol: str, stream: bool
) -> None:
    upstream.queue(Step(content=REST))
    with serve("deepseek") as url:
        assert CONTINUERS[protocol](url, stream=stream) == REST
    (sent,) = upstream.requests
    assert sent["messages"][-1] == {"role": "assistant", "content": BEGUN, "prefix": True}
    assert "continue_final_message" not in sent


def test_a_vllm_upstream_is_asked_to_continue_the_final_message(
    serve: Serve, upstream: ScriptedUpstream
) -> None:
    upstream.queue(Step(content=REST))
    with serve("openai", "continue_final_message") as url:
        assert continue_chat(url, stream=False) == REST
    (sent,) = upstream.requests
    assert sent["continue_final_message"] is True
    assert sent["add_generation_prompt"] is False
    assert sent["messages"][-1] == {"role": "assistant", "content": BEGUN}


def test_an_openai_upstream_gets_the_partial_reply_as_it_is(
    serve: Serve, upstream: ScriptedUpstream
) -> None:
    upstream.queue(Step(content=REST))
    with serve() as url:
        assert continue_messages(url, stream=False) == REST
    (sent,) = upstream.requests
    assert sent["messages"][-1] == {"role": "assistant", "content": BEGUN}
    assert not {"continue_final_message", "add_generation_prompt"} & set(sent)


def test_an_upstream_that_cannot_continue_refuses_clearly(
    serve: Serve, upstream: ScriptedUpstream
) -> None:
    with serve("openai", "off") as url:
        reply = httpx.post(
            f"{url}/v1/messages",
            json={
                "model": "m",
                "max_tokens": 64,
                "messages": [ASKED, {"role": "assistant", "content": BEGUN}],
            },
        )
    assert reply.status_code == 400
    assert reply.json()["error"]["message"] == CANNOT_CONTINUE_HERE
    assert upstream.requests == []


def test_a_conversation_ending_with_a_user_message_is_no_continuation(
    serve: Serve, upstream: ScriptedUpstream
) -> None:
    upstream.queue(Step(content="A poem."))
    with serve("deepseek", "prefix") as url:
        client = openai_client(f"{url}/v1")
        client.chat.completions.create(model="m", messages=[ASKED], extra_body={"title": False})
    assert "prefix" not in upstream.requests[0]["messages"][-1]


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        (
            [{**ASKED, "prefix": True}, {"role": "assistant", "content": BEGUN}],
            "messages.0.prefix: only the last message, an `assistant` one, may set it",
        ),
        (
            [ASKED, {"role": "assistant", "content": BEGUN, "prefix": "yes"}],
            "messages.1.prefix: must be a boolean",
        ),
        (
            [
                ASKED,
                {
                    "role": "assistant",
                    "content": BEGUN,
                    "prefix": True,
                    "server_tool_calls": [{"step": 0, "calls": []}],
                },
            ],
            CANNOT_CONTINUE,
        ),
    ],
    ids=["not last", "not a boolean", "used web tools"],
)
def test_chat_prefix_misuse_is_a_400_naming_the_message(
    serve: Serve, upstream: ScriptedUpstream, messages: list[Any], message: str
) -> None:
    with serve("deepseek") as url:
        reply = httpx.post(
            f"{url}/beta/chat/completions", json={"model": "m", "messages": messages}
        )
    assert reply.status_code == 400
    assert reply.json()["error"]["message"] == message
    assert upstream.requests == []


def test_a_messages_reply_that_used_web_tools_cannot_be_continued(
    serve: Serve, upstream: ScriptedUpstream
) -> None:
    searched = [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"queries": ["autumn"]},
        },
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
        {"type": "text", "text": BEGUN},
    ]
    with serve("deepseek") as url:
        reply = httpx.post(
            f"{url}/v1/messages",
            json={
                "model": "m",
                "max_tokens": 64,
                "messages": [ASKED, {"role": "assistant", "content": searched}],
            },
        )
    assert reply.status_code == 400
    assert reply.json()["error"]["message"] == CANNOT_CONTINUE


def test_responses_refuses_to_continue_a_reply(serve: Serve, upstream: ScriptedUpstream) -> None:
    with serve("deepseek") as url:
        client = openai_client(f"{url}/v1")
        with pytest.raises(openai.BadRequestError) as refused:
            client.responses.create(
                model="m",
                input=[ASKED, {"role": "assistant", "content": BEGUN}],  # type: ignore[list-item]
            )
    assert "continuing a reply is not supported in the Responses API" in str(refused.value)
    assert upstream.requests == []
