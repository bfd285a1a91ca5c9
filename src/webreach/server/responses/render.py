"""The loop's events → Responses output items, SSE frames and the final response object.

One renderer serves both the stream and the non-streaming body, so the two always agree. The
ordering rules the official SDK's stream helper depends on live here: ``response.created``
first, one ``output_item.added`` and one ``output_item.done`` per ``output_index``, a content
part before any text delta, and annotations carried on the finished items.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import assert_never

from ..core.display import url_source
from ..core.events import (
    CallFailed,
    ClientToolCall,
    Event,
    Failed,
    Finished,
    Outcome,
    PageOutcome,
    ReasoningDelta,
    SearchOutcome,
    StepReasoningDone,
    TextCitation,
    TextDelta,
    Usage,
    WebCall,
    WebCallCompleted,
    WebCallStarted,
)
from ..core.turn import JSON, Turn
from .frames import Frames
from .shapes import (
    action_shape,
    base_response,
    reasoning_part,
    summary_part,
    text_part,
    tool_search_item,
    usage_shape,
)

__all__ = ["ResponseRenderer"]


@dataclass(slots=True)
class _Reasoning:
    index: int
    id: str
    chunks: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Message:
    index: int
    id: str
    offset: int
    """Code points of the whole answer before this message's text."""
    chunks: list[str] = field(default_factory=list)
    length: int = 0
    annotations: list[JSON] = field(default_factory=list)


