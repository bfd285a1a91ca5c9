"""``safety_check`` reviews the user's input too, before anything is generated.

An unsafe input is DeepSeek's ``400 Content Exists Risk`` in every protocol's error shape,
streamed or not (a plain HTTP 400, never a stream), and neither the upstream nor a search
provider is asked anything. What is reviewed is the round's own input: the user messages after
the last assistant message, and a partial reply to continue. A review that cannot be made fails
the request (502) as an answer that cannot be reviewed does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from providers_for_tests import ScriptedFetch, ScriptedSearch
from scripted_moderation import ScriptedModeration
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from server_harness import PROTOCOL_IDS, LiveServer
from webreach.cache import MemoryStore
from webreach.seam import WebRuntime
from webreach.server import ServerSettings, create_app
from webreach.server.core.review.reviewers import REVIEW_ASK
from webreach.tools import ToolOptions

UNSAFE = "Tell me the FORBIDDEN recipe."
SAFE = "How many people live in Iceland?"
HIGH = {"safety_check": {"level": "high"}}
RISK = "Content Exists Risk"
REVIEW_FAILED = "content review could not be completed"


@pytest.fixture
def moderation() -> ScriptedModeration:
    return ScriptedModeration()


def serve(upstream: ScriptedUpstream, search: ScriptedSearch, moderation_url: str | None) -> Any:
    """The server; keep-alives wait 5 s, so a failure before the answer is still its HTTP status."""
    config = ServerSettings(
        upstream_base_url=upstream.url,
        signing_key="test-signing-key-of-at-least-32-bytes",
        moderation_base_url=moderation_url,
        moderation_api_key="moderation-key" if moderation_url else None,
    )
    runtime = WebRuntime()
    runtime.register_search_provider(search)
    runtime.register_fetch_provider(ScriptedFetch())
    app = create_app(config, runtime, ToolOptions(), store=MemoryStore(), keepalive_seconds=5)
    return LiveServer(app)


@pytest.fixture
def moderated(
    upstream: ScriptedUpstream, search: ScriptedSearch, moderation: ScriptedModeration
) -> Iterator[str]:
    """A server whose reviewer is the scripted moderation endpoint (base URL without /v1)."""
    with moderation.running() as url, serve(upstream, search, url) as server:
        yield server.url


@pytest.fixture
def model_reviewed(upstream: ScriptedUpstream, search: ScriptedSearch) -> Iterator[str]:
    """A server without a moderation endpoint: the upstream model gives the verdicts."""
    with serve(upstream, search, None) as server:
        yield server.url


def request_for(protocol: str, messages: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """(path, body) of a request with web search declared and ``safety_check`` on."""
    if protocol == "chat":
        tools: list[dict[str, Any]] = [{"type": "deepseek_web_search"}]
        return "/v1/chat/completions", {"model": "m", "messages": messages, "tools": tools, **HIGH}
    if protocol == "responses":
        tools = [{"type": "deepseek_web_search"}]
        return "/v1/responses", {"model": "m", "input": messages, "tools": tools, **HIGH}
    tools = [{"type": "deepseek_web_search", "name": "web_search"}]
    body = {"model": "m", "max_tokens": 256, "messages": messages, "tools": tools, **HIGH}
    return "/v1/messages", body


def ask_with_sdk(base: str, protocol: str, body: dict[str, Any], *, stream: bool) -> Any:
    """The request through the protocol's official SDK (the stream fully read)."""
    extra = {k: body[k] for k in ("safety_check", "tools") if k in body}
    rest = {k: v for k, v in body.items() if k not in extra}
    if protocol == "messages":
        claude = anthropic_client(base)
        if stream:
            with claude.messages.stream(**rest, extra_body=extra) as events:
                return events.get_final_message()
        return claude.messages.create(**rest, extra_body=extra)
    client = openai_client(base + "/v1")
    if protocol == "responses":
        if stream:
            with client.responses.stream(**rest, extra_body=extra) as events:
                return events.get_final_response()
        return client.responses.create(**rest, extra_body=extra)
    if stream:
        with client.chat.completions.stream(**rest, extra_body=extra) as events:
            return events.get_final_completion()
    return client.chat.completions.create(**rest, extra_body=extra)


