"""Every top-level field of Anthropic's Messages API is declared and typed: passed on to the
upstream where Chat Completions has its counterpart, refused with a 400 naming it where the
server cannot honour it, and ignored only where it tunes how Anthropic runs a request."""

from __future__ import annotations

import typing
from typing import Any

import anthropic
import pytest
from anthropic.types import message_create_params
from anthropic.types.beta import message_create_params as beta_create_params

from messages_events import USER
from scripted_upstream import ScriptedUpstream
from sdk_clients import anthropic_client
from webreach.server.messages.shapes_in import MessagesRequest

HEADERS = {"betas", "user_profile_id", "workspace_id"}
"""Parameters the SDK sends as headers (``anthropic-beta`` …), never in the body."""
FORMAT = {"type": "json_schema", "schema": {"type": "object", "properties": {}}}
RESPONSE_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "output", "schema": FORMAT["schema"]},
}


def sdk_fields() -> set[str]:
    fields: set[str] = set()
    for params in (
        message_create_params.MessageCreateParamsNonStreaming,
        message_create_params.MessageCreateParamsStreaming,
        beta_create_params.MessageCreateParamsNonStreaming,
        beta_create_params.MessageCreateParamsStreaming,
    ):
        fields |= set(typing.get_type_hints(params))
    return fields


def test_every_field_of_the_sdk_is_declared() -> None:
    declared = {field.alias or name for name, field in MessagesRequest.model_fields.items()}
    assert sdk_fields() - HEADERS <= declared
    # Sampling settings the SDK no longer declares but clients still send.
    assert {"temperature", "top_p", "top_k"} <= declared


def client(url: str) -> anthropic.Anthropic:
    return anthropic_client(url.removesuffix("/v1"), strict=True)


def create(url: str, *, stream: bool = False, **body: Any) -> Any:
    """``messages.create`` with ``body`` as sent, whatever the SDK's own parameters."""
    args = {"model": "m", "max_tokens": 64, "messages": USER}
    if stream:
        with client(url).messages.stream(**args, extra_body=body) as events:
            return events.get_final_message()
    return client(url).messages.create(**args, extra_body=body)


MISTYPED = [
    ({"top_k": "x"}, "top_k: must be a non-negative integer"),
    ({"top_k": -1}, "top_k: must be a non-negative integer"),
    ({"metadata": 5}, "metadata: must be an object"),
    ({"metadata": {"user_id": 5}}, "metadata.user_id: must be a string"),
    ({"output_config": []}, "output_config: must be an object"),
    (
        {"output_config": {"effort": "huge"}},
        "output_config.effort: must be `low`, `medium`, `high`, `xhigh` or `max`",
    ),
    (
        {"output_config": {"format": {"type": "json_schema"}}},
        "output_config.format.schema: Field required",
    ),
    (
        {"output_config": {"format": {"type": "regex", "schema": {}}}},
        "output_config.format.type: must be `json_schema`",
    ),
    (
        {"output_format": {"type": "json_schema", "schema": 1}},
        "output_format.schema: must be an object",
    ),
    ({"cache_control": {"type": "persistent"}}, "cache_control.type: must be `ephemeral`"),
    (
        {"cache_control": {"type": "ephemeral", "ttl": 60}},
        "cache_control.ttl: must be `5m` or `1h`",
    ),
    (
        {"diagnostics": {"previous_message_id": 1}},
        "diagnostics.previous_message_id: must be a string",
    ),
    ({"service_tier": "priority"}, "service_tier: must be `auto` or `standard_only`"),
    ({"speed": "ludicrous"}, "speed: must be `standard` or `fast`"),
    (
        {"context_management": {"edits": [1]}},
        "context_management.edits: must be an array of objects",
    ),
    ({"fallbacks": "any"}, "fallbacks: must be `default` or an array of objects"),
    ({"fallback_credit_token": 5}, "fallback_credit_token: must be a string or an object"),
    (
        {"billing_policy": {"type": "billing_policy", "bill_to": "them"}},
        "billing_policy.bill_to: must be `self` or `user_profile`",
    ),
    ({"inference_geo": 1}, "inference_geo: must be a string"),
    ({"container": 1}, "container: must be a string or an object"),
    ({"mcp_servers": {}}, "mcp_servers: must be an array of objects"),
    ({"compaction": "summarize"}, "compaction: must be an object"),
    ({"thread": "create"}, "thread: must be an object"),
]
UNHONOURED = [
    ({"top_k": 5}, "top_k: not supported: Chat Completions upstreams take no top-k sampling"),
    (
        {"container": "cntr_1"},
        "container: not supported: the server runs no code execution containers",
    ),
    (
        {"mcp_servers": [{"type": "url", "url": "https://mcp.example", "name": "x"}]},
        "mcp_servers: not supported: the server connects to no MCP servers; declare their tools "
        "as client tools",
    ),
    (
        {"inference_geo": "us"},
        "inference_geo: not supported: the server cannot choose where the upstream model runs",
    ),
    (
        {"compaction": {"type": "summarize"}},
        "compaction: not supported: the server does not summarize conversations",
    ),
    (
        {"thread": {"type": "create"}},
        "thread: not supported: the server keeps no conversation state; "
        "send the whole conversation",
    ),
    (
        {"billing_policy": {"type": "billing_policy", "bill_to": "user_profile"}},
        "billing_policy.bill_to: not supported: only `self` can be billed",
    ),
]


