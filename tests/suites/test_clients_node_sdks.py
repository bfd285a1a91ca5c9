"""The official Node SDKs' stream helpers against the running server.

Each case runs ``node tests/clients/node_sdks.mjs <server url> <case>``: npm `openai`
(`client.responses.stream(...)` with `{type: "web_search"}`, `client.chat.completions.stream(...)`
with `{type: "deepseek_web_search"}`) and `@anthropic-ai/sdk` (`client.messages.stream(...)`
with `web_search_20250305` / `web_fetch_20250910`), each read to its final object
(`finalResponse()`, `finalChatCompletion()`, `finalMessage()`). A case the server cannot serve
is a strict xfail naming the exact cause.
"""

from __future__ import annotations

import json
from typing import Any

from clients.matrix import (
    ANSWER,
    ARTICLE,
    ARTICLE_URL,
    CITED_URL,
    FOLLOW_UP_ANSWER,
    PAGE_TEXT,
    QUOTE,
    READ_ANSWER,
    WEATHER,
    WEATHER_ANSWER,
    WEATHER_CITED_URL,
    follow_up,
    function_tool_round,
    node_case,
    quote,
    read_round,
    search_round,
)
from providers_for_tests import ScriptedFetch
from scripted_upstream import ScriptedUpstream

FOLLOW_UP = "And what is its capital?"


def run(url: str, case: str) -> list[dict[str, Any]]:
    """The turns of a case as the SDK's user sees them; none of them failed."""
    turns: list[dict[str, Any]] = node_case("node_sdks.mjs", url, case)["turns"]
    for turn in turns:
        assert "error" not in turn, turn["error"]
    return turns


def cited(turn: dict[str, Any]) -> list[tuple[str, str]]:
    return [(citation["url"], citation["cited"]) for citation in turn["citations"]]


def assert_answer(turn: dict[str, Any], citation_type: str) -> None:
    assert turn["text"] == ANSWER
    # Anthropic's own web search cites the source's words (its snippet); the others the answer.
    native = citation_type == "web_search_result_location"
    expected = "About iceland population." if native else "About 390,000 people"
    assert cited(turn) == [(CITED_URL, expected)]
    assert {citation["type"] for citation in turn["citations"]} == {citation_type}


def assert_second_turn(upstream: ScriptedUpstream, turns: list[dict[str, Any]]) -> None:
    assert [turn["text"] for turn in turns] == [ANSWER, FOLLOW_UP_ANSWER]
    context = upstream.requests[-1]["messages"]
    assert [m["content"] for m in context if m["role"] == "assistant"] == [ANSWER]
    assert context[-1] == {"role": "user", "content": FOLLOW_UP}


def assert_function_tool(upstream: ScriptedUpstream, turns: list[dict[str, Any]]) -> None:
    """Turn 1 ends with the client's call; its result continues into a search and an answer."""
    first, second = turns
    assert [(c["name"], c["arguments"]) for c in first["functionCalls"]] == [
        ("get_weather", {"city": "Reykjavík"})
    ]
    assert second["text"] == WEATHER_ANSWER
    assert [url for url, _ in cited(second)] == [WEATHER_CITED_URL]
    assert upstream.requests[1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": upstream.requests[1]["messages"][-2]["tool_calls"][0]["id"],
        "content": WEATHER,
    }


# --- openai: client.responses.stream(...).finalResponse() -------------------------------------


def test_responses_stream_answers_with_citations(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(*search_round())
    (turn,) = run(webreach_url, "responses-stream")
    assert turn["status"] == "completed"
    assert turn["outputTypes"] == ["web_search_call", "message"]
    assert_answer(turn, "url_citation")


def test_responses_second_turn_by_previous_response_id(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(*search_round(), *follow_up())
    assert_second_turn(upstream, run(webreach_url, "responses-two-turns-previous-response-id"))


def test_responses_second_turn_resending_the_output(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(*search_round(), *follow_up())
    assert_second_turn(upstream, run(webreach_url, "responses-two-turns-resend"))


def test_responses_function_tool_beside_web_search(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(*function_tool_round())
    turns = run(webreach_url, "responses-function-tool")
    assert turns[0]["outputTypes"] == ["function_call"]
    assert_function_tool(upstream, turns)


# --- openai: client.chat.completions.stream(...).finalChatCompletion() ------------------------


def test_chat_stream_answers_with_citations(upstream: ScriptedUpstream, webreach_url: str) -> None:
    upstream.queue(*search_round())
    (turn,) = run(webreach_url, "chat-stream")
    assert turn["finishReason"] == "stop"
    assert turn["serverToolCalls"] == ["search"]
    assert_answer(turn, "url_citation")


def test_chat_stream_with_web_search_options(upstream: ScriptedUpstream, webreach_url: str) -> None:
    upstream.queue(*search_round())
    (turn,) = run(webreach_url, "chat-stream-web-search-options")
    assert turn["functionCalls"] == []
    assert_answer(turn, "url_citation")


def test_chat_second_turn(upstream: ScriptedUpstream, webreach_url: str) -> None:
    upstream.queue(*search_round(), *follow_up())
    assert_second_turn(upstream, run(webreach_url, "chat-two-turns"))


def test_chat_function_tool_beside_web_search(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(*function_tool_round())
    turns = run(webreach_url, "chat-function-tool")
    assert turns[0]["finishReason"] == "tool_calls"
    assert_function_tool(upstream, turns)


# --- @anthropic-ai/sdk: client.messages.stream(...).finalMessage() ----------------------------


def test_messages_stream_answers_with_citations(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(*search_round())
    (turn,) = run(webreach_url, "messages-stream")
    assert turn["stopReason"] == "end_turn"
    assert turn["blockTypes"][:2] == ["server_tool_use", "web_search_tool_result"]
    assert_answer(turn, "web_search_result_location")


def test_messages_second_turn(upstream: ScriptedUpstream, webreach_url: str) -> None:
    upstream.queue(*search_round(), *follow_up())
    assert_second_turn(upstream, run(webreach_url, "messages-two-turns"))


def test_messages_function_tool_beside_web_search(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(*function_tool_round())
    turns = run(webreach_url, "messages-function-tool")
    assert turns[0]["stopReason"] == "tool_use"
    assert_function_tool(upstream, turns)


def test_messages_web_fetch_page_is_in_context_in_turn_two(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(*read_round(), *quote())
    first, second = run(webreach_url, "messages-fetch-two-turns")
    assert first["text"] == READ_ANSWER
    assert first["blockTypes"] == ["server_tool_use", "web_fetch_tool_result", "text"]
    assert second["text"] == QUOTE
    assert len(upstream.requests) == 3
    assert PAGE_TEXT in json.dumps(upstream.requests[2]["messages"])
    assert fetcher.calls == [ARTICLE_URL]  # restored from the signature, not fetched again
