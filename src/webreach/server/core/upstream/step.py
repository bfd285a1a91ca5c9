"""Reading one upstream model step: text, reasoning and tool calls, as they stream in."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from openai import AsyncStream
from pydantic import BaseModel, ConfigDict, ValidationError

from ....seam import await_cleanly
from ..turn.citations import CitationStream
from ..turn.errors import UpstreamError
from ..turn.events import (
    ClientToolArguments,
    ClientToolCall,
    Event,
    FirstStepUsage,
    ReasoningDelta,
    Usage,
)
from ..turn.shape import ClientTool
from .chunks import ChatChunk, ChunkDelta

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
    told: int | None = None
    """How much of ``arguments`` the client was told as they arrived; None: nothing yet."""

    def tell(self, streamed: Mapping[str, ClientTool]) -> ClientToolArguments | None:
        """The arguments that arrived since last told, once the name is a client function's."""
        tool = streamed.get(self.name)
        if tool is None or self.told == len(self.arguments):
            return None
        self.id = self.id or f"call_{uuid.uuid4().hex}"
        delta = self.arguments[self.told or 0 :]
        self.told = len(self.arguments)
        return ClientToolArguments(self.id, tool.shown, delta, tool.namespace)

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
        return _FreeForm.model_validate_json(arguments).input
    except ValidationError:
        return arguments


class _FreeForm(BaseModel):
    """The one argument of a custom tool's upstream function."""

    model_config = ConfigDict(strict=True)

    input: str


@dataclass
class StepState:
    text: str = ""
    reasoning: str = ""
    calls: dict[int, PendingCall] = field(default_factory=dict)
    finish_reason: str | None = None


async def read_step(
    stream: AsyncStream[Any],
    state: StepState,
    citations: CitationStream,
    usage: Usage,
    clock: UpstreamClock,
    *,
    first: bool = False,
    shown: bool = True,
    streamed: Mapping[str, ClientTool] | None = None,
) -> AsyncIterator[Event]:
    """Stream one step's events while recording its text, reasoning, calls and usage; the
    ``first`` step also tells its usage the moment the upstream reports it.

    Usage is counted once per step, each field at the most the upstream reported: one report
    at the end (OpenAI), a running total on every chunk (vLLM's ``continuous_usage_stats``) or
    the input early and the output late all come to the step's own numbers. A step not
    ``shown`` keeps its text to itself (a draft the formatted answer replaces). The arguments of
    a call of one of the ``streamed`` client functions (by upstream name) are told as they
    arrive (:class:`ClientToolArguments`).

    The stream raises :class:`~..turn.errors.UpstreamError` for anything that is not a good chunk
    (:class:`~.stream.ChunkStream`), so what arrives here is typed."""
    iterator: AsyncIterator[ChatChunk] = stream.__aiter__()
    reported = (0, 0, 0, 0)
    try:
        while (chunk := await _next_chunk(iterator, clock)) is not None:
            if chunk.usage is not None:
                p, c, k, r = (max(a, b) for a, b in zip(reported, chunk.usage.counts, strict=True))
                reported = (p, c, k, r)
                if first:
                    first = False
                    yield FirstStepUsage(Usage(p, c, k, r))
            choice = chunk.first
            if choice is not None and choice.delta is not None:
                for event in _read_delta(choice.delta, state, citations, shown, streamed):
                    yield event
            if choice is not None and choice.finish_reason:
                state.finish_reason = choice.finish_reason
        for event in citations.flush():
            yield event
    finally:
        usage.add_step(*reported)
        await await_cleanly(stream.close())


async def _next_chunk(iterator: AsyncIterator[ChatChunk], clock: UpstreamClock) -> ChatChunk | None:
    """The next chunk within the clock's time, ``None`` at the end; a failure of the stream
    itself (a dropped connection) is a 502."""
    try:
        return await clock.timed(iterator.__anext__())
    except StopAsyncIteration:
        return None
    except UpstreamError:
        raise
    except Exception as error:
        message = f"upstream stream failed ({type(error).__name__})"
        raise UpstreamError(502, message) from error


def _read_delta(
    delta: ChunkDelta,
    state: StepState,
    citations: CitationStream,
    shown: bool,
    streamed: Mapping[str, ClientTool] | None,
) -> Iterator[Event]:
    """One chunk's reasoning, text and call pieces, recorded in the step and told as events."""
    reasoning = delta.reasoning_text
    if reasoning:
        state.reasoning += reasoning
        yield ReasoningDelta(reasoning)
    if delta.content:
        state.text += delta.content
        yield from citations.feed(delta.content) if shown else ()
    for piece in delta.tool_calls or ():
        pending = state.calls.setdefault(piece.index, PendingCall())
        pending.id = pending.id or (piece.id or "")
        if piece.function is not None:
            pending.name += piece.function.name or ""
            pending.arguments += piece.function.arguments or ""
        told = pending.tell(streamed) if streamed else None
        if told is not None:
            yield told
