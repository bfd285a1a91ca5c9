"""The agent loop: call the model, run the web calls it makes, feed results back, repeat.

The first upstream call happens in :meth:`TurnRunner.start`, before the client is answered,
so its failure is still an HTTP error. Everything after that is reported as events.
"""

from __future__ import annotations

import asyncio
import json
import logging
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
    ReadLinkAction,
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
from .sealing import PageSealer
from .upstream import Upstream, UpstreamError
from .webcalls import (
    READ_LINKS_LIMIT,
    ModelTool,
    SourceRegistry,
    call_id,
    links_in,
    page_text,
    parse_read_arguments,
    parse_search_arguments,
    read_tool,
    run_read_call,
    run_search_call,
    search_tool,
)

__all__ = ["FORCED_ANSWER", "RETRY_ANSWER", "ServerContext", "TurnRunner"]

logger = logging.getLogger("webreach.server")

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
    sealer: PageSealer


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


_Done = tuple[Outcome, str, int]
"""A finished call: the client-facing outcome, the text for the model, billed units."""


@dataclass(frozen=True, slots=True)
class _Planned:
    call: WebCall
    model_id: str
    work: Awaitable[_Done]


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
        self._restore_pages()
        self._links: list[str] = []
        self._read: ModelTool | None = None
        deep = turn.thinking and turn.web.search is not None
        if turn.web.read_url is not None and not turn.tools_off and not deep:
            last_user = next((m for m in reversed(turn.messages) if m.get("role") == "user"), None)
            self._links = links_in(last_user)
            if self._links:
                name = "read_link" if "read_link" not in self._client_names else "webreach_read"
                self._read = read_tool(READ_LINKS_LIMIT, name)
        self._first: AsyncStream[Any] | None = None
        self._real_searches = 0

    def _restore_pages(self) -> None:
        """Put pages read in earlier rounds back at the end of the user message of their round."""
        for index, signature in self.turn.page_signatures:
            page = self.context.sealer.open(signature)
            if page is None or not 0 <= index < len(self._messages):
                continue
            message = dict(self._messages[index])
            restored = page_text(page)
            content = message.get("content")
            if isinstance(content, list):
                message["content"] = [*content, {"type": "text", "text": restored}]
            else:
                message["content"] = f"{content or ''}\n\n{restored}".lstrip()
            self._messages[index] = message

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
        own = [tool for tool in (self._search, self._read) if tool is not None]
        offered.extend(tool.definition for tool in own)
        if offered:
            body["tools"] = offered
            choice = turn.tool_choice
            if choice == "required" and own:
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
        """The turn's events; a failure after the response started becomes a ``Failed`` event."""
        try:
            async for event in self._rounds():
                yield event
        except UpstreamError as error:
            yield Failed(error.message, self.usage)
        except Exception:
            logger.exception("the request failed inside the loop")
            yield Failed("webreach failed while answering; please retry", self.usage)

    async def _rounds(self) -> AsyncIterator[Event]:
        search, read = self.turn.web.search, self.turn.web.read_url
        budget = search.budget if search is not None else 0
        read_budget = read.max_uses if read and read.max_uses is not None else READ_LINKS_LIMIT
        searches = reads = 0
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
            links = [c for c in calls if self._read is not None and c.name == self._read.name]
            client = [c for c in calls if c.name in self._client_names]
            known = {id(c) for c in (*web, *links, *client)}
            unknown = [c for c in calls if id(c) not in known]
            results: dict[str, str] = {}
            if web or links:
                yield StepReasoningDone(step)
                planned = [
                    *self._plan_searches(web, step, budget - searches),
                    *self._plan_reads(links, step, read_budget - reads),
                ]
                async for event in self._run_web(planned, results):
                    yield event
                searches += len(web)
                reads += len(links)
            for call in unknown:
                results[call.id] = f"ERROR: there is no tool named {call.name!r}."
            if client:
                for call in client:
                    yield ClientToolCall(call.id, call.name, call.arguments or "{}")
                yield Finished("tool_use", self.usage)
                return
            self._remember(state, calls, results)
            step += 1
            spent = searches >= budget if search is not None else reads >= read_budget
            if spent or step > max(budget, 1) + _EXTRA_STEPS:
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

    def _plan_searches(self, calls: list[_PendingCall], step: int, allowed: int) -> list[_Planned]:
        spec = self.turn.web.search
        if not calls or spec is None:
            return []
        options = self.context.options
        planned = []
        for index, pending in enumerate(calls):
            queries: tuple[str, ...] = ()
            work: Awaitable[_Done]
            try:
                queries = parse_search_arguments(pending.arguments, options)
            except ToolError as error:
                work = _ready((CallFailed("invalid_tool_input"), f"ERROR: {error}", 0))
            else:
                if index >= allowed:
                    work = _ready(_over_budget("search"))
                else:
                    work = run_search_call(
                        queries, spec, self.context.runtime, options, self._registry
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
            planned.append(_Planned(call, pending.id, work))
        return planned

    def _plan_reads(self, calls: list[_PendingCall], step: int, allowed: int) -> list[_Planned]:
        spec = self.turn.web.read_url
        if not calls or spec is None:
            return []
        room = self.context.options.fetch_max_chars // len(calls)
        planned = []
        for index, pending in enumerate(calls):
            url = ""
            work: Awaitable[_Done]
            try:
                url = parse_read_arguments(pending.arguments, self._links)
            except ToolError as error:
                failed = CallFailed("invalid_tool_input")
                if error.code == "WEB_BLOCKED_URL":
                    failed = CallFailed("url_not_allowed")
                work = _ready((failed, f"ERROR: {error}", 0))
                url = _argument_url(pending.arguments)
            else:
                if index >= allowed:
                    work = _ready(_over_budget("link"))
                else:
                    work = run_read_call(url, spec, self.context.runtime, room, self.context.sealer)
            call = WebCall(
                id=call_id("rl", step),
                step=step,
                index=index,
                kind="read_link",
                tool_name=spec.name,
                tool_type=spec.declared_type,
                action=ReadLinkAction(url),
            )
            planned.append(_Planned(call, pending.id, work))
        return planned

    async def _run_web(
        self, planned: list[_Planned], results: dict[str, str]
    ) -> AsyncIterator[Event]:
        """Announce every call, then run them concurrently and report each as it ends."""
        for item in planned:
            yield WebCallStarted(item.call)
        started = time.perf_counter()
        tasks = [asyncio.ensure_future(_labelled(item)) for item in planned]
        try:
            for next_done in asyncio.as_completed(tasks):
                item, (outcome, text, billed) = await next_done
                results[item.model_id] = text
                if item.call.kind == "read_link":
                    self.usage.web_fetch_requests += 1
                    self.usage.tool_fetch += billed
                else:
                    self.usage.web_search_requests += 1
                    self.usage.tool_search += billed
                    if isinstance(outcome, SearchOutcome):
                        self._real_searches += 1
                yield WebCallCompleted(item.call, outcome)
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


async def _labelled(item: _Planned) -> tuple[_Planned, _Done]:
    return item, await item.work


def _over_budget(what: str) -> _Done:
    return (
        CallFailed("max_uses_exceeded"),
        f"ERROR: the {what} budget of this answer is spent; answer now.",
        0,
    )


def _argument_url(raw: str) -> str:
    """The ``url`` a malformed call named, if any, for display."""
    try:
        value = json.loads(raw or "{}").get("url")
    except (ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""
