"""The Vercel AI SDK (npm `ai`, `@ai-sdk/openai`, `@ai-sdk/anthropic`) against the running server.

Each case runs ``node tests/clients/ai_sdk.mjs <server url> <case>``: `generateText` or
`streamText` with the provider's own web tools (`openai.tools.webSearch()` on Responses,
`anthropic.tools.webSearch_20250305()` / `webFetch_20250910()` on Messages), a client function
tool the SDK runs itself, and second turns built from the SDK's own `response.messages` with its
defaults. A case the server cannot serve is a strict xfail naming the exact cause.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from clients.matrix import (
    ANSWER,
    ARTICLE,
    ARTICLE_URL,
    CITED_URL,
    FOLLOW_UP_ANSWER,
    PAGE_TEXT,
    QUOTE,
    READ_ANSWER,
    REASONING,
    WEATHER,
    WEATHER_ANSWER,
    WEATHER_CITED_URL,
    follow_up,
    function_tool_round,
    node_case,
    quote,
    read_round,
    reasoning_round,
    search_round,
    search_then_function_tool_round,
)
from providers_for_tests import ScriptedFetch
from scripted_upstream import ScriptedUpstream

STREAMING = pytest.mark.parametrize("stream", [False, True], ids=["generateText", "streamText"])


def output(url: str, case: str, stream: bool) -> dict[str, Any]:
    """What ``ai_sdk.mjs`` printed for the case, with generateText or with streamText."""
    return node_case("ai_sdk.mjs", url, f"{case}-stream" if stream else case)


def run(url: str, case: str, stream: bool) -> list[dict[str, Any]]:
    """The turns of a case as the SDK's user sees them; none of them failed."""
    turns: list[dict[str, Any]] = output(url, case, stream)["turns"]
    for turn in turns:
        assert "error" not in turn, turn["error"]
        if stream:
            assert turn["streamed"] == turn["text"]
    return turns


def sources(turn: dict[str, Any]) -> set[str]:
    return {source["url"] for source in turn["sources"]}


def ran_on_the_server(turn: dict[str, Any], name: str) -> bool:
    """The SDK shows a provider-executed call of ``name`` and its result."""
    return all(
        any(call["name"] == name and call["providerExecuted"] for call in turn[kind])
        for kind in ("toolCalls", "toolResults")
    )


def assert_second_turn(upstream: ScriptedUpstream, turns: list[dict[str, Any]]) -> None:
    """Turn 2 is answered, with turn 1's answer in the upstream's context."""
    assert [turn["text"] for turn in turns] == [ANSWER, FOLLOW_UP_ANSWER]
    assert sources(turns[0]) >= {CITED_URL}
    context = upstream.requests[-1]["messages"]
    assert [m["content"] for m in context if m["role"] == "assistant"] == [ANSWER]
    assert context[-1] == {"role": "user", "content": "And what is its capital?"}


def assert_function_tool(upstream: ScriptedUpstream, result: dict[str, Any]) -> None:
    """The SDK ran ``get_weather`` and continued; the model searched and answered citing."""
    (turn,) = result["turns"]
    assert "error" not in turn, turn["error"]
    assert result["weatherCalls"] == ["Reykjavík"]
    assert turn["text"] == WEATHER_ANSWER
    assert sources(turn) >= {WEATHER_CITED_URL}
    assert [call["name"] for call in turn["toolCalls"]] == ["get_weather", "web_search"]
    assert ran_on_the_server(turn, "web_search")
    tool_message = upstream.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["content"] == WEATHER


# --- @ai-sdk/openai: Responses, openai.tools.webSearch() --------------------------------------


