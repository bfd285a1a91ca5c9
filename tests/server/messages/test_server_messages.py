"""The Messages codec: requests into turns, loop events into what the anthropic SDK accepts."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx
import pytest

from messages_events import (
    CODEC,
    DEEPSEEK_TOOLS,
    HUAON,
    NATIVE_TOOLS,
    STATS,
    USER,
    body_json,
    created_message,
    failed_read_round,
    final_message,
    frames,
    sdk_client,
    search_call,
    search_round,
    serving,
    stream_text,
    turn_for,
    usage,
)
from providers_for_tests import ScriptedSearch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client
from server_harness import gated_search
from webreach.seam import SearchRequest, SearchResult, WebError, WebErrorCode
from webreach.server.core.turn.errors import RequestError, ServerFailure
from webreach.server.core.turn.events import (
    CallFailed,
    ClientToolCall,
    Event,
    Failed,
    FindInPageAction,
    Finished,
    OpenPageAction,
    PageOutcome,
    ReasoningDelta,
    SearchAction,
    SearchOutcome,
    StepReasoningDone,
    TextDelta,
    Usage,
    WebCall,
    WebCallCompleted,
    WebCallStarted,
)
from webreach.server.core.turn.shape import DomainFilter, PageRef, ReadUrlSpec, SearchSpec
from webreach.server.core.wire.codec import stream_frames
from webreach.tools import SearchFilters


def parse(**body: Any) -> Any:
    return CODEC.parse({"model": "deepseek-flash", "max_tokens": 64, **body})


def refused(**body: Any) -> str:
    with pytest.raises(RequestError) as caught:
        parse(**body)
    assert caught.value.status == 400
    return caught.value.message


# --- parse: the conversation ----------------------------------------------------------------


def test_strings_and_system_become_chat_messages() -> None:
    turn = parse(
        system="Be brief.",
        messages=[
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "Bye"},
        ],
        stream=True,
    )
    assert turn.protocol == "messages"
    assert turn.model == "deepseek-flash"
    assert turn.stream is True
    assert turn.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Bye"},
    ]
    assert turn.params == {"max_tokens": 64}
    assert turn.client_tools == [] and turn.tool_choice is None and not turn.web.any


def test_system_text_blocks_are_joined() -> None:
    system = [
        {"type": "text", "text": "One."},
        {"type": "text", "text": "Two.", "cache_control": {}},
    ]
    turn = parse(system=system, messages=USER)
    assert turn.messages[0] == {"role": "system", "content": "One.\n\nTwo."}


def test_text_blocks_collapse_and_images_pass_through() -> None:
    turn = parse(
        messages=[
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
                    },
                    {"type": "image", "source": {"type": "url", "url": "https://x.test/cat.jpg"}},
                ],
            },
        ]
    )
    assert turn.messages[0] == {"role": "user", "content": "a\n\nb"}
    assert turn.messages[1] == {"role": "assistant", "content": "ok"}
    assert turn.messages[2] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
            {"type": "image_url", "image_url": {"url": "https://x.test/cat.jpg"}},
        ],
    }


def test_client_tool_calls_and_results() -> None:
    turn = parse(
        messages=[
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "two calls", "signature": "s"},
                    {"type": "redacted_thinking", "data": "xx"},
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "weather",
                        "input": {"city": "Paris"},
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_2",
                        "name": "weather",
                        "input": {"city": "Rome"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18°C"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_2",
                        "content": [
                            {"type": "text", "text": "no data"},
                            {
                                "type": "image",
                                "source": {"type": "url", "url": "https://x.test/m.png"},
                            },
                        ],
                        "is_error": True,
                    },
                    {"type": "text", "text": "Answer in one line."},
                ],
            },
        ]
    )
    assert turn.messages[1] == {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {
                "id": "toolu_1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
            },
            {
                "id": "toolu_2",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city":"Rome"}'},
            },
        ],
    }
    assert turn.messages[2:] == [
        {"role": "tool", "tool_call_id": "toolu_1", "content": "18°C"},
        {"role": "tool", "tool_call_id": "toolu_2", "content": "Error: no data"},
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": "https://x.test/m.png"}},
                {"type": "text", "text": "Answer in one line."},
            ],
        },
    ]


def test_tool_use_only_assistant_has_null_content() -> None:
    turn = parse(
        messages=[
            USER[0],
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]},
        ]
    )
    assert turn.messages[1]["content"] is None
    assert turn.messages[2] == {"role": "tool", "tool_call_id": "t", "content": ""}
    assert len(turn.messages) == 3


def _read_reply(signature: str | None, text: str = "It is a reserved domain.") -> dict[str, Any]:
    result: dict[str, Any] = {
        "type": "web_fetch_tool_result",
        "tool_use_id": "srvtoolu_rl_00_x",
        "content": {
            "type": "web_fetch_result",
            "url": "https://example.com",
            "content": {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": ""},
                "title": "Example Domain",
            },
            "published_at": None,
        },
        "kind": "read_link",
    }
    if signature is not None:
        result["signature"] = signature
    return {
        "role": "assistant",
        "content": [
            {
                "type": "server_tool_use",
                "id": "srvtoolu_rl_00_x",
                "name": "deepseek_read_url",
                "input": {"action": "read_link", "url": "https://example.com"},
                "caller": {"type": "direct"},
                "kind": "read_link",
            },
            result,
            {"type": "text", "text": text, "citations": [{"type": "web_search_result_location"}]},
        ],
    }


def test_web_history_is_dropped_and_signatures_point_at_their_round() -> None:
    search_reply = {
        "role": "assistant",
        "content": [
            {"type": "server_tool_use", "id": "s", "name": "deepseek_web_search", "input": {}},
            {"type": "web_search_tool_result", "tool_use_id": "s", "content": []},
            {"type": "text", "text": "Found it."},
        ],
    }
    turn = parse(
        system="sys",
        tools=DEEPSEEK_TOOLS,
        messages=[
            {"role": "user", "content": "Summarize https://example.com/"},
            _read_reply("sig-one"),
            {"role": "user", "content": "Search something"},
            search_reply,
            {"role": "user", "content": [{"type": "text", "text": "Read https://example.com/b"}]},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}],
            },
            _read_reply("sig-two", "B says hi."),
            _read_reply(None, "Failed read."),
            {"role": "user", "content": "Quote it."},
        ],
    )
    assert [m["role"] for m in turn.messages] == [
        "system", "user", "assistant", "user", "assistant", "user", "assistant", "tool",
        "assistant", "assistant", "user",
    ]  # fmt: skip
    assert turn.messages[2] == {"role": "assistant", "content": "It is a reserved domain."}
    assert turn.messages[4] == {"role": "assistant", "content": "Found it."}
    assert turn.pages == [
        PageRef(1, "sig-one", "srvtoolu_rl_00_x"),
        PageRef(5, "sig-two", "srvtoolu_rl_00_x"),
        PageRef(5, None, "srvtoolu_rl_00_x"),  # unsealed: found by its id while the store has it
    ]
    assert turn.messages[1]["content"] == "Summarize https://example.com/"
    assert turn.messages[5]["content"] == "Read https://example.com/b"


def test_history_with_web_blocks_is_fine_without_web_tools() -> None:
    turn = parse(messages=[USER[0], _read_reply("sig"), {"role": "user", "content": "More?"}])
    assert not turn.web.any
    assert turn.pages == [PageRef(0, "sig", "srvtoolu_rl_00_x")]


def test_a_plain_assistant_prefill_may_be_continued() -> None:
    turn = parse(messages=[USER[0], {"role": "assistant", "content": "The answer is"}])
    assert turn.messages[-1] == {"role": "assistant", "content": "The answer is"}


# --- parse: tools, choices and parameters ----------------------------------------------------


def test_client_tools_become_function_tools() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    turn = parse(
        messages=USER,
        tools=[
            {"name": "weather", "description": "Weather now", "input_schema": schema},
            {"type": "custom", "name": "clock", "input_schema": {"type": "object"}, "strict": True},
        ],
    )
    assert [tool.definition for tool in turn.client_tools] == [
        {
            "type": "function",
            "function": {"name": "weather", "description": "Weather now", "parameters": schema},
        },
        {
            "type": "function",
            "function": {"name": "clock", "parameters": {"type": "object"}, "strict": True},
        },
    ]
    assert not turn.web.any


def test_deepseek_web_tools() -> None:
    turn = parse(messages=USER, tools=[{**DEEPSEEK_TOOLS[0], "max_uses": 2}, DEEPSEEK_TOOLS[1]])
    assert turn.web.search == SearchSpec("deepseek_web_search", "deepseek_web_search", 2)
    assert turn.web.search.budget == 2
    assert turn.web.read_url == ReadUrlSpec("deepseek_read_url", "deepseek_read_url")
    assert turn.client_tools == []
    assert turn.uses_web


def test_deepseek_tools_keep_the_declared_name() -> None:
    turn = parse(messages=USER, tools=[{"type": "deepseek_web_search", "name": "search"}])
    assert turn.web.search == SearchSpec("search", "deepseek_web_search")


def test_anthropic_native_web_tools() -> None:
    turn = parse(
        messages=USER,
        tools=[
            {
                "type": "web_search_20250305",
                "name": "web_search",
                "max_uses": 3,
                "allowed_domains": ["statice.is"],
                "blocked_domains": ["spam.example"],
                "user_location": {"type": "approximate", "city": "Reykjavik"},
            },
            {"type": "web_fetch_20250910", "name": "web_fetch", "blocked_domains": ["x.test"]},
        ],
    )
    assert turn.web.search == SearchSpec(
        "web_search",
        "web_search_20250305",
        3,
        DomainFilter(allowed=("statice.is",), blocked=("spam.example",)),
        location="Reykjavik",
        filters=SearchFilters(include_domains=("statice.is",), exclude_domains=("spam.example",)),
    )
    assert turn.web.read_url == ReadUrlSpec(
        "web_fetch", "web_fetch_20250910", None, DomainFilter(blocked=("x.test",))
    )


def test_later_native_versions_are_web_tools_too() -> None:
    turn = parse(
        messages=USER,
        tools=[
            {"type": "web_search_20260209", "name": "web_search"},
            {"type": "web_fetch_20260318"},
        ],
    )
    assert turn.web.search is not None and turn.web.search.declared_type == "web_search_20260209"
    assert turn.web.read_url is not None and turn.web.read_url.name == "web_fetch"


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (
            [DEEPSEEK_TOOLS[0], DEEPSEEK_TOOLS[0]],
            "tools: `deepseek_web_search` can only be declared once",
        ),
        (
            [DEEPSEEK_TOOLS[1], {"type": "deepseek_read_url", "name": "again"}],
            "tools: `deepseek_read_url` can only be declared once",
        ),
        (
            [DEEPSEEK_TOOLS[0], NATIVE_TOOLS[0]],
            "tools: `web_search_20250305` can only be declared once",
        ),
        (
            [{**DEEPSEEK_TOOLS[0], "allowed_domains": ["a.com"]}],
            "tools: `allowed_domains` is not supported by `deepseek_web_search`",
        ),
        (
            [{**DEEPSEEK_TOOLS[0], "blocked_domains": ["a.com"]}],
            "tools: `blocked_domains` is not supported by `deepseek_web_search`",
        ),
        (
            [{**DEEPSEEK_TOOLS[0], "user_location": {"type": "approximate"}}],
            "tools: `user_location` is not supported by `deepseek_web_search`",
        ),
        (
            [{**DEEPSEEK_TOOLS[1], "allowed_domains": ["a.com"]}],
            "tools: `allowed_domains` is not supported by `deepseek_read_url`",
        ),
    ],
)
def test_web_tool_declarations_refused(tools: list[dict[str, Any]], message: str) -> None:
    assert refused(messages=USER, tools=tools) == message


@pytest.mark.parametrize(
    ("tools", "name"),
    [
        (DEEPSEEK_TOOLS, "deepseek_web_search"),
        (DEEPSEEK_TOOLS, "deepseek_read_url"),
        ([{"type": "deepseek_web_search", "name": "search"}], "deepseek_web_search"),
    ],
)
def test_the_reference_web_tools_cannot_be_forced(tools: list[dict[str, Any]], name: str) -> None:
    choice = {"type": "tool", "name": name}
    assert refused(messages=USER, tools=tools, tool_choice=choice) == (
        f"tool_choice: `{name}` cannot be forced"
    )


@pytest.mark.parametrize(("name", "forced"), [("web_search", "search"), ("web_fetch", "read")])
def test_forcing_a_native_web_tool_forces_it_in_the_first_step(name: str, forced: str) -> None:
    choice = {"type": "tool", "name": name, "disable_parallel_tool_use": True}
    turn = parse(messages=USER, tools=NATIVE_TOOLS, tool_choice=choice)
    assert (turn.tool_choice, turn.forced_web) == ("auto", forced)
    assert turn.params["parallel_tool_calls"] is False


def test_continuing_a_web_reply_is_refused() -> None:
    partial = _read_reply("sig")
    assert refused(messages=[USER[0], partial], tools=DEEPSEEK_TOOLS) == (
        "messages: the last `assistant` message used `deepseek_web_search` or "
        "`deepseek_read_url` and cannot be continued; resend the previous request"
    )


WEATHER = {"name": "weather", "input_schema": {"type": "object"}}


@pytest.mark.parametrize(
    ("tools", "choice", "expected"),
    [
        ([WEATHER], {"type": "auto"}, "auto"),
        ([WEATHER], {"type": "any"}, "required"),
        ([WEATHER, DEEPSEEK_TOOLS[0]], {"type": "any"}, "required"),
        (DEEPSEEK_TOOLS, {"type": "any"}, "required"),
        ([WEATHER], {"type": "tool", "name": "weather"}, {"type": "function", "function": {"name": "weather"}}),  # noqa: E501
        ([WEATHER, *DEEPSEEK_TOOLS], {"type": "none"}, "none"),
        (None, {"type": "auto"}, None),
        (None, {"type": "none"}, None),
    ],
)  # fmt: skip
def test_tool_choice_mapping(tools: Any, choice: dict[str, Any], expected: Any) -> None:
    body: dict[str, Any] = {"messages": USER, "tool_choice": choice}
    if tools is not None:
        body["tools"] = tools
    assert parse(**body).tool_choice == expected


def test_tool_choice_none_turns_every_tool_off() -> None:
    turn = parse(messages=USER, tools=DEEPSEEK_TOOLS, tool_choice={"type": "none"})
    assert turn.tools_off and not turn.uses_web


def test_disable_parallel_tool_use() -> None:
    choice = {"type": "auto", "disable_parallel_tool_use": True}
    assert parse(messages=USER, tools=[WEATHER], tool_choice=choice).params == {
        "max_tokens": 64,
        "parallel_tool_calls": False,
    }


def test_thinking_and_sampling_parameters() -> None:
    turn = parse(
        messages=USER,
        thinking={"type": "enabled", "budget_tokens": 2048},
        temperature=0.2,
        top_p=0.9,
        stop_sequences=["\n\nHuman:"],
        metadata={"user_id": "u"},
    )
    assert turn.thinking is True
    assert turn.params == {
        "max_tokens": 64,
        "temperature": 0.2,
        "top_p": 0.9,
        "stop": ["\n\nHuman:"],
        "user": "u",
    }
    assert parse(messages=USER, thinking={"type": "adaptive"}).thinking is True
    assert parse(messages=USER, thinking={"type": "disabled"}).thinking is False
    assert parse(messages=USER).thinking is False


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"max_tokens": 5}, "messages: Field required"),
        ({"max_tokens": 5, "messages": []}, "messages: must be a non-empty list"),
        ({"messages": USER, "max_tokens": 0}, "max_tokens: must be a positive integer"),
        ({"messages": USER, "max_tokens": "5"}, "max_tokens: must be a positive integer"),
        ({"messages": USER, "max_tokens": True}, "max_tokens: must be a positive integer"),
        ({"messages": USER, "max_tokens": 5, "model": None}, "model: Field required"),
        ({"messages": USER, "max_tokens": 5, "stream": "yes"}, "stream: must be a boolean"),
        (
            {"messages": [{"role": "tool", "content": "x"}], "max_tokens": 5},
            "messages.0.role: must be `user`, `assistant` or `system`",
        ),
        (
            {"messages": [{"role": "user"}], "max_tokens": 5},
            "messages.0.content: Field required",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "audio"}]}], "max_tokens": 5},
            "messages.0.content.0.type: unsupported content block type `audio`",
        ),
        (
            {"messages": [{"role": "user", "content": [{"text": "no type"}]}], "max_tokens": 5},
            "messages.0.content.0: must be a content block with a `type`",
        ),
        (
            {
                "messages": [USER[0], {"role": "assistant", "content": [{"type": "image"}]}],
                "max_tokens": 5,
            },
            "messages.1.content.0.type: unsupported content block type `image`",
        ),
        (
            {
                "messages": USER,
                "max_tokens": 5,
                "tools": [{"type": "bash_20250124", "name": "bash"}],
            },
            "tools.0.type: unsupported tool type `bash_20250124`",
        ),
        (
            {"messages": USER, "max_tokens": 5, "tools": [{"name": "f"}]},
            "tools.0.input_schema: Field required",
        ),
        (
            {"messages": USER, "max_tokens": 5, "tools": [WEATHER, WEATHER]},
            "tools: tool names must be unique; `weather` is declared twice",
        ),
        (
            {"messages": USER, "max_tokens": 5, "tools": [{**NATIVE_TOOLS[0], "max_uses": 0}]},
            "tools.0.max_uses: must be a positive integer",
        ),
        (
            {"messages": USER, "max_tokens": 5, "tool_choice": {"type": "tool", "name": "nope"}},
            "tool_choice.name: `nope` is not a declared tool",
        ),
        (
            {"messages": USER, "max_tokens": 5, "tool_choice": {"type": "sometimes"}},
            "tool_choice.type: must be `auto`, `any`, `tool` or `none`",
        ),
        (
            {"messages": USER, "max_tokens": 5, "thinking": {"type": "maybe"}},
            "thinking.type: must be `enabled`, `adaptive` or `disabled`",
        ),
        (
            {
                "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}],
                "max_tokens": 5,
            },
            "messages.0.content.0.source.type: must be `base64` or `url`",
        ),
    ],
)
def test_malformed_requests_name_the_field(body: dict[str, Any], message: str) -> None:
    body = {"model": "m", **body}
    with pytest.raises(RequestError) as caught:
        CODEC.parse(body)
    assert caught.value.message == message
    assert caught.value.status == 400


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (422, "invalid_request_error"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (502, "api_error"),
    ],
)
def test_error_body(status: int, kind: str) -> None:
    assert CODEC.error_body(status, "nope") == {
        "type": "error",
        "error": {"type": kind, "message": "nope"},
    }


# --- render: frames --------------------------------------------------------------------------


def assert_well_formed(sse: str) -> list[tuple[str | None, dict[str, Any]]]:
    """Every frame is named after its type; blocks open in order 0, 1, 2 … and close once."""
    parsed = frames(sse)
    assert parsed[0][0] == "message_start"
    open_index: int | None = None
    next_index = 0
    for name, data in parsed:
        assert name == data["type"]
        if name == "content_block_start":
            assert open_index is None and data["index"] == next_index
            open_index, next_index = next_index, next_index + 1
        elif name == "content_block_delta":
            assert data["index"] == open_index
        elif name == "content_block_stop":
            assert data["index"] == open_index
            open_index = None
        else:
            assert open_index is None
    return parsed


def test_message_start_has_what_the_helper_needs() -> None:
    parsed = frames(stream_text(turn_for(), [Finished("end_turn")]))
    start = parsed[0][1]["message"]
    assert start["id"].startswith("msg_")
    assert start["content"] == [] and start["stop_reason"] is None
    assert start["usage"]["input_tokens"] == 0 and start["usage"]["output_tokens"] == 0
    assert [name for name, _ in parsed] == ["message_start", "message_delta", "message_stop"]


def test_search_round_frames() -> None:
    turn = turn_for(tools=DEEPSEEK_TOOLS, thinking={"type": "enabled"})
    parsed = assert_well_formed(stream_text(turn, search_round()))
    starts = [d["content_block"] for n, d in parsed if n == "content_block_start"]
    assert [b["type"] for b in starts] == [
        "thinking", "server_tool_use", "web_search_tool_result", "thinking", "text", "text", "text",
    ]  # fmt: skip
    assert starts[1] == {
        "type": "server_tool_use",
        "id": "srvtoolu_s_00_a1",
        "name": "deepseek_web_search",
        "input": {},
        "caller": {"type": "direct"},
        "kind": "search",
    }
    index = next(
        d["index"]
        for n, d in parsed
        if n == "content_block_start" and d["content_block"] is starts[1]
    )
    streamed = [d["delta"] for n, d in parsed if n == "content_block_delta" and d["index"] == index]
    assert [d["type"] for d in streamed] == ["input_json_delta"]
    assert json.loads(streamed[0]["partial_json"]) == {
        "action": "search",
        "queries": ["Iceland population 2025", "Iceland population 2026"],
        "query": "Iceland population 2025",
    }
    results = starts[2]
    assert results["tool_use_id"] == "srvtoolu_s_00_a1" and results["kind"] == "search"
    assert results["content"][0] == {
        "type": "web_search_result",
        "title": "Statistics Iceland",
        "url": STATS.url,
        "encrypted_content": results["content"][0]["encrypted_content"],
        "page_age": "2026-01-02T03:04:05+00:00",
        "snippet": "394,000 at the start of 2026",
        "site_name": "Hagstofa",
        "site_icon": "https://statice.is/favicon.ico",
    }
    assert all(r["encrypted_content"] for r in results["content"])
    assert results["content"][1]["title"] == ""
    deltas = [d["delta"] for n, d in parsed if n == "content_block_delta"]
    signatures = [d for d in deltas if d["type"] == "signature_delta"]
    assert signatures == [{"type": "signature_delta", "signature": ""}] * 2
    assert parsed[-2][1]["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    assert parsed[-1] == ("message_stop", {"type": "message_stop"})


def test_cited_blocks_split_and_urls_appear_once_per_block() -> None:
    body = body_json(turn_for(tools=DEEPSEEK_TOOLS), search_round())
    texts = [b for b in body["content"] if b["type"] == "text"]
    assert [t["text"] for t in texts] == [
        "Iceland has about **394,000** people",
        ". In 2024: 404,600",
        ".",
    ]
    assert [[c["url"] for c in t.get("citations", [])] for t in texts] == [
        [STATS.url, HUAON.url],
        [HUAON.url],
        [],
    ]
    assert "citations" not in texts[2]
    first = texts[0]["citations"]
    assert first[0] == {
        "type": "web_search_result_location",
        "url": STATS.url,
        "title": "Statistics Iceland",
        "cited_text": "Iceland has about **394,000** people",
        "encrypted_index": "",
    }
    assert first[1]["title"] is None
    assert texts[1]["citations"][0]["cited_text"] == ". In 2024: 404,600"


def test_citation_without_open_text_is_dropped() -> None:
    call = search_call()
    events: list[Event] = [
        WebCallStarted(call),
        WebCallCompleted(call, SearchOutcome((STATS,))),
        *search_round()[8:9],
        TextDelta("Hi."),
        Finished("end_turn"),
    ]
    body = body_json(turn_for(tools=DEEPSEEK_TOOLS), events)
    assert body["content"][-1] == {"type": "text", "text": "Hi."}


def test_empty_thinking_block_when_a_step_searches_at_once() -> None:
    call = search_call()
    events: list[Event] = [
        StepReasoningDone(0),
        WebCallStarted(call),
        WebCallCompleted(call, SearchOutcome(())),
        ReasoningDelta("Nothing found."),
        TextDelta("I could not find it."),
        Finished("end_turn"),
    ]
    thinking = turn_for(tools=DEEPSEEK_TOOLS, thinking={"type": "enabled"})
    types = [b["type"] for b in body_json(thinking, events)["content"]]
    assert types == ["thinking", "server_tool_use", "web_search_tool_result", "thinking", "text"]
    assert body_json(thinking, events)["content"][0] == {
        "type": "thinking",
        "thinking": "",
        "signature": "",
    }
    plain = [b["type"] for b in body_json(turn_for(tools=DEEPSEEK_TOOLS), events)["content"]]
    assert plain == ["server_tool_use", "web_search_tool_result", "thinking", "text"]


def test_read_links_and_their_failures() -> None:
    body = body_json(turn_for(tools=DEEPSEEK_TOOLS), failed_read_round())
    calls, results = body["content"][:2], body["content"][2:4]
    assert [c["input"] for c in calls] == [
        {"action": "read_link", "url": "https://example.com/a"},
        {"action": "read_link", "url": "https://example.com/b"},
    ]
    assert {c["name"] for c in calls} == {"deepseek_read_url"}
    retrieved = results[0]["content"].pop("retrieved_at")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", retrieved)  # RFC 3339, UTC
    assert results[0] == {
        "type": "web_fetch_tool_result",
        "tool_use_id": "srvtoolu_rl_00_0",
        "content": {
            "type": "web_fetch_result",
            "url": "https://example.com/a",
            "content": {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": ""},
                "title": "Page A",
            },
            "published_at": "2026-01-01",
        },
        "kind": "read_link",
        "signature": "c2VhbGVk",
    }
    assert results[1] == {
        "type": "web_fetch_tool_result",
        "tool_use_id": "srvtoolu_rl_00_1",
        "content": {"type": "web_fetch_tool_result_error", "error_code": "url_not_accessible"},
        "kind": "read_link",
    }
    assert body["usage"]["server_tool_use"]["web_fetch_requests"] == 2


def test_deep_search_page_actions() -> None:
    def call(n: int, action: Any) -> WebCall:
        return WebCall(
            f"srvtoolu_ds_{n}", 1, n, "deep_search", "web_search", "web_search_20250305", action
        )

    opened = call(0, OpenPageAction("https://a.test/"))
    found = call(1, FindInPageAction("https://a.test/", "333"))
    events: list[Event] = [
        WebCallStarted(opened),
        WebCallStarted(found),
        WebCallCompleted(opened, PageOutcome("https://a.test/", "A", "2026-01-01T00:00:00+00:00")),
        WebCallCompleted(found, PageOutcome("https://a.test/", None, None)),
        Finished("end_turn"),
    ]
    body = body_json(turn_for(tools=NATIVE_TOOLS, thinking={"type": "enabled"}), events)
    assert [b["input"] for b in body["content"][:2]] == [
        {"action": "open_page", "url": "https://a.test/"},
        {"action": "find_in_page", "url": "https://a.test/", "pattern": "333"},
    ]
    assert [b["kind"] for b in body["content"]] == ["deep_search"] * 4
    assert body["content"][3]["content"]["content"]["title"] is None
    assert "signature" not in body["content"][2]
    message = created_message(body, strict=True)
    assert [b.type for b in message.content][2:] == ["web_fetch_tool_result"] * 2


def test_failed_search_is_an_error_block() -> None:
    call = search_call()
    events: list[Event] = [
        WebCallStarted(call),
        WebCallCompleted(call, CallFailed("unavailable")),
        TextDelta("Search is down."),
        Finished("end_turn", usage(web_search_requests=1)),
    ]
    body = body_json(turn_for(tools=DEEPSEEK_TOOLS), events)
    assert body["content"][1]["content"] == {
        "type": "web_search_tool_result_error",
        "error_code": "unavailable",
    }
    odd = [WebCallStarted(call), WebCallCompleted(call, CallFailed("url_not_accessible"))]
    body = body_json(turn_for(tools=DEEPSEEK_TOOLS), [*odd, Finished("end_turn")])
    assert body["content"][1]["content"]["error_code"] == "unavailable"


def test_client_tool_call_block() -> None:
    events: list[Event] = [
        TextDelta("Let me check."),
        ClientToolCall("call_1", "weather", '{"city": "Paris"}'),
        ClientToolCall("call_2", "clock", ""),
        ClientToolCall("call_3", "broken", '{"city": '),
        Finished("tool_use"),
    ]
    turn = turn_for(tools=[WEATHER])
    parsed = assert_well_formed(stream_text(turn, events))
    json_deltas = [
        d["delta"] for n, d in parsed if d.get("delta", {}).get("type") == "input_json_delta"
    ]
    assert json_deltas == [{"type": "input_json_delta", "partial_json": '{"city": "Paris"}'}]
    tool_starts = [d for n, d in parsed if n == "content_block_start" and d["index"] > 0]
    assert tool_starts[0]["content_block"] == {
        "type": "tool_use",
        "id": "call_1",
        "name": "weather",
        "input": {},
    }
    body = body_json(turn, events)
    assert body["stop_reason"] == "tool_use"
    assert [b.get("input") for b in body["content"]] == [None, {"city": "Paris"}, {}, {}]


def test_failure_closes_blocks_and_ends_with_an_error_event() -> None:
    events: list[Event] = [
        ReasoningDelta("thinking"),
        TextDelta("Half an ans"),
        Failed("The model failed to generate a complete response. Please retry.", usage()),
        TextDelta("never shown"),
    ]
    turn = turn_for(tools=DEEPSEEK_TOOLS)
    parsed = frames(stream_text(turn, events))
    names = [n for n, _ in parsed]
    assert names[-3:] == ["content_block_delta", "content_block_stop", "error"]
    assert "message_delta" not in names and "message_stop" not in names
    assert parsed[-1][1] == {
        "type": "error",
        "error": {
            "type": "api_error",
            "message": "The model failed to generate a complete response. Please retry.",
        },
        "usage": {
            "input_tokens": 1900,
            "output_tokens": 72,
            "cache_read_input_tokens": 5,
            "cache_creation_input_tokens": 0,
            "server_tool_use": {
                "web_search_requests": 0,
                "web_fetch_requests": 0,
                "tool_search": 0,
                "tool_fetch": 0,
                "tool_image_search": 0,
            },
        },
    }
    with pytest.raises(ServerFailure, match="failed to generate a complete response"):
        body_json(turn, events)  # nothing was sent yet: an HTTP error, not a 200


def test_events_that_stop_without_an_ending_fail_the_response() -> None:
    turn = turn_for()
    parsed = frames(stream_text(turn, [TextDelta("cut")]))
    assert parsed[-1][0] == "error"
    with pytest.raises(ServerFailure, match="ended before it was complete"):
        body_json(turn, [TextDelta("cut")])


async def test_a_loop_that_raises_still_ends_the_stream_with_an_error() -> None:
    async def broken() -> AsyncIterator[Event]:
        yield TextDelta("Half")
        raise RuntimeError("bug")

    sent: list[str] = []

    async def read() -> None:
        async for frame in stream_frames(CODEC, turn_for(), broken()):
            sent.append(frame)

    await read()
    parsed = frames("".join(sent))
    assert [n for n, _ in parsed][-2:] == ["content_block_stop", "error"]
    assert parsed[-1][1]["error"]["type"] == "api_error"


def test_usage() -> None:
    finished = Finished("max_tokens", Usage(100, 20, 30, 7, 2, 1, 3, 1, 0))
    thinking = turn_for(tools=NATIVE_TOOLS, thinking={"type": "enabled"})
    assert body_json(thinking, [finished])["usage"] == {
        "input_tokens": 70,
        "output_tokens": 20,
        "cache_read_input_tokens": 30,
        "cache_creation_input_tokens": 0,
        "output_tokens_details": {"thinking_tokens": 7},
        "server_tool_use": {
            "web_search_requests": 2,
            "web_fetch_requests": 1,
            "tool_search": 3,
            "tool_fetch": 1,
            "tool_image_search": 0,
        },
    }
    plain = body_json(turn_for(), [Finished("end_turn", Usage(10, 2))])
    assert plain["usage"] == {
        "input_tokens": 10,
        "output_tokens": 2,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    assert plain["stop_reason"] == "end_turn" and plain["content"] == []


def test_unicode_and_newlines_survive_the_frames() -> None:
    text = '第一行\n第二行 \u2028 «ok» "q" \\ 😀'
    body = body_json(turn_for(), [TextDelta(text), Finished("end_turn")])
    parsed = frames(stream_text(turn_for(), [TextDelta(text), Finished("end_turn")]))
    assert body["content"][0]["text"] == text
    assert [d["delta"]["text"] for n, d in parsed if n == "content_block_delta"] == [text]


async def test_message_start_waits_for_the_first_event_after_a_keep_alive() -> None:
    """It carries the first step's usage, so it waits for that or for the first event; a
    keep-alive comment gives the client its first byte at once, and more fill the wait."""
    gate = asyncio.Event()

    async def events() -> AsyncIterator[Event]:
        await gate.wait()
        yield Finished("end_turn")

    stream = stream_frames(CODEC, turn_for(), events())
    assert await asyncio.wait_for(anext(stream), 5) == ": keep-alive\n\n"
    waiting = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    gate.set()
    first = await asyncio.wait_for(waiting, 5)
    assert first.startswith("event: message_start\n")
    rest = [first, *[frame async for frame in stream]]
    assert "message_stop" in rest[-1]


# --- the official SDK reads it ---------------------------------------------------------------


def _same(streamed: Any, created: Any) -> None:
    keep = ("content", "stop_reason", "stop_sequence", "usage", "model", "role", "type")
    a, b = streamed.to_dict(warnings=False), created.to_dict(warnings=False)
    assert {k: a.get(k) for k in keep} == {k: b.get(k) for k in keep}


@pytest.mark.parametrize("strict", [False, True])
def test_sdk_builds_the_native_search_round(strict: bool) -> None:
    turn = turn_for(tools=NATIVE_TOOLS, thinking={"type": "enabled"})
    events = search_round(search_call("web_search", "web_search_20250305"))
    streamed = final_message(stream_text(turn, events), strict=strict)
    created = created_message(body_json(turn, events), strict=strict)
    _same(streamed, created)
    blocks = streamed.content
    assert [b.type for b in blocks] == [
        "thinking", "server_tool_use", "web_search_tool_result", "thinking", "text", "text", "text",
    ]  # fmt: skip
    call = blocks[1]
    assert call.type == "server_tool_use" and call.name == "web_search"
    assert call.input["query"] == "Iceland population 2025"
    assert call.model_extra == {"kind": "search"}
    results = blocks[2]
    assert results.type == "web_search_tool_result" and isinstance(results.content, list)
    assert results.content[0].model_extra == {
        "snippet": STATS.snippet,
        "site_name": "Hagstofa",
        "site_icon": "https://statice.is/favicon.ico",
    }
    text = blocks[4]
    assert text.type == "text" and text.citations is not None
    # Anthropic's own web search declared: the source's words, as its clients show them.
    assert [(c.url, c.cited_text) for c in text.citations] == [  # type: ignore[union-attr]
        (STATS.url, STATS.snippet),
        (HUAON.url, HUAON.snippet),
    ]
    assert streamed.usage.server_tool_use is not None
    assert streamed.usage.server_tool_use.web_search_requests == 1
    assert streamed.usage.server_tool_use.model_extra == {
        "tool_search": 2,
        "tool_fetch": 0,
        "tool_image_search": 0,
    }
    assert streamed.usage.input_tokens == 1900 and streamed.usage.cache_read_input_tokens == 5


def test_sdk_builds_deepseek_named_blocks_without_strict_validation() -> None:
    turn = turn_for(tools=DEEPSEEK_TOOLS)
    events = search_round()[:-1] + failed_read_round()
    streamed = final_message(stream_text(turn, events), strict=False)
    created = created_message(body_json(turn, events), strict=False)
    _same(streamed, created)
    names = [b.name for b in streamed.content if b.type == "server_tool_use"]
    assert names == ["deepseek_web_search", "deepseek_read_url", "deepseek_read_url"]
    fetched = [b for b in streamed.content if b.type == "web_fetch_tool_result"]
    assert fetched[0].model_extra == {"kind": "read_link", "signature": "c2VhbGVk"}


def test_strict_sdk_rejects_only_the_deepseek_tool_names() -> None:
    turn = turn_for(tools=DEEPSEEK_TOOLS)
    with pytest.raises(anthropic.APIResponseValidationError):
        created_message(body_json(turn, search_round()), strict=True)
    events: list[Event] = [TextDelta("No search needed."), Finished("end_turn")]
    assert final_message(stream_text(turn, events), strict=True).content[0].type == "text"


@pytest.mark.parametrize("strict", [False, True])
def test_sdk_reads_native_fetch_and_errors(strict: bool) -> None:
    turn = turn_for(tools=NATIVE_TOOLS)
    search = search_call("web_search", "web_search_20250305")
    events: list[Event] = [
        WebCallStarted(search),
        WebCallCompleted(search, CallFailed("unavailable")),
        *failed_read_round("web_fetch"),
    ]
    streamed = final_message(stream_text(turn, events), strict=strict)
    created = created_message(body_json(turn, events), strict=strict)
    _same(streamed, created)
    error = streamed.content[1]
    assert error.type == "web_search_tool_result"
    assert not isinstance(error.content, list) and error.content.error_code == "unavailable"
    fetched = [b for b in streamed.content if b.type == "web_fetch_tool_result"]
    assert fetched[0].content.type == "web_fetch_result"
    assert fetched[1].content.type == "web_fetch_tool_result_error"


@pytest.mark.parametrize("strict", [False, True])
def test_sdk_reads_client_tool_calls(strict: bool) -> None:
    turn = turn_for(tools=[WEATHER, *NATIVE_TOOLS])
    events: list[Event] = [
        ReasoningDelta("Use the tool."),
        ClientToolCall("call_9", "weather", '{"city":"Oslo","days":[1,2]}'),
        Finished("tool_use", Usage(50, 10)),
    ]
    streamed = final_message(stream_text(turn, events), strict=strict)
    _same(streamed, created_message(body_json(turn, events), strict=strict))
    assert streamed.stop_reason == "tool_use"
    call = streamed.content[1]
    assert call.type == "tool_use" and call.input == {"city": "Oslo", "days": [1, 2]}
    assert streamed.content[0].type == "thinking" and streamed.content[0].signature == ""


@pytest.mark.parametrize("strict", [False, True])
def test_sdk_raises_on_the_error_event_which_carries_usage(strict: bool) -> None:
    turn = turn_for(tools=NATIVE_TOOLS)
    events: list[Event] = [TextDelta("Half"), Failed("upstream timed out", usage())]
    with pytest.raises(anthropic.APIStatusError) as caught:
        final_message(stream_text(turn, events), strict=strict)
    assert caught.value.body["error"]["message"] == "upstream timed out"  # type: ignore[index]
    assert caught.value.body["usage"]["output_tokens"] == 72  # type: ignore[index]
    with pytest.raises(ServerFailure):
        body_json(turn, events)


def test_sdk_text_stream_yields_the_answer() -> None:
    turn = turn_for(tools=NATIVE_TOOLS)
    sse = stream_text(turn, search_round(search_call("web_search", "web_search_20250305")))
    client = sdk_client(serving(sse=sse), strict=True)
    with client.messages.stream(model="m", max_tokens=9, messages=USER) as stream:  # type: ignore[arg-type]
        text = "".join(stream.text_stream)
    assert text == "Iceland has about **394,000** people. In 2024: 404,600."


def test_actions_cover_every_kind() -> None:
    assert SearchAction(()).queries == ()
    call = WebCall("i", 0, 0, "search", "web_search", "web_search_20250305", SearchAction(()))
    body = body_json(turn_for(tools=NATIVE_TOOLS), [WebCallStarted(call), Finished("end_turn")])
    assert body["content"][0]["input"] == {"action": "search", "queries": []}


# --- the running server, driven by the anthropic SDK -----------------------------------------

NATIVE_SEARCH = [{"type": "web_search_20250305", "name": "web_search"}]
ANSWER = ["Iceland has about 390,000 ", "people【1", "】【2】. Reykjavík is the capital【9】."]
FOUND = [f"https://iceland-population-2025.example/{n}" for n in (1, 2, 3)]


def search_step(*query_lists: list[str]) -> Step:
    return Step(calls=[Call("web_search", {"queries": q}) for q in query_lists])


@pytest.fixture
def server_keepalive() -> float:
    """Longer than any turn here takes on a loaded machine: a whole answer still waiting at its
    first keep-alive has begun its 200, and the failure tests read the error sent before it
    (the keep-alive itself is tested without a server, in this module's unit tests)."""
    return 60.0


def live_clients(url: str, *, strict: bool = True) -> list[anthropic.Anthropic]:
    """A normal client, and (unless ``strict`` is False) one that validates every response."""
    base = url.removesuffix("/v1")
    made = [anthropic_client(base)]
    if strict:
        made.append(anthropic_client(base, strict=True))
    return made


def ask(client: anthropic.Anthropic, *, stream: bool, **request: Any) -> Any:
    """``create(...)``, or ``stream(...).get_final_message()``."""
    args: dict[str, Any] = {"model": "m", "max_tokens": 256, "messages": USER, **request}
    if stream:
        with client.messages.stream(**args) as events:
            return events.get_final_message()
    return client.messages.create(**args)


def raw_frames(url: str, body: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    """The SSE frames as sent, keep-alive comments left out."""
    request = {"model": "m", "max_tokens": 256, "messages": USER, **body, "stream": True}
    with httpx.stream("POST", url + "/messages", json=request, timeout=30) as response:
        assert response.status_code == 200
        text = response.read().decode()
    kept = [chunk for chunk in text.split("\n\n") if chunk and not chunk.startswith(":")]
    return frames("\n\n".join(kept))


@pytest.mark.parametrize("stream", [False, True])
def test_live_plain_relay(upstream: ScriptedUpstream, webreach_url: str, stream: bool) -> None:
    for client in live_clients(webreach_url):
        message = ask(
            client,
            stream=stream,
            system="Be brief.",
            stop_sequences=["END"],
            extra_body={"temperature": 0.3},
        )
        assert message.id.startswith("msg_")
        assert [(b.type, b.text) for b in message.content] == [
            ("text", "Hello from the scripted upstream.")
        ]
        assert message.stop_reason == "end_turn"
        assert (message.usage.input_tokens, message.usage.output_tokens) == (10, 5)
        assert message.usage.server_tool_use is None
    sent = upstream.requests[0]
    assert sent["messages"] == [{"role": "system", "content": "Be brief."}, *USER]
    assert (sent["max_tokens"], sent["temperature"], sent["stop"]) == (256, 0.3, ["END"])
    assert "tools" not in sent


def test_live_anthropic_prefix(upstream: ScriptedUpstream, webreach_url: str) -> None:
    base = webreach_url.removesuffix("/v1") + "/anthropic"
    client = anthropic_client(base, strict=True)
    assert ask(client, stream=False).content[0].text == "Hello from the scripted upstream."


@pytest.mark.parametrize("stream", [False, True])
def test_live_search_round_with_citations(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    for client in live_clients(webreach_url):
        upstream.queue(search_step(["Iceland population 2025"]), Step(content=ANSWER))
        message = ask(client, stream=stream, tools=NATIVE_SEARCH)
        assert [b.type for b in message.content] == [
            "server_tool_use", "web_search_tool_result", "text", "text",
        ]  # fmt: skip
        call, results, cited, rest = message.content
        assert call.name == "web_search" and call.model_extra == {"kind": "search"}
        assert call.input == {
            "action": "search",
            "queries": ["Iceland population 2025"],
            "query": "Iceland population 2025",
        }
        assert results.tool_use_id == call.id
        assert [r.url for r in results.content] == FOUND
        assert all(r.encrypted_content for r in results.content)
        assert cited.text == "Iceland has about 390,000 people"
        assert [(c.url, c.cited_text, c.encrypted_index) for c in cited.citations] == [
            (FOUND[0], "About Iceland population 2025.", ""),
            (FOUND[1], "About Iceland population 2025.", ""),
        ]
        assert (rest.text, rest.citations) == (". Reykjavík is the capital.", None)
        assert message.stop_reason == "end_turn"
        assert (message.usage.input_tokens, message.usage.output_tokens) == (20, 10)
        tools_used = message.usage.server_tool_use
        assert tools_used is not None and tools_used.web_search_requests == 1
        assert tools_used.model_extra == {"tool_search": 1, "tool_fetch": 0, "tool_image_search": 0}


@pytest.mark.parametrize("stream", [False, True])
def test_live_deepseek_search_with_thinking(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    (client,) = live_clients(webreach_url, strict=False)
    upstream.queue(search_step(["a", "b"]), Step(reasoning="Two sources agree.", content="A【1】."))
    message = ask(client, stream=stream, tools=DEEPSEEK_TOOLS[:1], thinking={"type": "enabled"})
    assert [b.type for b in message.content] == [
        "thinking", "server_tool_use", "web_search_tool_result", "thinking", "text", "text",
    ]  # fmt: skip
    assert message.content[0].thinking == ""
    assert message.content[3].thinking == "Two sources agree."
    assert message.content[1].name == "deepseek_web_search"
    assert message.content[1].input["queries"] == ["a", "b"]
    assert message.content[4].citations[0].url == "https://a.example/1"
    assert [message.content[4].text, message.content[5].text] == ["A", "."]
    assert message.usage.output_tokens_details.thinking_tokens == 0


def test_live_stream_frames_and_the_call_before_its_search_ends(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    gate = threading.Event()
    search.behaviour = gated_search(gate).behaviour
    upstream.queue(search_step(["slow"]), Step(content="Done【1】."))
    body = {"model": "m", "max_tokens": 64, "messages": USER, "tools": NATIVE_SEARCH}
    seen: list[str] = []
    try:
        with httpx.stream(
            "POST", webreach_url + "/messages", json={**body, "stream": True}, timeout=30
        ) as response:
            lines = response.iter_lines()
            for line in lines:
                seen.append(line)
                if '"server_tool_use"' in line:
                    break
            assert search.finished == []
            gate.set()
            seen.extend(lines)
    finally:
        gate.set()
    text = "\n".join(seen) + "\n"
    kept = [c for c in text.split("\n\n") if c.strip() and not c.startswith(":")]
    parsed = assert_well_formed("\n\n".join(kept) + "\n\n")
    assert [n for n, _ in parsed][-2:] == ["message_delta", "message_stop"]


@pytest.mark.parametrize("stream", [False, True])
def test_live_client_tool_call(upstream: ScriptedUpstream, webreach_url: str, stream: bool) -> None:
    tools = [WEATHER, *NATIVE_SEARCH]
    for client in live_clients(webreach_url):
        upstream.queue(Step(content="Checking.", calls=[Call("weather", {"city": "Paris"})]))
        message = ask(client, stream=stream, tools=tools)
        assert message.stop_reason == "tool_use"
        text, call = message.content
        assert text.text == "Checking."
        assert (call.type, call.name, call.input) == ("tool_use", "weather", {"city": "Paris"})
    upstream.queue(Step(content="18°C in Paris."))
    history = [
        *USER,
        {"role": "assistant", "content": [b.to_dict() for b in message.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "18°C"}],
        },
    ]
    answer = ask(client, stream=stream, tools=tools, messages=history)
    assert answer.content[0].text == "18°C in Paris."
    sent = upstream.requests[-1]["messages"]
    assert sent[-2]["tool_calls"][0]["id"] == call.id
    assert sent[-1] == {"role": "tool", "tool_call_id": call.id, "content": "18°C"}


@pytest.mark.parametrize("stream", [False, True])
def test_live_failed_search_is_an_error_block(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch, stream: bool
) -> None:
    async def down(_: SearchRequest) -> SearchResult:
        raise WebError(WebErrorCode.WEB_PROVIDER_ERROR, "replay: server error (HTTP 500)")

    search.behaviour = down
    for client in live_clients(webreach_url):
        upstream.queue(search_step(["q"]), Step(content="Search is unavailable."))
        message = ask(client, stream=stream, tools=NATIVE_SEARCH)
        result = message.content[1]
        assert result.type == "web_search_tool_result"
        assert not isinstance(result.content, list)
        assert result.content.error_code == "unavailable"
        assert message.content[-1].text == "Search is unavailable."
        assert message.stop_reason == "end_turn"
        tools_used = message.usage.server_tool_use
        assert tools_used.web_search_requests == 1
        assert tools_used.model_extra["tool_search"] == 0


def test_live_history_with_web_blocks_sends_only_answers(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    (client, strict) = live_clients(webreach_url)
    upstream.queue(search_step(["Iceland population 2025"]), Step(content=ANSWER))
    first = ask(strict, stream=True, tools=NATIVE_SEARCH)
    history = [
        *USER,
        {"role": "assistant", "content": [b.to_dict() for b in first.content]},
        {"role": "user", "content": "And Norway?"},
    ]
    ask(client, stream=False, messages=history)
    assert upstream.requests[-1]["messages"] == [
        *USER,
        {
            "role": "assistant",
            "content": "Iceland has about 390,000 people. Reykjavík is the capital.",
        },
        {"role": "user", "content": "And Norway?"},
    ]


CONTINUED = [
    *USER,
    {
        "role": "assistant",
        "content": [
            {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {"query": "q"}},
            {"type": "text", "text": "Partial"},
        ],
    },
]


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (
            {"tools": DEEPSEEK_TOOLS[:1] * 2},
            "tools: `deepseek_web_search` can only be declared once",
        ),
        (
            {"tools": DEEPSEEK_TOOLS, "tool_choice": {"type": "tool", "name": "deepseek_read_url"}},
            "tool_choice: `deepseek_read_url` cannot be forced",
        ),
        (
            {"tools": [{**DEEPSEEK_TOOLS[0], "blocked_domains": ["a.com"]}]},
            "tools: `blocked_domains` is not supported by `deepseek_web_search`",
        ),
        (
            {"tools": NATIVE_SEARCH, "messages": CONTINUED},
            "messages: the last `assistant` message used `deepseek_web_search` or "
            "`deepseek_read_url` and cannot be continued; resend the previous request",
        ),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_live_refusals(
    upstream: ScriptedUpstream,
    webreach_url: str,
    request_: dict[str, Any],
    message: str,
    stream: bool,
) -> None:
    for client in live_clients(webreach_url):
        with pytest.raises(anthropic.BadRequestError) as caught:
            ask(client, stream=stream, **request_)
        assert caught.value.status_code == 400
        assert caught.value.body == {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": message},
        }
    assert upstream.requests == []


def test_live_malformed_requests(upstream: ScriptedUpstream, webreach_url: str) -> None:
    url = webreach_url + "/messages"
    # max_tokens is optional: the upstream's own default applies.
    default = httpx.post(url, json={"model": "m", "messages": USER})
    assert default.status_code == 200
    assert "max_tokens" not in upstream.requests.pop()
    bad_block = {
        "model": "m",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": [{"type": "video"}]}],
    }
    response = httpx.post(url, json=bad_block)
    assert response.status_code == 400
    assert response.json() == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "messages.0.content.0.type: unsupported content block type `video`",
        },
    }
    assert upstream.requests == []


def test_live_upstream_error_before_the_stream(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(Step(status=429, error="slow down"))
    with pytest.raises(anthropic.RateLimitError) as caught:
        ask(live_clients(webreach_url)[1], stream=True, tools=NATIVE_SEARCH)
    error = caught.value.body["error"]  # type: ignore[index]
    assert error["type"] == "rate_limit_error" and error["message"].endswith("slow down")


def test_live_failure_after_the_stream_started(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(search_step(["q"]), Step(content=["partial ", "answer"], break_after=2))
    parsed = raw_frames(webreach_url, {"tools": NATIVE_SEARCH})
    name, error = parsed[-1]
    assert name == "error"
    assert error["error"]["type"] == "api_error"
    assert error["usage"]["server_tool_use"]["web_search_requests"] == 1
    assert "message_stop" not in [n for n, _ in parsed]
    assert_well_formed("".join(f"event: {n}\ndata: {json.dumps(d)}\n\n" for n, d in parsed))

    for client in live_clients(webreach_url):
        upstream.queue(search_step(["q"]), Step(content=["partial ", "answer"], break_after=2))
        with pytest.raises(anthropic.APIStatusError) as caught:
            ask(client, stream=True, tools=NATIVE_SEARCH)
        assert caught.value.body["type"] == "error"  # type: ignore[index]

    upstream.queue(search_step(["q"]), Step(content=["partial ", "answer"], break_after=2))
    request = {"model": "m", "max_tokens": 64, "messages": USER, "tools": NATIVE_SEARCH}
    response = httpx.post(webreach_url + "/messages", json=request, timeout=30)
    # Without streaming nothing was sent yet: the failure is an HTTP error the SDKs raise.
    assert response.status_code == 502
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == "api_error"
    for client in live_clients(webreach_url):
        upstream.queue(search_step(["q"]), Step(content=["partial ", "answer"], break_after=2))
        with pytest.raises(anthropic.InternalServerError):
            ask(client, stream=False, tools=NATIVE_SEARCH)