def nothing_generated(upstream: ScriptedUpstream, search: ScriptedSearch) -> None:
    assert upstream.requests == []
    assert [ask for ask in upstream.asides if ask["messages"][0]["content"] != REVIEW_ASK] == []
    assert search.calls == []


# --- refused ------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("protocol", PROTOCOL_IDS)
def test_an_unsafe_input_is_content_exists_risk_through_the_sdks(
    moderated: str,
    upstream: ScriptedUpstream,
    search: ScriptedSearch,
    moderation: ScriptedModeration,
    protocol: str,
    stream: bool,
) -> None:
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["recipe"]})]), Step(content="Here it is.")
    )
    _, body = request_for(protocol, [{"role": "user", "content": UNSAFE}])
    errors = (openai.BadRequestError, anthropic.BadRequestError)
    with pytest.raises(errors) as refused:
        ask_with_sdk(moderated, protocol, body, stream=stream)
    assert refused.value.status_code == 400
    assert RISK in refused.value.message
    nothing_generated(upstream, search)
    assert moderation.requests[0]["input"] == [UNSAFE]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("protocol", PROTOCOL_IDS)
def test_the_refusal_is_a_plain_400_in_the_protocols_error_shape(
    moderated: str, upstream: ScriptedUpstream, search: ScriptedSearch, protocol: str, stream: bool
) -> None:
    path, body = request_for(protocol, [{"role": "user", "content": UNSAFE}])
    reply = httpx.post(moderated + path, json={**body, "stream": stream}, timeout=30)
    assert reply.status_code == 400
    assert reply.headers["content-type"].startswith("application/json")
    if protocol == "messages":
        expected: dict[str, Any] = {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": RISK},
        }
    else:
        expected = {
            "error": {"message": RISK, "type": "invalid_request_error", "param": None, "code": None}
        }
    assert reply.json() == expected
    nothing_generated(upstream, search)


def test_a_refused_input_asks_for_no_title(
    moderated: str, upstream: ScriptedUpstream, search: ScriptedSearch
) -> None:
    path, body = request_for("chat", [{"role": "user", "content": UNSAFE}])
    reply = httpx.post(moderated + path, json={**body, "title": True}, timeout=30)
    assert reply.status_code == 400
    assert upstream.asides == []
    nothing_generated(upstream, search)


@pytest.mark.parametrize("protocol", PROTOCOL_IDS)
def test_the_model_reviewer_refuses_an_input_before_any_generation(
    model_reviewed: str, upstream: ScriptedUpstream, search: ScriptedSearch, protocol: str
) -> None:
    upstream.verdict = lambda body: Step(
        content="FAIL" if "FORBIDDEN" in body["messages"][1]["content"] else "PASS"
    )
    _, body = request_for(protocol, [{"role": "user", "content": UNSAFE}])
    with pytest.raises((openai.BadRequestError, anthropic.BadRequestError)) as refused:
        ask_with_sdk(model_reviewed, protocol, body, stream=True)
    assert RISK in refused.value.message
    nothing_generated(upstream, search)
    (review,) = upstream.asides
    assert review["messages"][0]["content"] == REVIEW_ASK
    assert UNSAFE in review["messages"][1]["content"]


# --- passed ---------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("protocol", PROTOCOL_IDS)
def test_a_safe_input_is_reviewed_first_and_answered(
    moderated: str,
    upstream: ScriptedUpstream,
    moderation: ScriptedModeration,
    protocol: str,
    stream: bool,
) -> None:
    upstream.queue(Step(content="About 390,000 people."))
    _, body = request_for(protocol, [{"role": "user", "content": SAFE}])
    answer = ask_with_sdk(moderated, protocol, body, stream=stream)
    if protocol == "messages":
        assert answer.content[-1].text == "About 390,000 people."
    elif protocol == "responses":
        assert answer.output_text == "About 390,000 people."
    else:
        assert answer.choices[0].message.content == "About 390,000 people."
    reviewed = [request["input"] for request in moderation.requests]
    assert reviewed == [[SAFE], ["About 390,000 people."]]
    assert len(upstream.requests) == 1


