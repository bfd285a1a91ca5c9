"""Loop events → Chat Completions: ``server_tool_calls`` steps, ``server_tool_event`` progress.

One renderer serves the stream (chunks as events arrive) and the body (one completion), so
the two always agree.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, assert_never

from ..core.turn import events
from ..core.turn.shape import JSON, Turn
from ..core.wire.display import url_source
from ..core.wire.framing import dumps, server_tool_use, sse_frame

__all__ = ["ChatRenderer", "action_json", "outcome_json", "usage_json"]

_FINISH = {
    "end_turn": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def action_json(action: events.Action) -> JSON:
    """The action under its own name: Chat's ``server_tool_calls`` have no fixed vocabulary."""
    if action.finds == "sources":
        queries = action.queries
        return {
            "type": action.name,
            "queries": list(queries),
            "query": queries[0] if queries else "",
        }
    shown: JSON = {"type": action.name, "url": action.url}
    if action.pattern is not None:
        shown["pattern"] = action.pattern
    return shown


def outcome_json(outcome: events.Outcome, *, signature: bool) -> JSON:
    match outcome:
        case events.SearchOutcome(sources=sources):
            return {
                "status": "completed",
                "sources": [url_source(s) for s in sources],
            }
        case events.PageOutcome(url=url, title=title, published_at=published_at):
            data: JSON = {
                "status": "completed",
                "page": {"url": url, "title": title, "published_at": published_at},
            }
            if signature and outcome.signature:
                data["signature"] = outcome.signature
            return data
        case events.CallFailed(error_code=code):
            return {"status": "failed", "error": {"code": code}}
        case _:
            assert_never(outcome)


def usage_json(usage: events.Usage) -> JSON:
    data: JSON = {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }
    if usage.billed:
        data["server_tool_use"] = server_tool_use(usage)
    return data


@dataclass
class _Answer:
    """Everything of one reply, gathered as events arrive."""

    thinking: bool
    text: str = ""
    reasoning: str = ""
    annotations: list[JSON] = field(default_factory=list)
    steps: dict[int, JSON] = field(default_factory=dict)
    step_calls: dict[int, list[JSON]] = field(default_factory=dict)
    """Each step's ``calls`` list, the same object as in its entry of ``steps``."""
    calls: dict[str, JSON] = field(default_factory=dict)
    tool_calls: list[JSON] = field(default_factory=list)
    told: dict[str, tuple[int, JSON]] = field(default_factory=dict)
    """The client's calls whose arguments are streaming in, by call id: their index and
    ``function`` (whose ``arguments`` grow)."""

    def step(self, number: int) -> JSON:
        if number not in self.steps:
            calls: list[JSON] = []
            entry: JSON = {"index": number, "calls": calls}
            if self.thinking:
                entry["reasoning_content"] = ""
            self.steps[number] = entry
            self.step_calls[number] = calls
        return self.steps[number]

    def close_reasoning(self, number: int) -> None:
        entry = self.step(number)
        if self.thinking:
            entry["reasoning_content"] = self.reasoning
        self.reasoning = ""

    def started(self, call: events.WebCall) -> JSON:
        entry: JSON = {
            "index": call.index,
            "id": call.id,
            "type": call.tool_type,
            "kind": call.kind,
            "action": action_json(call.action),
        }
        self.step(call.step)
        self.step_calls[call.step].append(entry)
        self.calls[call.id] = entry
        return entry

    def completed(self, call: events.WebCall, outcome: events.Outcome) -> JSON:
        """Record the outcome; return the call as progress events show it (no signature)."""
        entry = self.calls[call.id]
        entry.update(outcome_json(outcome, signature=True))
        return {k: v for k, v in entry.items() if k != "signature"}

    def cite(self, citation: events.TextCitation) -> None:
        self.annotations.append(
            {
                "type": "url_citation",
                "url_citation": {
                    "url": citation.url,
                    "title": citation.title or citation.url,
                    "start_index": citation.start,
                    "end_index": citation.end,
                },
            }
        )

    def server_tool_calls(self) -> list[JSON]:
        for entry in self.calls.values():
            if "status" not in entry:
                entry.update({"status": "failed", "error": {"code": "unavailable"}})
        return [self.steps[number] for number in sorted(self.steps)]

    def refuse(self) -> None:
        """Content review refused the answer: no text, no citations, and the thinking of each
        step cleared; the calls that ran stay (DeepSeek's ``content_filter`` finish)."""
        self.text, self.reasoning, self.annotations = "", "", []
        for entry in self.steps.values():
            if "reasoning_content" in entry:
                entry["reasoning_content"] = ""

    def tool_arguments(self, told: events.ClientToolArguments) -> JSON | None:
        """The chunk's piece of a call whose arguments arrive: the whole head the first time,
        then the index and what arrived (None when nothing did)."""
        known = self.told.get(told.id)
        if known is None:
            function: JSON = {"name": told.name, "arguments": told.delta}
            index = len(self.tool_calls)
            entry = {"index": index, "id": told.id, "type": "function", "function": function}
            self.tool_calls.append(entry)
            self.told[told.id] = (index, function)
            return {**entry, "function": dict(function)}
        return _more_arguments(*known, told.delta)

    def tool_call(self, call: events.ClientToolCall) -> JSON | None:
        """The chunk's piece of a finished call: whole, or the rest of one already streaming."""
        known = self.told.pop(call.id, None)
        if known is not None:
            index, function = known
            sent = str(function["arguments"])
            rest = call.arguments[len(sent) :] if call.arguments.startswith(sent) else ""
            piece = _more_arguments(index, function, rest)
            function["arguments"] = call.arguments
            return piece
        entry = {
            "index": len(self.tool_calls),
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }
        self.tool_calls.append(entry)
        return entry


