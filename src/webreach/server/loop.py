"""The agent loop: call the model, run the web calls it makes, feed results back, repeat.

The first upstream call happens in :meth:`TurnRunner.start`, before the client is answered,
so its failure is still an HTTP error. Everything after that is reported as events.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from openai import AsyncStream

from ..seam import WebRuntime
from ..tools import ToolError, ToolOptions
from .citations import CitationStream
from .events import (
    CallFailed,
    ClientToolCall,
    Event,
    Failed,
    Finished,
    Outcome,
    ReasoningDelta,
    SearchAction,
    SearchOutcome,
    StepReasoningDone,
    StopReason,
    Usage,
    WebCall,
    WebCallCompleted,
    WebCallStarted,
)
from .model import Turn
from .upstream import Upstream, UpstreamError
from .webcalls import (
    ModelTool,
    SourceRegistry,
    call_id,
    parse_search_arguments,
    run_search_call,
    search_tool,
)

__all__ = ["FORCED_ANSWER", "RETRY_ANSWER", "ServerContext", "TurnRunner"]

T = TypeVar("T")

FORCED_ANSWER = (
    "Answer the user's question now from the web search results collected above. Base the "
    "answer on what the results actually say and cite the sources you use with their 【n】 "
    "markers. Do not claim that information is missing when the results contain it, and do "
    "not invent sources that were not returned."
)
RETRY_ANSWER = (
    "Your previous reply was empty. Answer the user now in plain text from the information "
    "above, or say briefly what is missing."
)
_EXTRA_STEPS = 3
"""Model steps allowed beyond the search budget before an answer is forced."""

_STOP_REASONS: dict[str | None, StopReason] = {
    "length": "max_tokens",
    "content_filter": "refusal",
}


@dataclass(frozen=True, slots=True)
class ServerContext:
    upstream: Upstream
    runtime: WebRuntime
    options: ToolOptions


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class _Step:
    text: str = ""
    reasoning: str = ""
    calls: dict[int, _PendingCall] = field(default_factory=dict)
    finish_reason: str | None = None


def _reasoning_of(delta: dict[str, Any]) -> str | None:
    value = delta.get("reasoning_content") or delta.get("reasoning")
    return value if isinstance(value, str) and value else None


def _count(data: Any, key: str) -> int:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, int) else 0


class TurnRunner:
    """Runs one request's rounds of model steps and web calls."""

    def __init__(self, turn: Turn, context: ServerContext) -> None:
        self.turn = turn
        self.context = context
        self.usage = Usage()
        self.upstream_seconds = 0.0
        self.web_seconds = 0.0
        self._registry = SourceRegistry()
        self._citations = CitationStream(self._registry.lookup)
        self._messages = list(turn.messages)
        self._client_names = {
            str(tool.get("function", {}).get("name")) for tool in turn.client_tools
        }
        self._search: ModelTool | None = None
        if turn.web.search is not None and not turn.tools_off:
            name = "web_search" if "web_search" not in self._client_names else "webreach_search"
            self._search = search_tool(context.options, name)
        self._first: AsyncStream[Any] | None = None
        self._real_searches = 0

    def _body(self, *, tools: bool, nudge: str | None = None) -> dict[str, Any]:
        turn = self.turn
        messages = (
            self._messages
            if nudge is None
            else [
                *self._messages,
                {"role": "system", "content": nudge},
            ]
        )
        body: dict[str, Any] = {"model": turn.model, "messages": messages, **turn.params}
        if not tools:
            return body
        offered = list(turn.client_tools)
        if self._search is not None:
            offered.append(self._search.definition)
        if offered:
            body["tools"] = offered
            choice = turn.tool_choice
            if choice == "required" and self._search is not None:
                choice = "auto"
            if choice is not None:
                body["tool_choice"] = choice
        return body

    async def _timed(self, awaitable: Awaitable[T]) -> T:
        started = time.perf_counter()
        try:
            return await awaitable
        finally:
            self.upstream_seconds += time.perf_counter() - started

    async def start(self) -> None:
        """Make the first upstream call; an ``UpstreamError`` here becomes an HTTP error."""
        self._first = await self._timed(self.context.upstream.stream_chat(self._body(tools=True)))

    async def events(self) -> AsyncIterator[Event]:
        try:
            async for event in self._rounds():
                yield event
        except UpstreamError as error:
            yield Failed(error.message, self.usage)

    async def _rounds(self) -> AsyncIterator[Event]:
        search = self.turn.web.search
        budget = search.budget if search is not None else 0
        searches = 0
        forced = retried = False
        step = 0
        stream = self._first
        while True:
            if stream is None:
                nudge = None
                if forced and retried:
                    nudge = RETRY_ANSWER
                elif forced and self._real_searches:
                    nudge = FORCED_ANSWER
                body = self._body(tools=not forced, nudge=nudge)
                stream = await self._timed(self.context.upstream.stream_chat(body))
            state = _Step()
            async for event in self._consume(stream, state):
                yield event
            stream = None
            calls = [state.calls[i] for i in sorted(state.calls)]
            for call in calls:
                call.id = call.id or f"call_{uuid.uuid4().hex}"
            if not calls:
                if forced and not state.text.strip() and not retried:
                    retried = True
                    continue
                yield Finished(_STOP_REASONS.get(state.finish_reason, "end_turn"), self.usage)
                return
            web = [c for c in calls if self._search is not None and c.name == self._search.name]
            client = [c for c in calls if c.name in self._client_names]
            known = {id(c) for c in (*web, *client)}
            unknown = [c for c in calls if id(c) not in known]
            results: dict[str, str] = {}
            if web:
                yield StepReasoningDone(step)
                async for event in self._run_web(web, step, budget - searches, results):
                    yield event
                searches += len(web)
            for call in unknown:
                results[call.id] = f"ERROR: there is no tool named {call.name!r}."
            if client:
                for call in client:
                    yield ClientToolCall(call.id, call.name, call.arguments or "{}")
                yield Finished("tool_use", self.usage)
                return
            self._remember(state, calls, results)
            step += 1
            if searches >= budget or step > budget + _EXTRA_STEPS:
                forced = True

    async def _consume(self, stream: AsyncStream[Any], state: _Step) -> AsyncIterator[Event]:
        iterator = stream.__aiter__()
        try:
            while True:
                try:
                    chunk = await self._timed(iterator.__anext__())
                except StopAsyncIteration:
                    break
                except Exception as error:
                    raise UpstreamError(502, f"upstream stream failed: {error}") from error
                if not isinstance(chunk, dict):
                    continue
                usage = chunk.get("usage")
                if isinstance(usage, dict):
                    self.usage.add_step(
                        _count(usage, "prompt_tokens"),
                        _count(usage, "completion_tokens"),
                        _count(usage.get("prompt_tokens_details"), "cached_tokens"),
                        _count(usage.get("completion_tokens_details"), "reasoning_tokens"),
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
                        for event in self._citations.feed(content):
                            yield event
                    for piece in delta.get("tool_calls") or ():
                        pending = state.calls.setdefault(piece.get("index", 0), _PendingCall())
                        pending.id = pending.id or (piece.get("id") or "")
                        function = piece.get("function") or {}
                        pending.name += function.get("name") or ""
                        pending.arguments += function.get("arguments") or ""
                    if choice.get("finish_reason"):
                        state.finish_reason = choice["finish_reason"]
            for event in self._citations.flush():
                yield event
        finally:
            await stream.close()

    async def _run_web(
        self, calls: list[_PendingCall], step: int, allowed: int, results: dict[str, str]
    ) -> AsyncIterator[Event]:
        """Announce every call, then run them concurrently and report each as it ends."""
        spec = self.turn.web.search
        assert spec is not None
        context = self.context
        planned: list[tuple[WebCall, Awaitable[tuple[Outcome, str, int]] | None]] = []
        for index, pending in enumerate(calls):
            queries: tuple[str, ...] = ()
            failure: tuple[Outcome, str, int] | None = None
            try:
                queries = parse_search_arguments(pending.arguments, context.options)
            except ToolError as error:
                failure = (CallFailed("invalid_tool_input"), f"ERROR: {error}", 0)
            if failure is None and index >= allowed:
                failure = (
                    CallFailed("max_uses_exceeded"),
                    "ERROR: the search budget of this answer is spent; answer now.",
                    0,
                )
            call = WebCall(
                id=call_id("s", step),
                step=step,
                index=index,
                kind="search",
                tool_name=spec.name,
                tool_type=spec.declared_type,
                action=SearchAction(queries),
            )
            work = (
                run_search_call(queries, spec, context.runtime, context.options, self._registry)
                if failure is None
                else _ready(failure)
            )
            planned.append((call, work))
        for call, _ in planned:
            yield WebCallStarted(call)
        started = time.perf_counter()
        tasks = {
            asyncio.ensure_future(_labelled(call, pending.id, work)): call
            for (call, work), pending in zip(planned, calls, strict=True)
            if work is not None
        }
        try:
            for next_done in asyncio.as_completed(tasks):
                call, model_id, (outcome, text, billed) = await next_done
                results[model_id] = text
                self.usage.web_search_requests += 1
                self.usage.tool_search += billed
                if isinstance(outcome, SearchOutcome):
                    self._real_searches += 1
                yield WebCallCompleted(call, outcome)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.web_seconds += time.perf_counter() - started

    def _remember(self, state: _Step, calls: list[_PendingCall], results: dict[str, str]) -> None:
        """Append this step's assistant message and tool results for the next model step."""
        message: dict[str, Any] = {
            "role": "assistant",
            "content": state.text or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments or "{}"},
                }
                for call in calls
            ],
        }
        if state.reasoning:
            message["reasoning_content"] = state.reasoning
        self._messages.append(message)
        for call in calls:
            self._messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": results[call.id]}
            )


async def _ready(value: T) -> T:
    return value


async def _labelled(
    call: WebCall, model_id: str, work: Awaitable[tuple[Outcome, str, int]]
) -> tuple[WebCall, str, tuple[Outcome, str, int]]:
    return call, model_id, await work
