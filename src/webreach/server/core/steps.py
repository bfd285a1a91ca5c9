"""Reading one upstream model step: text, reasoning and tool calls, as they stream in."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from openai import AsyncStream

from ...seam import settled
from .citations import CitationStream
from .errors import UpstreamError
from .events import ClientToolCall, Event, ReasoningDelta, Usage
from .turn import JSON, ClientTool

__all__ = ["PendingCall", "StepState", "UpstreamClock", "read_step"]

T = TypeVar("T")


class UpstreamClock:
    """Adds up the time spent waiting on the upstream, for ``Server-Timing``."""

    def __init__(self) -> None:
        self.seconds = 0.0

    async def timed(self, awaitable: Awaitable[T]) -> T:
        started = time.perf_counter()
        try:
            return await awaitable
        finally:
            self.seconds += time.perf_counter() - started


@dataclass
class PendingCall:
    id: str = ""
    name: str = ""
    arguments: str = ""

    def for_client(self, tool: ClientTool) -> ClientToolCall:
        """This call as the client declared its tool: namespaced, or a custom tool's input."""
        arguments = self.arguments or "{}"
        if tool.kind == "custom":
            arguments = _free_form(arguments)
        return ClientToolCall(self.id, tool.shown, arguments, tool.namespace, tool.kind)


def _free_form(arguments: str) -> str:
    """The ``input`` of a custom tool's upstream function; arguments that are not the object
    the function declared reach the client as the model wrote them."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return arguments
    value = parsed.get("input") if isinstance(parsed, dict) else None
    return value if isinstance(value, str) else arguments


@dataclass
class StepState:
    text: str = ""
    reasoning: str = ""
    calls: dict[int, PendingCall] = field(default_factory=dict)
    finish_reason: str | None = None


def _reasoning_of(delta: JSON) -> str | None:
    value = delta.get("reasoning_content") or delta.get("reasoning")
    return value if isinstance(value, str) and value else None


def _count(data: Any, key: str) -> int:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, int) else 0


async def read_step(
    stream: AsyncStream[Any],
    state: StepState,
    citations: CitationStream,
    usage: Usage,
    clock: UpstreamClock,
) -> AsyncIterator[Event]:
    """Stream one step's events while recording its text, reasoning, calls and usage."""
    iterator = stream.__aiter__()
    try:
        while True:
            try:
                chunk = await clock.timed(iterator.__anext__())
            except StopAsyncIteration:
                break
            except Exception as error:
                raise UpstreamError(502, f"upstream stream failed: {error}") from error
            if not isinstance(chunk, dict):
                continue
            reported = chunk.get("usage")
            if isinstance(reported, dict):
                usage.add_step(
                    _count(reported, "prompt_tokens"),
                    _count(reported, "completion_tokens"),
                    _count(reported.get("prompt_tokens_details"), "cached_tokens"),
                    _count(reported.get("completion_tokens_details"), "reasoning_tokens"),
                )
            for choice in (chunk.get("choices") or ())[:1]:
                delta = choice.get("delta") or {}
                reasoning = _reasoning_of(delta)
                if reasoning:
                    state.reasoning += reasoning
                    yield ReasoningDelta(reasoning)
                content = delta.get("content")
                if content:
                    state.text += content
                    for event in citations.feed(content):
                        yield event
                for piece in delta.get("tool_calls") or ():
                    pending = state.calls.setdefault(piece.get("index", 0), PendingCall())
                    pending.id = pending.id or (piece.get("id") or "")
                    function = piece.get("function") or {}
                    pending.name += function.get("name") or ""
                    pending.arguments += function.get("arguments") or ""
                if choice.get("finish_reason"):
                    state.finish_reason = choice["finish_reason"]
        for event in citations.flush():
            yield event
    finally:
        await settled(stream.close())