def _more_arguments(index: int, function: JSON, delta: str) -> JSON | None:
    """The piece of a chunk that carries more of a call's arguments (None: none arrived)."""
    if not delta:
        return None
    function["arguments"] = f"{function['arguments']}{delta}"
    return {"index": index, "function": {"arguments": delta}}


class ChatRenderer:
    """Chunks of a streamed completion as events arrive, and the completion once finished."""

    def __init__(self, turn: Turn, *, streaming: bool) -> None:
        self._turn = turn
        self._streaming = streaming
        self._answer = _Answer(turn.thinking)
        self._id = f"chatcmpl-{uuid.uuid4().hex}"
        self._created = int(time.time())
        self._finish = "stop"
        self._usage = events.Usage()
        self._title: str | None = None
        self.done = False

    def _chunk(self, delta: JSON, **extra: Any) -> str:
        if not self._streaming:
            return ""
        choice = {"index": 0, "delta": delta, "finish_reason": None, **extra}
        return sse_frame(dumps({**self._head(), "choices": [choice]}))

    def _head(self) -> JSON:
        return {
            "id": self._id,
            "object": "chat.completion.chunk",
            "created": self._created,
            "model": self._turn.model,
        }

    def _progress(self, kind: str, step: int, **fields: Any) -> str:
        return self._chunk({}, server_tool_event={"type": kind, "step": step, **fields})

    def start(self) -> str:
        return self._chunk({"role": "assistant", "content": ""})

    def feed(self, event: events.Event) -> str:
        answer = self._answer
        match event:
            case events.ReasoningDelta(text=text):
                answer.reasoning += text
                return self._chunk({"reasoning_content": text})
            case events.TextDelta(text=text):
                answer.text += text
                return self._chunk({"content": text})
            case events.TextCitation():
                answer.cite(event)
                return ""
            case events.StepReasoningDone(step=step):
                answer.close_reasoning(step)
                return self._progress("step_reasoning_done", step)
            case events.WebCallStarted(call=call):
                return self._progress("call_started", call.step, call=answer.started(call))
            case events.WebCallCompleted(call=call, outcome=outcome):
                public = answer.completed(call, outcome)
                return self._progress("call_completed", call.step, call=public)
            case events.ClientToolArguments():
                piece = answer.tool_arguments(event)
                return "" if piece is None else self._chunk({"tool_calls": [piece]})
            case events.ClientToolCall():
                piece = answer.tool_call(event)
                return "" if piece is None else self._chunk({"tool_calls": [piece]})
            case events.Finished(stop_reason=reason, usage=usage, title=title):
                self.done = True
                self._finish, self._usage, self._title = _FINISH[reason], usage, title
                if reason == "refusal":
                    answer.refuse()
                return self._last_chunk()
            case events.Failed(message=message, usage=usage):
                self.done = True
                return self._failure_chunk(message, usage)
            case events.FirstStepUsage():
                return ""
            case _:
                assert_never(event)

    def _last_chunk(self) -> str:
        if not self._streaming:
            return ""
        answer = self._answer
        delta: JSON = {}
        if answer.steps:
            delta["server_tool_calls"] = answer.server_tool_calls()
        if answer.annotations:
            delta["annotations"] = answer.annotations
        if self._turn.extensions.title:
            delta["title"] = self._title
        last = {
            **self._head(),
            "choices": [{"index": 0, "delta": delta, "finish_reason": self._finish}],
            "usage": usage_json(self._usage),
        }
        return sse_frame(dumps(last)) + "data: [DONE]\n\n"

    def _failure_chunk(self, message: str, usage: events.Usage) -> str:
        """Chat's way to fail a started stream: a last chunk with ``error``, no ``[DONE]``."""
        failure = {
            **self._head(),
            "choices": [],
            "error": {"message": message, "type": "api_error", "code": "server_error"},
            "usage": usage_json(usage),
        }
        return sse_frame(dumps(failure)) if self._streaming else ""

    def body(self) -> JSON:
        answer = self._answer
        # OpenAI's schema requires `refusal` though it may be null, and nothing here fills it:
        # an answer the review refused ends with `content_filter` instead.
        message: JSON = {"role": "assistant", "content": answer.text, "refusal": None}
        if self._turn.thinking or answer.reasoning:
            message["reasoning_content"] = answer.reasoning
        if answer.annotations:
            message["annotations"] = answer.annotations
        if answer.steps:
            message["server_tool_calls"] = answer.server_tool_calls()
        if self._turn.extensions.title:
            message["title"] = self._title
        if answer.tool_calls:
            message["tool_calls"] = [
                {k: v for k, v in call.items() if k != "index"} for call in answer.tool_calls
            ]
        body: JSON = {
            "id": self._id,
            "object": "chat.completion",
            "created": self._created,
            "model": self._turn.model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": self._finish, "logprobs": None}
            ],
            "usage": usage_json(self._usage),
        }
        if _openrouter_dialect(self._turn):
            body["provider"] = PROVIDER_NAME
        return body


PROVIDER_NAME = "webreach"
"""OpenRouter's completions name the provider that served them; its clients (pydantic-ai's
``OpenRouterModel``) refuse a completion without one."""
_OPENROUTER_DECLARED = frozenset({"plugins.web", ":online", "openrouter:web_search"})


def _openrouter_dialect(turn: Turn) -> bool:
    """Whether the request asked for the web OpenRouter's way (its tools, plugin or suffix)."""
    search, read_url = turn.web.search, turn.web.read_url
    return (search is not None and search.declared_type in _OPENROUTER_DECLARED) or (
        read_url is not None and read_url.declared_type.startswith("openrouter:")
    )
