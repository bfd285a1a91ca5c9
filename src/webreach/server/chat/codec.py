"""The Chat Completions codec: ``server_tool_calls`` steps, ``server_tool_event`` progress."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, assert_never

from ..core.codec import sse_frame
from ..core.events import (
    CallFailed,
    ClientToolCall,
    Event,
    Failed,
    FindInPageAction,
    Finished,
    OpenPageAction,
    Outcome,
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
)
from ..core.turn import Turn
from .request import parse_chat

__all__ = ["ChatCodec"]

_FINISH = {
    "end_turn": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def action_json(
    action: SearchAction | OpenPageAction | FindInPageAction | ReadLinkAction,
) -> dict[str, Any]:
    match action:
        case SearchAction(queries=queries):
            return {
                "type": "search",
                "queries": list(queries),
                "query": queries[0] if queries else "",
            }
        case OpenPageAction(url=url):
            return {"type": "open_page", "url": url}
        case FindInPageAction(url=url, pattern=pattern):
            return {"type": "find_in_page", "url": url, "pattern": pattern}
        case ReadLinkAction(url=url):
            return {"type": "read_link", "url": url}
        case _:
            assert_never(action)


def outcome_json(outcome: Outcome, *, signature: bool) -> dict[str, Any]:
    match outcome:
        case SearchOutcome(sources=sources):
            return {
                "status": "completed",
                "sources": [
                    {
                        "type": "url",
                        "url": s.url,
                        "title": s.title,
                        "snippet": s.snippet,
                        "site_name": s.site_name,
                        "site_icon": None,
                        "published_at": s.published_at,
                    }
                    for s in sources
                ],
            }
        case PageOutcome(url=url, title=title, published_at=published_at):
            data: dict[str, Any] = {
                "status": "completed",
                "page": {"url": url, "title": title, "published_at": published_at},
            }
            if signature and outcome.signature:
                data["signature"] = outcome.signature
            return data
        case CallFailed(error_code=code):
            return {"status": "failed", "error": {"code": code}}
        case _:
            assert_never(outcome)


def usage_json(usage: Usage) -> dict[str, Any]:
    data: dict[str, Any] = {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }
    if usage.has_server_tools:
        data["server_tool_use"] = {
            "web_search_requests": usage.web_search_requests,
            "web_fetch_requests": usage.web_fetch_requests,
            "tool_search": usage.tool_search,
            "tool_fetch": usage.tool_fetch,
            "tool_image_search": usage.tool_image_search,
        }
    return data


@dataclass
class _Answer:
    """Everything of one reply, gathered as events arrive."""

    thinking: bool
    text: str = ""
    reasoning: str = ""
    annotations: list[dict[str, Any]] = field(default_factory=list)
    steps: dict[int, dict[str, Any]] = field(default_factory=dict)
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)

    def step(self, number: int) -> dict[str, Any]:
        if number not in self.steps:
            entry: dict[str, Any] = {"index": number, "calls": []}
            if self.thinking:
                entry["reasoning_content"] = ""
            self.steps[number] = entry
        return self.steps[number]

    def close_reasoning(self, number: int) -> None:
        entry = self.step(number)
        if self.thinking:
            entry["reasoning_content"] = self.reasoning
        self.reasoning = ""

    def started(self, call: WebCall) -> dict[str, Any]:
        entry = {
            "index": call.index,
            "id": call.id,
            "type": call.tool_type,
            "kind": call.kind,
            "action": action_json(call.action),
        }
        self.step(call.step)["calls"].append(entry)
        self.calls[call.id] = entry
        return entry

    def completed(self, call: WebCall, outcome: Outcome) -> dict[str, Any]:
        """Record the outcome; return the call as progress events show it (no signature)."""
        entry = self.calls[call.id]
        entry.update(outcome_json(outcome, signature=True))
        return {k: v for k, v in entry.items() if k != "signature"}

    def cite(self, citation: TextCitation) -> None:
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

    def server_tool_calls(self) -> list[dict[str, Any]]:
        for entry in self.calls.values():
            if "status" not in entry:
                entry.update({"status": "failed", "error": {"code": "unavailable"}})
        return [self.steps[number] for number in sorted(self.steps)]

    def tool_call(self, call: ClientToolCall) -> dict[str, Any]:
        entry = {
            "index": len(self.tool_calls),
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }
        self.tool_calls.append(entry)
        return entry


class ChatCodec:
    protocol = "chat"

    def parse(self, body: dict[str, Any]) -> Turn:
        return parse_chat(body)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}

    async def stream(self, turn: Turn, events: AsyncIterator[Event]) -> AsyncIterator[str]:
        answer = _Answer(turn.thinking)
        head = {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": turn.model,
        }

        def chunk(delta: dict[str, Any], **extra: Any) -> str:
            choice = {"index": 0, "delta": delta, "finish_reason": None, **extra}
            return sse_frame(_dumps({**head, "choices": [choice]}))

        yield chunk({"role": "assistant", "content": ""})
        async for event in events:
            match event:
                case ReasoningDelta(text=text):
                    answer.reasoning += text
                    yield chunk({"reasoning_content": text})
                case TextDelta(text=text):
                    answer.text += text
                    yield chunk({"content": text})
                case TextCitation():
                    answer.cite(event)
                case StepReasoningDone(step=step):
                    answer.close_reasoning(step)
                    yield chunk({}, server_tool_event={"type": "step_reasoning_done", "step": step})
                case WebCallStarted(call=call):
                    entry = answer.started(call)
                    yield chunk(
                        {},
                        server_tool_event={
                            "type": "call_started",
                            "step": call.step,
                            "call": entry,
                        },
                    )
                case WebCallCompleted(call=call, outcome=outcome):
                    public = answer.completed(call, outcome)
                    yield chunk(
                        {},
                        server_tool_event={
                            "type": "call_completed",
                            "step": call.step,
                            "call": public,
                        },
                    )
                case ClientToolCall():
                    yield chunk({"tool_calls": [answer.tool_call(event)]})
                case Finished(stop_reason=reason, usage=usage):
                    delta: dict[str, Any] = {}
                    if answer.steps:
                        delta["server_tool_calls"] = answer.server_tool_calls()
                    if answer.annotations:
                        delta["annotations"] = answer.annotations
                    last = {
                        **head,
                        "choices": [{"index": 0, "delta": delta, "finish_reason": _FINISH[reason]}],
                        "usage": usage_json(usage),
                    }
                    yield sse_frame(_dumps(last))
                    yield "data: [DONE]\n\n"
                    return
                case Failed(message=message, usage=usage):
                    failure = {
                        **head,
                        "choices": [],
                        "error": {"message": message, "type": "api_error", "code": "server_error"},
                        "usage": usage_json(usage),
                    }
                    yield sse_frame(_dumps(failure))
                    return
                case _:
                    assert_never(event)

    async def body(self, turn: Turn, events: AsyncIterator[Event]) -> dict[str, Any]:
        answer = _Answer(turn.thinking)
        finish: str = "stop"
        usage = Usage()
        async for event in events:
            match event:
                case ReasoningDelta(text=text):
                    answer.reasoning += text
                case TextDelta(text=text):
                    answer.text += text
                case TextCitation():
                    answer.cite(event)
                case StepReasoningDone(step=step):
                    answer.close_reasoning(step)
                case WebCallStarted(call=call):
                    answer.started(call)
                case WebCallCompleted(call=call, outcome=outcome):
                    answer.completed(call, outcome)
                case ClientToolCall():
                    answer.tool_call(event)
                case Finished(stop_reason=reason, usage=usage):
                    finish = _FINISH[reason]
                case Failed(message=reason_text, usage=usage):
                    return {
                        "error": {
                            "message": reason_text,
                            "type": "api_error",
                            "code": "server_error",
                        },
                        "usage": usage_json(usage),
                    }
                case _:
                    assert_never(event)
        message: dict[str, Any] = {"role": "assistant", "content": answer.text}
        if turn.thinking or answer.reasoning:
            message["reasoning_content"] = answer.reasoning
        if answer.annotations:
            message["annotations"] = answer.annotations
        if answer.steps:
            message["server_tool_calls"] = answer.server_tool_calls()
        if answer.tool_calls:
            message["tool_calls"] = [
                {k: v for k, v in call.items() if k != "index"} for call in answer.tool_calls
            ]
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": turn.model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            "usage": usage_json(usage),
        }