@STREAMING
def test_openai_web_search_answers_with_sources(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    upstream.queue(*search_round())
    (turn,) = run(webreach_url, "openai-search", stream)
    assert turn["text"] == ANSWER
    assert turn["finishReason"] == "stop"
    assert sources(turn) == {CITED_URL}
    assert ran_on_the_server(turn, "web_search")
    (search,) = (r for r in turn["toolResults"] if r["name"] == "web_search")
    assert search["output"]["action"]["query"] == "iceland population"
    assert CITED_URL in {s["url"] for s in search["output"]["sources"]}
    assert upstream.requests[0]["tools"][0]["function"]["name"] == "web_search"


@STREAMING
def test_openai_second_turn_with_the_sdk_defaults(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    upstream.queue(*search_round(), *follow_up())
    assert_second_turn(upstream, run(webreach_url, "openai-two-turns", stream))


@STREAMING
def test_openai_second_turn_with_store_false(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    upstream.queue(*search_round(), *follow_up())
    assert_second_turn(upstream, run(webreach_url, "openai-two-turns-store-false", stream))


@STREAMING
def test_openai_function_tool_beside_web_search(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    upstream.queue(*function_tool_round())
    assert_function_tool(upstream, output(webreach_url, "openai-function-tool", stream))


def assert_search_then_function_tool(upstream: ScriptedUpstream, result: dict[str, Any]) -> None:
    """The model searched, the SDK ran ``get_weather`` and continued to the answer."""
    (turn,) = result["turns"]
    assert "error" not in turn, turn["error"]
    assert result["weatherCalls"] == ["Reykjavík"]
    assert turn["text"] == WEATHER_ANSWER
    assert [call["name"] for call in turn["toolCalls"]] == ["web_search", "get_weather"]
    assert upstream.requests[-1]["messages"][-1]["content"] == WEATHER


@STREAMING
def test_openai_search_then_function_tool_with_the_sdk_defaults(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    upstream.queue(*search_then_function_tool_round())
    result = output(webreach_url, "openai-function-tool", stream)
    assert_search_then_function_tool(upstream, result)


@STREAMING
def test_openai_search_then_function_tool_with_store_false(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    upstream.queue(*search_then_function_tool_round())
    result = output(webreach_url, "openai-function-tool-store-false", stream)
    assert_search_then_function_tool(upstream, result)


@STREAMING
def test_openai_reasoning_is_shown(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    upstream.queue(*reasoning_round())
    (turn,) = run(webreach_url, "openai-reasoning", stream)
    assert turn["text"] == ANSWER
    assert sources(turn) == {CITED_URL}
    assert all(part in turn["reasoning"] for part in REASONING), turn["reasoning"]


# --- @ai-sdk/anthropic: Messages, webSearch_20250305() and webFetch_20250910() ----------------


@STREAMING
def test_anthropic_web_search_answers_with_sources(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    upstream.queue(*search_round())
    (turn,) = run(webreach_url, "anthropic-search", stream)
    assert turn["text"] == ANSWER
    assert turn["finishReason"] == "stop"
    assert CITED_URL in sources(turn)
    assert ran_on_the_server(turn, "web_search")
    (search,) = (r for r in turn["toolResults"] if r["name"] == "web_search")
    assert CITED_URL in {result["url"] for result in search["output"]}


@STREAMING
def test_anthropic_second_turn(upstream: ScriptedUpstream, webreach_url: str, stream: bool) -> None:
    upstream.queue(*search_round(), *follow_up())
    assert_second_turn(upstream, run(webreach_url, "anthropic-two-turns", stream))


@STREAMING
def test_anthropic_function_tool_beside_web_search(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    upstream.queue(*function_tool_round())
    assert_function_tool(upstream, output(webreach_url, "anthropic-function-tool", stream))


@STREAMING
def test_anthropic_web_fetch_reads_the_link(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch, stream: bool
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(*read_round())
    (turn,) = run(webreach_url, "anthropic-fetch", stream)
    assert turn["text"] == READ_ANSWER
    assert ran_on_the_server(turn, "web_fetch")
    (read,) = (r for r in turn["toolResults"] if r["name"] == "web_fetch")
    assert read["output"]["url"] == ARTICLE_URL
    assert read["output"]["content"]["title"] == "Release notes"
    assert PAGE_TEXT in json.dumps(upstream.requests[1]["messages"])


@STREAMING
def test_anthropic_web_fetch_page_is_in_context_in_turn_two(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch, stream: bool
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(*read_round(), *quote())
    turns = run(webreach_url, "anthropic-fetch-two-turns", stream)
    assert [turn["text"] for turn in turns] == [READ_ANSWER, QUOTE]
    assert len(upstream.requests) == 3
    assert PAGE_TEXT in json.dumps(upstream.requests[2]["messages"])
    assert fetcher.calls == [ARTICLE_URL]  # restored in turn 2, not fetched again
