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
from typing import Literal, assert_never

from ..core.turn import events
from ..core.turn.shape import Turn
from ..core.wire.display import url_source
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
from .shapes_out import (
    ItemStatus,
    OutputMessage,
    ReasoningItem,
    Response,
    UrlCitation,
    WebSearchCall,
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
    annotations: list[UrlCitation] = field(default_factory=list)


class ResponseRenderer(Frames):
    """Feeds on events; collects frames (when streaming) and the output items of the response."""

    def __init__(self, turn: Turn, *, streaming: bool) -> None:
        super().__init__(streaming=streaming)
        self._hex = uuid.uuid4().hex
        self._reasoning: _Reasoning | None = None
        self._message: _Message | None = None
        self._messages: list[_Message] = []
        self._calls: dict[str, tuple[int, WebSearchCall]] = {}
        self._answer_length = 0
        self.done = False
        self._titled = turn.extensions.title
        self.response = base_response(turn, f"resp_{self._hex}")

    def start(self) -> str:
        """``response.created`` then ``response.in_progress``: the stream's first frames."""
        response = self.response
        self._emit({"type": "response.created", "sequence_number": self._seq, "response": response})
        self._emit(
            {"type": "response.in_progress", "sequence_number": self._seq, "response": response}
        )
        return self._take()

    def feed(self, event: events.Event) -> str:
        if self.done:
            return ""
        match event:
            case events.TextDelta(text=text):
                self._text(text)
            case events.ReasoningDelta(text=text):
                self._reason(text)
            case events.TextCitation():
                self._cite(event)
            case events.StepReasoningDone():
                self._close_reasoning()
            case events.WebCallStarted(call=call):
                self._call_started(call)
            case events.WebCallCompleted(call=call, outcome=outcome):
                self._call_completed(call, outcome)
            case events.ClientToolArguments():
                self._close_open("completed")
                self._call_arguments(event, f"fc_{self._hex}_{len(self._items)}")
            case events.ClientToolCall():
                self._client_call(event)
            case events.Finished(stop_reason=reason, usage=usage, title=title):
                if self._titled:
                    self.response["title"] = title
                if reason == "max_tokens":
                    self._finish("incomplete", usage, incomplete="max_output_tokens")
                elif reason == "refusal":
                    self._finish("incomplete", usage, incomplete="content_filter")
                else:
                    self._finish("completed", usage)
            case events.Failed(message=message, usage=usage):
                self._finish("failed", usage, error=message)
            case events.FirstStepUsage():
                pass
            case _:
                assert_never(event)
        return self._take()

    def body(self) -> Response:
        return self.response

    # --- reasoning and text ----------------------------------------------------------------

    def _reason(self, text: str) -> None:
        if not text:
            return
        if self._reasoning is None:
            self._close_message("completed")
            item_id = f"rs_{self._hex}_{len(self._items)}"
            started: ReasoningItem = {
                "id": item_id,
                "type": "reasoning",
                "summary": [],
                "content": [],
                "status": "in_progress",
            }
            index = self._add_item(started)
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

    def _close_reasoning(self) -> None:
        reasoning, self._reasoning = self._reasoning, None
        if reasoning is None:
            return
        text = "".join(reasoning.chunks)
        item_id, index = reasoning.id, reasoning.index
        self._emit(
            {
                "type": "response.reasoning_text.done",
                "sequence_number": self._seq,
                "item_id": item_id,
                "output_index": index,
                "content_index": 0,
                "text": text,
            }
        )
        part = reasoning_part(text)
        self._emit_part("response.content_part.done", item_id, index, part)
        self._emit(
            {
                "type": "response.reasoning_summary_text.done",
                "sequence_number": self._seq,
                "item_id": item_id,
                "output_index": index,
                "summary_index": 0,
                "text": text,
            }
        )
        self._emit_summary("response.reasoning_summary_part.done", item_id, index, text)
        item: ReasoningItem = {
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
            started: OutputMessage = {
                "id": item_id,
                "type": "message",
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            }
            index = self._add_item(started)
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

    def _cite(self, citation: events.TextCitation) -> None:
        message = next(
            (m for m in reversed(self._messages) if m.offset < citation.end or m.offset == 0),
            None,
        )
        if message is None:
            return
        annotation: UrlCitation = {
            "type": "url_citation",
            "url": citation.url,
            "title": citation.title or "",
            "start_index": min(max(citation.start - message.offset, 0), message.length),
            "end_index": min(max(citation.end - message.offset, 0), message.length),
        }
        message.annotations.append(annotation)
        self._emit(
            {
                "type": "response.output_text.annotation.added",
                "sequence_number": self._seq,
                "item_id": message.id,
                "output_index": message.index,
                "content_index": 0,
                "annotation_index": len(message.annotations) - 1,
                "annotation": annotation,
            }
        )

    def _close_message(self, status: ItemStatus) -> None:
        message, self._message = self._message, None
        if message is None:
            return
        text = "".join(message.chunks)
        self._emit(
            {
                "type": "response.output_text.done",
                "sequence_number": self._seq,
                "item_id": message.id,
                "output_index": message.index,
                "content_index": 0,
                "text": text,
                "logprobs": [],
            }
        )
        part = text_part(text, message.annotations)
        self._emit_part("response.content_part.done", message.id, message.index, part)
        item: OutputMessage = {
            "id": message.id,
            "type": "message",
            "role": "assistant",
            "status": status,
            "content": [part],
        }
        self._done_item(message.index, item)

    def _close_open(self, message_status: ItemStatus) -> None:
        self._close_reasoning()
        self._close_message(message_status)

    # --- calls -----------------------------------------------------------------------------

    def _call_started(self, call: events.WebCall) -> None:
        self._close_open("completed")
        item: WebSearchCall = {
            "id": call.id,
            "type": "web_search_call",
            "status": "in_progress",
            "kind": call.kind,
            "action": action_shape(call.action),
        }
        index = self._add_item(item)
        self._calls[call.id] = (index, item)
        self._call_event("response.web_search_call.in_progress", call.id, index)
        self._call_event("response.web_search_call.searching", call.id, index)

    def _call_completed(self, call: events.WebCall, outcome: events.Outcome) -> None:
        if call.id not in self._calls:
            self._call_started(call)
        index, started = self._calls.pop(call.id)
        action = action_shape(call.action)
        item: WebSearchCall = {**started, "action": action, "status": "completed"}
        match outcome:
            case events.SearchOutcome(sources=sources):
                if action["type"] == "search":
                    action["sources"] = [url_source(s) for s in sources]
            case events.PageOutcome():
                item["page"] = {
                    "url": outcome.url,
                    "title": outcome.title,
                    "published_at": outcome.published_at,
                }
                if outcome.signature:
                    item["signature"] = outcome.signature
            case events.CallFailed(error_code=code):
                item["status"] = "failed"
                item["error"] = {"code": code}
            case _:
                assert_never(outcome)
        self._call_done(call.id, index, item)

    def _fail_open_calls(self) -> None:
        for call_id in list(self._calls):
            index, started = self._calls.pop(call_id)
            item: WebSearchCall = {**started, "status": "failed", "error": {"code": "unavailable"}}
            self._call_done(call_id, index, item)

    def _client_call(self, call: events.ClientToolCall) -> None:
        """A ``function_call`` item (with its namespace), a ``custom_tool_call`` carrying the
        free-form input, with the argument events each has, or a ``tool_search_call``."""
        self._close_open("completed")
        if call.kind == "tool_search":
            found = tool_search_item(call, f"tsc_{self._hex}_{len(self._items)}")
            self._done_item(self._add_item(found), found)
        elif call.kind == "custom":
            self._custom_call(call, f"ctc_{self._hex}_{len(self._items)}")
        else:
            self._function_call(call, f"fc_{self._hex}_{len(self._items)}")

    # --- the end ---------------------------------------------------------------------------

    def _finish(
        self,
        status: _End,
        usage: events.Usage,
        *,
        incomplete: Literal["max_output_tokens", "content_filter"] | None = None,
        error: str | None = None,
    ) -> None:
        self._close_open("incomplete" if status != "completed" else "completed")
        self._fail_open_calls()
        self._close_told()
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
        self._emit(
            {"type": _END_EVENTS[status], "sequence_number": self._seq, "response": response}
        )


_End = Literal["completed", "failed", "incomplete"]
_END_EVENTS: dict[_End, Literal["response.completed", "response.failed", "response.incomplete"]] = {
    "completed": "response.completed",
    "failed": "response.failed",
    "incomplete": "response.incomplete",
}