def test_without_safety_check_the_input_is_not_reviewed(
    moderated: str, upstream: ScriptedUpstream, moderation: ScriptedModeration
) -> None:
    path, body = request_for("chat", [{"role": "user", "content": UNSAFE}])
    del body["safety_check"]
    reply = httpx.post(moderated + path, json=body, timeout=30)
    assert reply.status_code == 200
    assert moderation.requests == []


# --- what the input is ------------------------------------------------------------------------


def post_chat(base: str, messages: list[dict[str, Any]], **extra: Any) -> httpx.Response:
    path, body = request_for("chat", messages)
    return httpx.post(base + path, json={**body, **extra}, timeout=30)


def test_every_user_message_of_the_round_is_reviewed(
    moderated: str, upstream: ScriptedUpstream, search: ScriptedSearch
) -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": UNSAFE}]},
        {"role": "user", "content": "Answer the message above."},
    ]
    reply = post_chat(moderated, messages)
    assert reply.status_code == 400
    assert reply.json()["error"]["message"] == RISK
    nothing_generated(upstream, search)


def test_earlier_rounds_system_messages_and_tool_results_are_not_the_rounds_input(
    moderated: str, upstream: ScriptedUpstream, moderation: ScriptedModeration
) -> None:
    messages = [
        {"role": "system", "content": "You may discuss FORBIDDEN topics in the abstract."},
        {"role": "user", "content": UNSAFE},
        {"role": "assistant", "content": "I cannot help with that."},
        {"role": "user", "content": SAFE},
    ]
    assert post_chat(moderated, messages).status_code == 200
    assert moderation.requests[0]["input"] == [SAFE]
    moderation.requests.clear()
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]
    with_tool = [
        {"role": "user", "content": "Summarise notes.txt"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "A FORBIDDEN note."},
    ]
    path, body = request_for("chat", with_tool)
    body["tools"] = [*body["tools"], *tools]
    assert httpx.post(moderated + path, json=body, timeout=30).status_code == 200
    reviewed = [request["input"] for request in moderation.requests]
    assert all("A FORBIDDEN note." not in piece for pieces in reviewed for piece in pieces)


def test_a_partial_reply_to_continue_is_part_of_the_input(
    moderated: str, upstream: ScriptedUpstream, search: ScriptedSearch
) -> None:
    claude = anthropic_client(moderated)
    with pytest.raises(anthropic.BadRequestError) as refused:
        claude.messages.create(
            model="m",
            max_tokens=64,
            messages=[
                {"role": "user", "content": "Write a short poem about autumn."},
                {"role": "assistant", "content": "The FORBIDDEN wind rises,"},
            ],
            extra_body=HIGH,
        )
    assert refused.value.message.endswith(RISK) or RISK in refused.value.message
    nothing_generated(upstream, search)


# --- the reviewer fails --------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("protocol", PROTOCOL_IDS)
def test_an_input_that_cannot_be_reviewed_fails_before_any_generation(
    moderated: str,
    upstream: ScriptedUpstream,
    search: ScriptedSearch,
    moderation: ScriptedModeration,
    protocol: str,
    stream: bool,
) -> None:
    moderation.status = 503
    path, body = request_for(protocol, [{"role": "user", "content": SAFE}])
    reply = httpx.post(moderated + path, json={**body, "stream": stream}, timeout=30)
    assert reply.status_code == 502
    assert REVIEW_FAILED in reply.json()["error"]["message"]
    assert "moderation-key" not in reply.text
    nothing_generated(upstream, search)
