"""Scripted loop events for the Responses codec, and an openai SDK client that reads its output.

The mock transport hands the SDK's real request body to ``ResponsesCodec.parse`` and answers
with what the codec renders for the scripted events, so both directions meet the SDK.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai

from codec_helpers import body_of, stream_of
from webreach.server.core.turn.errors import ServerFailure
from webreach.server.core.turn.events import (
    CallFailed,
    ClientToolCall,
    Event,
    Failed,
    FindInPageAction,
    Finished,
    OpenPageAction,
    PageOutcome,
    ReadLinkAction,
    ReasoningDelta,
    SearchAction,
    SearchOutcome,
    StepReasoningDone,
    TextCitation,
    TextDelta,
    Usage,
    WebCall,
    WebCallCompleted,
    WebCallStarted,
    WebSource,
)
from webreach.server.core.turn.shape import Turn
from webreach.server.responses import ResponsesCodec

CODEC = ResponsesCodec()

SOURCE_A = WebSource(
    url="https://example.com/iceland",
    title="冰岛人口 2025",
    snippet="冰岛人口约为 39.4 万。",
    published_at="2025-10-15T16:00:00+00:00",
    number=1,
    site_name="Example 新闻",
    site_icon="https://example.com/favicon.ico",
)
SOURCE_B = WebSource(
    url="https://example.org/stats",
    title=None,
    snippet=None,
    published_at=None,
    number=2,
)

# The answer of the search round, in stream chunks; a citation follows the chunks marked.
ANSWER_CHUNKS = ("冰岛人口约 ", "39.4 万 🇮🇸", "（2026 年初）", "。数据来自统计局 😀", "。")
CITED_AFTER = {2: (SOURCE_A,), 4: (SOURCE_B,)}


def search_call(
    index: int = 0, queries: Sequence[str] = ("冰岛 人口", "Iceland population")
) -> WebCall:
    return WebCall(
        id=f"srvtoolu_s_00_{index:02d}",
        step=0,
        index=index,
        kind="search",
        tool_name="deepseek_web_search",
        tool_type="deepseek_web_search",
        action=SearchAction(tuple(queries)),
    )


def usage(**server: int) -> Usage:
    return Usage(
        input_tokens=1905, output_tokens=72, cached_tokens=128, reasoning_tokens=30, **server
    )


def cited_text(
    chunks: Iterable[str], cited_after: dict[int, tuple[WebSource, ...]], *, offset: int = 0
) -> list[Event]:
    """Text deltas with citations at the marked chunks.

    Offsets count code points of the whole answer, which already has ``offset`` of them.
    """
    events: list[Event] = []
    length = last_point = offset
    for number, chunk in enumerate(chunks):
        events.append(TextDelta(chunk))
        length += len(chunk)
        for source in cited_after.get(number, ()):
            events.append(TextCitation(source.url, source.title, last_point, length, ""))
        if number in cited_after:
            last_point = length
    return events


def search_round() -> list[Event]:
    first, second = search_call(0), search_call(1, ("Statistics Iceland",))
    return [
        ReasoningDelta("需要搜索"),
        ReasoningDelta("一下。"),
        StepReasoningDone(0),
        WebCallStarted(first),
        WebCallStarted(second),
        WebCallCompleted(first, SearchOutcome((SOURCE_A,))),
        WebCallCompleted(second, SearchOutcome((SOURCE_B,))),
        *cited_text(ANSWER_CHUNKS, CITED_AFTER),
        Finished(
            "end_turn",
            usage(web_search_requests=2, tool_search=3),
        ),
    ]


def failed_search_round() -> list[Event]:
    call = search_call(0, ("nothing",))
    return [
        WebCallStarted(call),
        WebCallCompleted(call, CallFailed("unavailable")),
        TextDelta("I could not search."),
        Finished("end_turn", usage(web_search_requests=1)),
    ]


def deep_search_round() -> list[Event]:
    def call(index: int, action: Any) -> WebCall:
        return WebCall(
            f"srvtoolu_ds_01_{index:02d}",
            1,
            index,
            "deep_search",
            "deepseek_web_search",
            "deepseek_web_search",
            action,
        )

    opened = call(0, OpenPageAction("https://example.com/tower"))
    found = call(1, FindInPageAction("https://example.com/tower", "333"))
    return [
        ReasoningDelta("Open it."),
        StepReasoningDone(1),
        WebCallStarted(opened),
        WebCallStarted(found),
        WebCallCompleted(opened, PageOutcome("https://example.com/tower", "Tower", None)),
        WebCallCompleted(found, PageOutcome("https://example.com/tower", None, None)),
        ReasoningDelta("It is 333 m."),
        TextDelta("333 m."),
        Finished("end_turn", usage(web_fetch_requests=2, tool_fetch=1)),
    ]


def read_link_round(signature: str = "c2VhbGVk") -> list[Event]:
    call = WebCall(
        "srvtoolu_rl_00_00",
        0,
        0,
        "read_link",
        "deepseek_read_url",
        "deepseek_read_url",
        ReadLinkAction("https://example.com/a"),
    )
    return [
        WebCallStarted(call),
        WebCallCompleted(call, PageOutcome("https://example.com/a", "A", "2026-01-01", signature)),
        TextDelta("Page A says hello."),
        Finished("end_turn", usage(web_fetch_requests=1, tool_fetch=1)),
    ]


def client_call_round() -> list[Event]:
    return [
        TextDelta("Let me check the weather."),
        ClientToolCall("call_1", "get_weather", '{"city": "上海"}'),
        ClientToolCall("call_2", "get_time", "{}"),
        Finished("tool_use", usage()),
    ]


def plain_round(text: str = "Hello, 世界!") -> list[Event]:
    return [TextDelta(text), Finished("end_turn", usage())]


def failing_round() -> list[Event]:
    call = search_call(0)
    return [
        ReasoningDelta("thinking"),
        WebCallStarted(call),
        WebCallCompleted(call, SearchOutcome((SOURCE_A,))),
        TextDelta("部分回答"),
        Failed("The model failed to generate a complete response. Please retry.", usage()),
    ]


def truncated_round() -> list[Event]:
    return [TextDelta("A long answer that is cut"), Finished("max_tokens", usage())]


def render_stream(turn: Turn, events: Iterable[Event]) -> str:
    return stream_of(CODEC, turn, events)


def render_body(turn: Turn, events: Iterable[Event]) -> dict[str, Any]:
    return body_of(CODEC, turn, events)


def sse_payloads(text: str) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) of every frame, checking the frame shape on the way."""
    frames = []
    for block in text.split("\n\n"):
        if not block:
            continue
        event_line, data_line = block.split("\n")
        assert event_line.startswith("event: ") and data_line.startswith("data: ")
        data = json.loads(data_line.removeprefix("data: "))
        assert data["type"] == event_line.removeprefix("event: ")
        frames.append((data["type"], data))
    return frames


@dataclass
class Scripted:
    """Mock upstream of the SDK: parses each request with the codec, answers with the script."""

    events: list[Event]
    turns: list[Turn] = field(default_factory=list)
    bodies: list[str] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        try:
            turn = CODEC.parse(json.loads(request.content))
        except Exception as error:
            message = getattr(error, "message", str(error))
            status = getattr(error, "status", 500)
            return httpx.Response(status, json=CODEC.error_body(status, message))
        self.turns.append(turn)
        if turn.stream:
            text = render_stream(turn, self.events)
            self.bodies.append(text)
            return httpx.Response(
                200, content=text.encode(), headers={"content-type": "text/event-stream"}
            )
        try:
            body = render_body(turn, self.events)
        except ServerFailure as failure:  # as the server answers it: an HTTP error
            return httpx.Response(
                failure.status, json=CODEC.error_body(failure.status, failure.message)
            )
        self.bodies.append(json.dumps(body))
        return httpx.Response(200, json=body)


def sdk_client(
    handler: Callable[[httpx.Request], httpx.Response], *, strict: bool
) -> openai.OpenAI:
    return openai.OpenAI(
        api_key="x",
        base_url="http://test/v1",
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
        _strict_response_validation=strict,
        max_retries=0,
    )
