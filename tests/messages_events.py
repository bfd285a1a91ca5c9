"""Synthetic loop events for the Messages codec, and official-SDK clients that read its output."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message

from codec_helpers import body_of, stream_of
from webreach.server.core.turn.events import (
    CallFailed,
    Event,
    Finished,
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
from webreach.server.messages import MessagesCodec

CODEC = MessagesCodec()
USER = [{"role": "user", "content": "How many people live in Iceland?"}]
DEEPSEEK_TOOLS = [
    {"type": "deepseek_web_search", "name": "deepseek_web_search"},
    {"type": "deepseek_read_url", "name": "deepseek_read_url"},
]
NATIVE_TOOLS = [
    {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
    {"type": "web_fetch_20250910", "name": "web_fetch"},
]

STATS = WebSource(
    url="https://statice.is/pop",
    title="Statistics Iceland",
    snippet="394,000 at the start of 2026",
    published_at="2026-01-02T03:04:05+00:00",
    number=1,
    site_name="Hagstofa",
    site_icon="https://statice.is/favicon.ico",
)
CITED = "Iceland has about **394,000** people"
HUAON = WebSource(
    url="https://huaon.example/iceland",
    title=None,
    snippet="404,600 in 2024",
    published_at=None,
    number=2,
)


def turn_for(*, tools: list[dict[str, Any]] | None = None, **extra: Any) -> Turn:
    body: dict[str, Any] = {"model": "deepseek-flash", "max_tokens": 512, "messages": USER}
    if tools is not None:
        body["tools"] = tools
    body.update(extra)
    return CODEC.parse(body)


def search_call(tool_name: str = "deepseek_web_search", tool_type: str | None = None) -> WebCall:
    return WebCall(
        id="srvtoolu_s_00_a1",
        step=0,
        index=0,
        kind="search",
        tool_name=tool_name,
        tool_type=tool_type or tool_name,
        action=SearchAction(("Iceland population 2025", "Iceland population 2026")),
    )


def read_call(url: str, n: int = 0, tool_name: str = "deepseek_read_url") -> WebCall:
    return WebCall(
        id=f"srvtoolu_rl_00_{n}",
        step=0,
        index=n,
        kind="read_link",
        tool_name=tool_name,
        tool_type=tool_name,
        action=ReadLinkAction(url),
    )


def usage(**counts: int) -> Usage:
    base = {"input_tokens": 1905, "output_tokens": 72, "cached_tokens": 5, "reasoning_tokens": 9}
    base.update(counts)
    return Usage(**base)


def search_round(call: WebCall | None = None) -> list[Event]:
    """Thinking, one search of two queries, more thinking, an answer with three citations."""
    call = call or search_call()
    return [
        ReasoningDelta("I should "),
        ReasoningDelta("search."),
        StepReasoningDone(0),
        WebCallStarted(call),
        WebCallCompleted(call, SearchOutcome((STATS, HUAON))),
        ReasoningDelta("Two sources."),
        TextDelta("Iceland has about "),
        TextDelta("**394,000** people"),
        TextCitation(STATS.url, STATS.title, 0, 36, CITED, STATS.snippet),
        TextCitation(STATS.url, STATS.title, 0, 36, CITED, STATS.snippet),
        TextCitation(HUAON.url, None, 0, 36, CITED, HUAON.snippet),
        TextDelta(". In 2024: "),
        TextDelta("404,600"),
        TextCitation(HUAON.url, None, 36, 54, ". In 2024: 404,600", HUAON.snippet),
        TextDelta("."),
        Finished("end_turn", usage(web_search_requests=1, tool_search=2)),
    ]


def failed_read_round(tool_name: str = "deepseek_read_url") -> list[Event]:
    """Two links read at once: the calls first, then a sealed page and a failure."""
    ok = read_call("https://example.com/a", 0, tool_name)
    bad = read_call("https://example.com/b", 1, tool_name)
    page = PageOutcome("https://example.com/a", "Page A", "2026-01-01", signature="c2VhbGVk")
    return [
        WebCallStarted(ok),
        WebCallStarted(bad),
        WebCallCompleted(ok, page),
        WebCallCompleted(bad, CallFailed("url_not_accessible")),
        TextDelta("Page A says hello."),
        Finished("end_turn", usage(web_fetch_requests=2, tool_fetch=1)),
    ]


def stream_text(turn: Turn, events: Iterable[Event]) -> str:
    return stream_of(CODEC, turn, events)


def body_json(turn: Turn, events: Iterable[Event]) -> dict[str, Any]:
    return body_of(CODEC, turn, events)


def frames(sse: str) -> list[tuple[str | None, dict[str, Any]]]:
    """(event name, data) of each frame, read the way an SSE client reads them."""
    out = []
    for chunk in sse.split("\n\n"):
        if not chunk or chunk.startswith(":"):
            continue  # a comment (keep-alive): SSE clients skip it
        name, data = None, None
        for line in chunk.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data = json.loads(line[len("data: ") :])
        assert data is not None, chunk
        out.append((name, data))
    return out


def sdk_client(
    responder: Callable[[dict[str, Any]], httpx2.Response], *, strict: bool
) -> anthropic.Anthropic:
    """An official client whose every request is answered by ``responder(request body)``."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        return responder(json.loads(request.content))

    return anthropic.Anthropic(
        api_key="test",
        base_url="http://messages.test",
        http_client=httpx2.Client(transport=httpx2.MockTransport(handle)),
        max_retries=0,
        _strict_response_validation=strict,
    )


def serving(sse: str | None = None, body: dict[str, Any] | None = None) -> Any:
    def respond(request: dict[str, Any]) -> httpx2.Response:
        if request.get("stream"):
            assert sse is not None
            headers = {"content-type": "text/event-stream"}
            return httpx2.Response(200, content=sse.encode(), headers=headers)
        return httpx2.Response(200, json=body)

    return respond


def final_message(sse: str, *, strict: bool) -> Message:
    """``messages.stream(...).get_final_message()`` over this SSE text."""
    client = sdk_client(serving(sse=sse), strict=strict)
    with client.messages.stream(model="deepseek-flash", max_tokens=512, messages=USER) as stream:  # type: ignore[arg-type]
        return stream.get_final_message()


def created_message(body: dict[str, Any], *, strict: bool) -> Message:
    """``messages.create(...)`` answered with this body."""
    client = sdk_client(serving(body=body), strict=strict)
    return client.messages.create(model="deepseek-flash", max_tokens=512, messages=USER)  # type: ignore[arg-type]
