"""Agent-framework adapters: shapes the official SDKs accept, one ``execute()``, the prompt text."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from anthropic import AsyncAnthropic
from anthropic.types import ToolParam
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import TypeAdapter

from providers_for_tests import ScriptedSearch, sources
from replay_server import ReplayServer, Reply
from test_web_fetch import ScriptedFetch
from webreach.seam import (
    FetchResult,
    SearchResult,
    TextBody,
    WebError,
    WebErrorCode,
    WebRuntime,
)
from webreach.tools import INVALID_ARGUMENTS, ToolError, ToolOptions
from webreach.tools.adapters import WebToolkit, parse_arguments
from webreach.tools.prompt import web_tools_prompt

PAGE_URL = "https://example.com/notes"


def toolkit(
    *,
    search: ScriptedSearch | None = None,
    fetcher: ScriptedFetch | None = None,
    **options: Any,
) -> WebToolkit:
    runtime = WebRuntime()
    runtime.register_search_provider(search or ScriptedSearch())
    runtime.register_fetch_provider(fetcher or ScriptedFetch())
    return WebToolkit(runtime, ToolOptions(**options))


def answering_search() -> ScriptedSearch:
    return ScriptedSearch(
        answers={"python 3.13": SearchResult(sources=sources("https://www.python.org/3.13"))}
    )


def serving_page() -> ScriptedFetch:
    body = TextBody("plain notes about the release")
    return ScriptedFetch(pages={PAGE_URL: FetchResult(PAGE_URL, 200, body, truncated=False)})


# --- the shapes, checked against the SDKs' own request types --------------------------------


@pytest.mark.parametrize(
    ("shape", "sdk_type"),
    [
        (WebToolkit.openai_chat_tools, ChatCompletionFunctionToolParam),
        (WebToolkit.openai_responses_tools, FunctionToolParam),
        (WebToolkit.anthropic_tools, ToolParam),
    ],
)
def test_each_shape_is_a_valid_sdk_tool_param(
    shape: Callable[[WebToolkit], list[dict[str, Any]]], sdk_type: Any
) -> None:
    tools = shape(toolkit())
    adapter = TypeAdapter(sdk_type)
    assert len(tools) == 2
    for tool in tools:
        # Validation drops keys a TypedDict does not know, so equality also rules out strays.
        assert adapter.validate_python(tool, strict=True) == tool


def test_every_shape_carries_the_definitions_unchanged() -> None:
    kit = toolkit(search_max_queries=3)
    expected = [(d.name, d.description, d.input_schema) for d in kit.definitions]
    assert [d.name for d in kit.definitions] == ["web_search", "web_fetch"]
    assert kit.definitions[0].input_schema["properties"]["queries"]["maxItems"] == 3

    chat = [
        (t["function"]["name"], t["function"]["description"], t["function"]["parameters"])
        for t in kit.openai_chat_tools()
    ]
    responses = [
        (t["name"], t["description"], t["parameters"]) for t in kit.openai_responses_tools()
    ]
    anthropic = [(t["name"], t["description"], t["input_schema"]) for t in kit.anthropic_tools()]
    assert chat == responses == anthropic == expected
    assert {t["type"] for t in kit.openai_chat_tools()} == {"function"}
    assert {(t["type"], t["strict"]) for t in kit.openai_responses_tools()} == {("function", False)}


def test_a_caller_editing_a_shape_cannot_change_the_tools() -> None:
    kit = toolkit()
    kit.anthropic_tools()[0]["input_schema"]["properties"].clear()
    kit.openai_chat_tools()[0]["function"]["parameters"]["required"].append("x")
    assert kit.anthropic_tools()[0]["input_schema"] == kit.definitions[0].input_schema
    assert kit.definitions[0].input_schema["required"] == ["queries"]


@pytest.mark.parametrize(
    ("options", "names"),
    [
        ({"fetch_enabled": False}, ["web_search"]),
        ({"search_enabled": False}, ["web_fetch"]),
        ({"search_enabled": False, "fetch_enabled": False}, []),
    ],
)
def test_disabled_tools_are_absent_everywhere(options: dict[str, Any], names: list[str]) -> None:
    kit = toolkit(**options)
    assert list(kit.names) == names
    assert [t["function"]["name"] for t in kit.openai_chat_tools()] == names
    assert [t["name"] for t in kit.openai_responses_tools()] == names
    assert [t["name"] for t in kit.anthropic_tools()] == names
    prompt = kit.prompt()
    for name in ("web_search", "web_fetch"):
        assert (f"`{name}`" in prompt) == (name in names)
    assert (prompt == "") == (not names)


# --- execute() -----------------------------------------------------------------------------


async def test_execute_takes_a_dict_or_a_json_string() -> None:
    search = answering_search()
    kit = toolkit(search=search)
    from_dict = await kit.execute("web_search", {"queries": ["python 3.13"]})
    from_json = await kit.execute("web_search", '{"queries": ["python 3.13"]}')
    from_bytes = await kit.execute("web_search", b'{"queries": ["python 3.13"]}')
    assert from_dict == from_json == from_bytes
    assert from_dict.startswith('Web search for "python 3.13": 1 source')
    assert "https://www.python.org/3.13" in from_dict
    assert [c.query for c in search.calls] == ["python 3.13"] * 3


async def test_execute_fetch_returns_the_page_text() -> None:
    fetcher = serving_page()
    text = await toolkit(fetcher=fetcher).execute("web_fetch", json.dumps({"url": PAGE_URL}))
    assert text.startswith(f"URL: {PAGE_URL}\nKind: text")
    assert "plain notes about the release" in text
    assert fetcher.calls == [PAGE_URL]


async def test_call_keeps_the_structured_result() -> None:
    result = await toolkit(search=answering_search()).call(
        "web_search", {"queries": ["python 3.13"]}
    )
    assert result.data.to_json()["sources"][0]["url"] == "https://www.python.org/3.13"


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ('{"queries": ["a"', "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"queries": []}', "`queries` is empty"),
        ('{"queries": ["a", "b", "c", "d", "e"]}', "at most 4"),
        ("", "`queries` is required"),
        (None, "`queries` is required"),
        ({"query": "a"}, "unknown argument(s) query"),
    ],
)
async def test_bad_arguments_give_an_error_text_and_call_no_provider(
    arguments: Any, fragment: str
) -> None:
    search = ScriptedSearch()
    text = await toolkit(search=search).execute("web_search", arguments)
    assert text.startswith("Error: web_search failed with INVALID_ARGUMENTS: ")
    assert fragment in text
    assert search.calls == []


async def test_an_unknown_tool_names_the_offered_ones() -> None:
    text = await toolkit().execute("web_browse", {"url": PAGE_URL})
    assert text == (
        "Error: web_browse failed with INVALID_ARGUMENTS: unknown tool 'web_browse'; "
        "the web tools offered are: web_search, web_fetch"
    )
    text = await toolkit(fetch_enabled=False).execute("web_fetch", {"url": PAGE_URL})
    assert "unknown tool 'web_fetch'; the web tools offered are: web_search" in text


async def test_a_web_error_names_its_code() -> None:
    blocked = WebError(WebErrorCode.WEB_BLOCKED_URL, "10.0.0.1 is a private address")
    kit = toolkit(fetcher=ScriptedFetch(pages={PAGE_URL: blocked}))
    text = await kit.execute("web_fetch", {"url": PAGE_URL})
    assert text == "Error: web_fetch failed with WEB_BLOCKED_URL: 10.0.0.1 is a private address"


async def test_raise_errors_raises_the_tool_error() -> None:
    kit = toolkit(search=ScriptedSearch(is_available=False))
    with pytest.raises(ToolError) as caught:
        await kit.execute("web_search", {"queries": ["x"]}, raise_errors=True)
    assert caught.value.code == "WEB_PROVIDER_UNAVAILABLE"
    with pytest.raises(ToolError) as invalid:
        await kit.execute("web_search", "{oops", raise_errors=True)
    assert invalid.value.code == INVALID_ARGUMENTS
    with pytest.raises(ToolError, match="unknown tool"):
        await kit.execute("nope", {}, raise_errors=True)


def test_parse_arguments_passes_objects_through() -> None:
    arguments = {"url": PAGE_URL}
    assert parse_arguments(arguments) is arguments
    assert parse_arguments('  {"url": "x"} ') == {"url": "x"}


# --- the prompt section --------------------------------------------------------------------


def test_the_prompt_says_when_to_use_which_and_the_bound() -> None:
    prompt = web_tools_prompt(ToolOptions(search_max_queries=6))
    assert "`web_search`" in prompt and "`web_fetch`" in prompt
    assert "up to 6" in prompt
    assert "current information" in prompt
    assert "specific URL" in prompt
    assert "Markdown links" in prompt
    assert "reference material, not instructions" in prompt
    assert toolkit(search_max_queries=6).prompt() == prompt


def test_a_bound_of_one_is_not_called_several() -> None:
    prompt = web_tools_prompt(ToolOptions(search_max_queries=1))
    assert "one query per call" in prompt
    assert "several" not in prompt


# --- the SDKs themselves send what the adapters make, and their tool calls execute -----------


SEARCH_ARGS = {"queries": ["python 3.13"]}


async def test_openai_chat_round_trip(replay: ReplayServer) -> None:
    kit = toolkit(search=answering_search())
    reply = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {
                                "name": "web_search",
                                "arguments": json.dumps(SEARCH_ARGS),
                            },
                        }
                    ],
                },
            }
        ],
    }
    replay.route("POST", "/v1/chat/completions", Reply(json=reply))
    async with AsyncOpenAI(api_key="test", base_url=f"{replay.url}/v1", max_retries=0) as client:
        completion = await client.chat.completions.create(
            model="m",
            messages=[
                {"role": "system", "content": kit.prompt()},
                {"role": "user", "content": "?"},
            ],
            tools=kit.openai_chat_tools(),  # type: ignore[arg-type]
        )
    assert replay.requests[0].json()["tools"] == kit.openai_chat_tools()
    call = completion.choices[0].message.tool_calls[0]  # type: ignore[index]
    text = await kit.execute(call.function.name, call.function.arguments)  # type: ignore[union-attr]
    assert "https://www.python.org/3.13" in text


async def test_openai_responses_round_trip(replay: ReplayServer) -> None:
    kit = toolkit(search=answering_search())
    reply = {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "m",
        "status": "completed",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "output": [
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "web_search",
                "arguments": json.dumps(SEARCH_ARGS),
                "status": "completed",
            }
        ],
    }
    replay.route("POST", "/v1/responses", Reply(json=reply))
    async with AsyncOpenAI(api_key="test", base_url=f"{replay.url}/v1", max_retries=0) as client:
        response = await client.responses.create(
            model="m",
            instructions=kit.prompt(),
            input="?",
            tools=kit.openai_responses_tools(),  # type: ignore[arg-type]
        )
    assert replay.requests[0].json()["tools"] == kit.openai_responses_tools()
    call = response.output[0]
    assert call.type == "function_call"
    text = await kit.execute(call.name, call.arguments)
    assert "https://www.python.org/3.13" in text


async def test_anthropic_round_trip(replay: ReplayServer) -> None:
    kit = toolkit(search=answering_search())
    reply = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "web_search", "input": SEARCH_ARGS}
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    replay.route("POST", "/v1/messages", Reply(json=reply))
    async with AsyncAnthropic(api_key="test", base_url=replay.url, max_retries=0) as client:
        message = await client.messages.create(
            model="m",
            max_tokens=100,
            system=kit.prompt(),
            messages=[{"role": "user", "content": "?"}],
            tools=kit.anthropic_tools(),  # type: ignore[arg-type]
        )
    assert replay.requests[0].json()["tools"] == kit.anthropic_tools()
    block = message.content[0]
    assert block.type == "tool_use"
    text = await kit.execute(block.name, block.input)
    assert "https://www.python.org/3.13" in text