class ResponseRenderer(Frames):
    """Feeds on events; collects frames (when streaming) and the output items of the response."""

    def __init__(self, turn: Turn, *, streaming: bool) -> None:
        super().__init__(streaming=streaming)
        self._hex = uuid.uuid4().hex
        self._reasoning: _Reasoning | None = None
        self._message: _Message | None = None
        self._messages: list[_Message] = []
        self._calls: dict[str, tuple[int, JSON]] = {}
        self._answer_length = 0
        self.done = False
        self._titled = turn.extensions.title
        self.response = base_response(turn, f"resp_{self._hex}")

    def start(self) -> str:
        """``response.created`` then ``response.in_progress``: the stream's first frames."""
        for kind in ("response.created", "response.in_progress"):
            self._emit(kind, {"response": self.response})
        return self._take()

    def feed(self, event: Event) -> str:
        if self.done:
            return ""
        match event:
            case TextDelta(text=text):
                self._text(text)
            case ReasoningDelta(text=text):
                self._reason(text)
            case TextCitation():
                self._cite(event)
            case StepReasoningDone():
                self._close_reasoning()
            case WebCallStarted(call=call):
                self._call_started(call)
            case WebCallCompleted(call=call, outcome=outcome):
                self._call_completed(call, outcome)
            case ClientToolCall():
                self._client_call(event)
            case Finished(stop_reason=reason, usage=usage, title=title):
                if self._titled:
                    self.response["title"] = title
                if reason == "max_tokens":
                    self._finish("incomplete", usage, incomplete="max_output_tokens")
                elif reason == "refusal":
                    self._finish("incomplete", usage, incomplete="content_filter")
                else:
                    self._finish("completed", usage)
            case Failed(message=message, usage=usage):
                self._finish("failed", usage, error=message)
            case _:
                assert_never(event)
        return self._take()

    def body(self) -> JSON:
        return self.response

    # --- reasoning and text ----------------------------------------------------------------

    def _reason(self, text: str) -> None:
        if not text:
            return
        if self._reasoning is None:
            self._close_message("completed")
            item_id = f"rs_{self._hex}_{len(self._items)}"
            index = self._add_item(
                {
                    "id": item_id,
                    "type": "reasoning",
                    "summary": [],
                    "content": [],
                    "status": "in_progress",
                }
            )
            self._emit_part("response.content_part.added", item_id, index, reasoning_part(""))
            self._emit_summary("response.reasoning_summary_part.added", item_id, index, "")
            self._reasoning = _Reasoning(index, item_id)
        reasoning = self._reasoning
        reasoning.chunks.append(text)
        self._emit_delta("response.reasoning_text.delta", reasoning.id, reasoning.index, text, "")
        self._emit_delta(
            "response.reasoning_summary_text.delta",
            reasoning.id,
            reasoning.index,
            text,
            "",
            "summary_index",
        )

    def _emit_summary(self, kind: str, item_id: str, index: int, text: str) -> None:
        """Reasoning is also the item's summary: clients show ``summary``, not ``content``."""
        part = summary_part(text)
        self._emit(
            kind, {"item_id": item_id, "output_index": index, "summary_index": 0, "part": part}
        )

    def _close_reasoning(self) -> None:
        reasoning, self._reasoning = self._reasoning, None
        if reasoning is None:
            return
        text = "".join(reasoning.chunks)
        common = {"item_id": reasoning.id, "output_index": reasoning.index, "content_index": 0}
        self._emit("response.reasoning_text.done", {**common, "text": text})
        part = reasoning_part(text)
        self._emit_part("response.content_part.done", reasoning.id, reasoning.index, part)
        summary = {"item_id": reasoning.id, "output_index": reasoning.index, "summary_index": 0}
        self._emit("response.reasoning_summary_text.done", {**summary, "text": text})
        self._emit_summary(
            "response.reasoning_summary_part.done", reasoning.id, reasoning.index, text
        )
        item: JSON = {
            "id": reasoning.id,
            "type": "reasoning",
            "summary": [summary_part(text)],
            "content": [part],
            "status": "completed",
        }
        self._done_item(reasoning.index, item)

    def _text(self, text: str) -> None:
        if not text:
            return
        if self._message is None:
            self._close_reasoning()
            item_id = f"msg_{self._hex}_{len(self._items)}"
            index = self._add_item(
                {
                    "id": item_id,
                    "type": "message",
                    "role": "assistant",
                    "status": "in_progress",
                    "content": [],
                }
            )
            self._emit_part("response.content_part.added", item_id, index, text_part("", []))
            self._message = _Message(index, item_id, self._answer_length)
            self._messages.append(self._message)
        message = self._message
        message.chunks.append(text)
        length = len(text)
        message.length += length
        self._answer_length += length
        self._emit_delta(
            "response.output_text.delta", message.id, message.index, text, ',"logprobs":[]'
        )

    def _cite(self, citation: TextCitation) -> None:
        message = next(
            (m for m in reversed(self._messages) if m.offset < citation.end or m.offset == 0),
            None,
        )
        if message is None:
            return
        annotation = {
            "type": "url_citation",
            "url": citation.url,
            "title": citation.title or "",
            "start_index": min(max(citation.start - message.offset, 0), message.length),
            "end_index": min(max(citation.end - message.offset, 0), message.length),
        }
        message.annotations.append(annotation)
        self._emit(
            "response.output_text.annotation.added",
            {
                "item_id": message.id,
                "output_index": message.index,
                "content_index": 0,
                "annotation_index": len(message.annotations) - 1,
                "annotation": annotation,
            },
        )

    def _close_message(self, status: str) -> None:
        message, self._message = self._message, None
        if message is None:
            return
        text = "".join(message.chunks)
        common = {"item_id": message.id, "output_index": message.index, "content_index": 0}
        self._emit("response.output_text.done", {**common, "text": text, "logprobs": []})
        part = text_part(text, message.annotations)
        self._emit_part("response.content_part.done", message.id, message.index, part)
        item: JSON = {
            "id": message.id,
            "type": "message",
            "role": "assistant",
            "status": status,
            "content": [part],
        }
        self._done_item(message.index, item)

    def _close_open(self, message_status: str) -> None:
        self._close_reasoning()
        self._close_message(message_status)

    # --- calls -----------------------------------------------------------------------------

    def _call_started(self, call: WebCall) -> None:
        self._close_open("completed")
        item: JSON = {
            "id": call.id,
            "type": "web_search_call",
            "status": "in_progress",
            "kind": call.kind,
            "action": action_shape(call.action),
        }
        index = self._add_item(item)
        self._calls[call.id] = (index, item)
        for kind in ("response.web_search_call.in_progress", "response.web_search_call.searching"):
            self._emit(kind, {"item_id": call.id, "output_index": index})

    def _call_completed(self, call: WebCall, outcome: Outcome) -> None:
        if call.id not in self._calls:
            self._call_started(call)
        index, started = self._calls.pop(call.id)
        action = action_shape(call.action)
        item: JSON = {**started, "action": action, "status": "completed"}
        match outcome:
            case SearchOutcome(sources=sources):
                action["sources"] = [url_source(s) for s in sources]
            case PageOutcome():
                item["page"] = {
                    "url": outcome.url,
                    "title": outcome.title,
                    "published_at": outcome.published_at,
                }
                if outcome.signature:
                    item["signature"] = outcome.signature
            case CallFailed(error_code=code):
                item["status"] = "failed"
                item["error"] = {"code": code}
            case _:
                assert_never(outcome)
        self._emit(
            "response.web_search_call.completed", {"item_id": call.id, "output_index": index}
        )
        self._done_item(index, item)

    def _fail_open_calls(self) -> None:
        for call_id in list(self._calls):
            index, started = self._calls.pop(call_id)
            item = {**started, "status": "failed", "error": {"code": "unavailable"}}
            self._emit(
                "response.web_search_call.completed", {"item_id": call_id, "output_index": index}
            )
            self._done_item(index, item)

    def _client_call(self, call: ClientToolCall) -> None:
        """A ``function_call`` item (with its namespace), a ``custom_tool_call`` carrying the
        free-form input, with the argument events each has, or a ``tool_search_call``."""
        self._close_open("completed")
        if call.kind == "tool_search":
            item = tool_search_item(call, f"tsc_{self._hex}_{len(self._items)}")
            self._done_item(self._add_item(item), item)
            return
        custom = call.kind == "custom"
        item_id = f"{'ctc' if custom else 'fc'}_{self._hex}_{len(self._items)}"
        field, event = (
            ("input", "custom_tool_call_input")
            if custom
            else ("arguments", "function_call_arguments")
        )
        started: JSON = {
            "id": item_id,
            "type": "custom_tool_call" if custom else "function_call",
            "call_id": call.id,
            "name": call.name,
            field: "",
            "status": "in_progress",
        }
        if call.namespace is not None:
            started["namespace"] = call.namespace
        index = self._add_item(started)
        common = {"item_id": item_id, "output_index": index}
        self._emit(f"response.{event}.delta", {**common, "delta": call.arguments})
        done: JSON = {**common, field: call.arguments}
        if not custom:
            done["name"] = call.name
        self._emit(f"response.{event}.done", done)
        self._done_item(index, {**started, field: call.arguments, "status": "completed"})

    # --- the end ---------------------------------------------------------------------------

    def _finish(
        self, status: str, usage: Usage, *, incomplete: str | None = None, error: str | None = None
    ) -> None:
        self._close_open("incomplete" if status != "completed" else "completed")
        self._fail_open_calls()
        output = [item for item in self._items if item is not None]
        if incomplete == "content_filter":
            output = [item for item in output if item["type"] == "web_search_call"]
        response = self.response
        response["status"] = status
        response["output"] = output
        response["usage"] = usage_shape(usage)
        if status == "completed":
            response["completed_at"] = int(time.time())
        if incomplete is not None:
            response["incomplete_details"] = {"reason": incomplete}
        if error is not None:
            response["error"] = {"code": "server_error", "message": error}
        self.done = True
        self._emit(f"response.{status}", {"response": response})