@pytest.mark.parametrize(("body", "message"), MISTYPED + UNHONOURED)
@pytest.mark.parametrize("stream", [False, True])
def test_a_field_the_server_cannot_take_is_a_400_naming_it(
    upstream: ScriptedUpstream, webreach_url: str, body: dict[str, Any], message: str, stream: bool
) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        create(webreach_url, stream=stream, **body)
    assert caught.value.status_code == 400
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": message},
    }
    assert upstream.requests == []


def test_settings_with_a_chat_counterpart_reach_the_upstream(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    reply = client(webreach_url).messages.create(
        model="m",
        max_tokens=64,
        messages=USER,
        metadata={"user_id": "user-7"},
        output_config={"format": FORMAT, "effort": "xhigh"},
        thinking={"type": "adaptive"},
    )
    assert reply.content[0].type == "text"
    sent = upstream.requests[0]
    assert sent["user"] == "user-7"
    assert sent["response_format"] == RESPONSE_FORMAT
    assert sent["reasoning_effort"] == "xhigh"
    assert "metadata" not in sent and "output_config" not in sent

    create(webreach_url, output_format=FORMAT, metadata={"user_id": None})
    sent = upstream.requests[1]
    assert sent["response_format"] == RESPONSE_FORMAT
    assert "user" not in sent


def test_hints_are_accepted_and_not_passed_on(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    """Beside them, ``metadata`` shows that what has a counterpart does reach the upstream."""
    hints: dict[str, Any] = {
        "metadata": {"user_id": "user-7"},
        "cache_control": {"type": "ephemeral", "ttl": "1h"},
        "diagnostics": {"previous_message_id": None},
        "service_tier": "standard_only",
        "speed": "fast",
        "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
        "fallbacks": "default",
        "fallback_credit_token": "tok",
        "billing_policy": {"type": "billing_policy", "bill_to": "self"},
        "output_config": {"task_budget": {"type": "tokens", "total": 1000}},
        "mcp_servers": [],
        "container": None,
        "top_k": None,
    }
    for stream in (False, True):
        reply = create(webreach_url, stream=stream, **hints)
        assert reply.content[0].text == "Hello from the scripted upstream."
    for sent in upstream.requests:
        streamed = ["stream", "stream_options"] if "stream" in sent else []
        assert sorted(sent) == ["max_tokens", "messages", "model", *streamed, "user"]
