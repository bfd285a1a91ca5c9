"""The frames of a Responses stream: numbered SSE events, and the output items they announce.

The renderer behind both the stream and the non-streaming body emits every event; only a
stream writes them out (the ``sequence_number`` counts them either way).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..core.turn.events import ClientToolArguments, ClientToolCall
from ..core.wire.framing import dumps, sse_frame
from .shapes import summary_part
from .shapes_out import (
    CustomToolCall,
    FunctionCall,
    OutputItem,
    OutputText,
    ReasoningText,
    WebSearchCall,
)
from .shapes_stream import StreamEvent

__all__ = ["Frames"]

_CallStage = Literal[
    "response.web_search_call.in_progress",
    "response.web_search_call.searching",
    "response.web_search_call.completed",
]


@dataclass(slots=True)
class _Told:
    """A ``function_call`` item whose arguments are streaming in."""

    index: int
    item: FunctionCall
    arguments: str = ""


class Frames:
    """The output items of a response, and the stream's frames as they are emitted."""

    def __init__(self, *, streaming: bool) -> None:
        self._frames = streaming
        self._out: list[str] = []
        self._seq = 0
        self._items: list[OutputItem | None] = []
        """Each output item once done; None while it is still being written."""
        self._told: dict[str, _Told] = {}
        """The function calls being streamed, by call id."""

    def _emit(self, event: StreamEvent) -> None:
        """``event`` carries the next ``sequence_number`` (``self._seq``) and is counted here."""
        if self._frames:
            self._out.append(self._framed(event["type"], dumps(event)))
        self._seq += 1

    def _emit_delta(
        self,
        kind: str,
        item_id: str,
        index: int,
        text: str,
        tail: str,
        position: str = "content_index",
    ) -> None:
        """Hot path: text and reasoning deltas are formatted without building a dict."""
        if self._frames:
            self._out.append(
                self._framed(
                    kind,
                    f'{{"type":"{kind}","sequence_number":{self._seq},"item_id":"{item_id}",'
                    f'"output_index":{index},"{position}":0,"delta":{dumps(text)}{tail}}}',
                )
            )
        self._seq += 1

    def _framed(self, kind: str, payload: str) -> str:
        """One event as it goes on the wire: an SSE frame (the WebSocket mode frames its own)."""
        return sse_frame(payload, kind)

    def _take(self) -> str:
        out = "".join(self._out)
        self._out.clear()
        return out

    def _add_item(self, item: OutputItem) -> int:
        index = len(self._items)
        self._items.append(None)
        self._emit(
            {
                "type": "response.output_item.added",
                "sequence_number": self._seq,
                "output_index": index,
                "item": item,
            }
        )
        return index

    def _done_item(self, index: int, item: OutputItem) -> None:
        self._items[index] = item
        self._emit(
            {
                "type": "response.output_item.done",
                "sequence_number": self._seq,
                "output_index": index,
                "item": item,
            }
        )

    def _emit_part(
        self,
        kind: Literal["response.content_part.added", "response.content_part.done"],
        item_id: str,
        index: int,
        part: OutputText | ReasoningText,
    ) -> None:
        self._emit(
            {
                "type": kind,
                "sequence_number": self._seq,
                "item_id": item_id,
                "output_index": index,
                "content_index": 0,
                "part": part,
            }
        )

    def _emit_summary(
        self,
        kind: Literal[
            "response.reasoning_summary_part.added", "response.reasoning_summary_part.done"
        ],
        item_id: str,
        index: int,
        text: str,
    ) -> None:
        """Reasoning is also the item's summary: clients show ``summary``, not ``content``."""
        self._emit(
            {
                "type": kind,
                "sequence_number": self._seq,
                "item_id": item_id,
                "output_index": index,
                "summary_index": 0,
                "part": summary_part(text),
            }
        )

    def _call_event(self, kind: _CallStage, item_id: str, index: int) -> None:
        self._emit(
            {"type": kind, "sequence_number": self._seq, "item_id": item_id, "output_index": index}
        )

    def _call_done(self, call_id: str, index: int, item: WebSearchCall) -> None:
        self._call_event("response.web_search_call.completed", call_id, index)
        self._done_item(index, item)

    def _call_arguments(self, told: ClientToolArguments, item_id: str) -> None:
        """The arguments of a ``function_call`` as they arrive: the item opens with the first."""
        open_call = self._told.get(told.id)
        if open_call is None:
            open_call = self._open_call(item_id, told.id, told.name, told.namespace)
            self._told[told.id] = open_call
        self._arguments_delta(open_call, told.delta)

    def _open_call(self, item_id: str, call_id: str, name: str, namespace: str | None) -> _Told:
        """A ``function_call`` item opened in progress, its arguments still to come."""
        started: FunctionCall = {
            "id": item_id,
            "type": "function_call",
            "call_id": call_id,
            "name": name,
            "arguments": "",
            "status": "in_progress",
        }
        if namespace is not None:
            started["namespace"] = namespace
        return _Told(self._add_item(started), started)

    def _arguments_delta(self, open_call: _Told, delta: str) -> None:
        if not delta:
            return
        open_call.arguments += delta
        self._emit(
            {
                "type": "response.function_call_arguments.delta",
                "sequence_number": self._seq,
                "item_id": open_call.item["id"],
                "output_index": open_call.index,
                "delta": delta,
            }
        )

    def _close_told(self) -> None:
        """Calls whose arguments were still streaming when the response ended otherwise."""
        for open_call in self._told.values():
            item: FunctionCall = {
                **open_call.item,
                "arguments": open_call.arguments,
                "status": "incomplete",
            }
            self._done_item(open_call.index, item)
        self._told.clear()

    def _function_call(self, call: ClientToolCall, item_id: str) -> None:
        """A ``function_call`` item, with its argument events (those not streamed already)."""
        open_call = self._told.pop(call.id, None)
        if open_call is None:
            open_call = self._open_call(item_id, call.id, call.name, call.namespace)
        told = open_call.arguments
        if call.arguments.startswith(told):
            self._arguments_delta(open_call, call.arguments[len(told) :])
        started, index, item_id = open_call.item, open_call.index, open_call.item["id"]
        self._emit(
            {
                "type": "response.function_call_arguments.done",
                "sequence_number": self._seq,
                "item_id": item_id,
                "output_index": index,
                "arguments": call.arguments,
                "name": call.name,
            }
        )
        self._done_item(index, {**started, "arguments": call.arguments, "status": "completed"})

    def _custom_call(self, call: ClientToolCall, item_id: str) -> None:
        """A ``custom_tool_call`` item, with its input events."""
        started: CustomToolCall = {
            "id": item_id,
            "type": "custom_tool_call",
            "call_id": call.id,
            "name": call.name,
            "input": "",
            "status": "in_progress",
        }
        if call.namespace is not None:
            started["namespace"] = call.namespace
        index = self._add_item(started)
        self._emit(
            {
                "type": "response.custom_tool_call_input.delta",
                "sequence_number": self._seq,
                "item_id": item_id,
                "output_index": index,
                "delta": call.arguments,
            }
        )
        self._emit(
            {
                "type": "response.custom_tool_call_input.done",
                "sequence_number": self._seq,
                "item_id": item_id,
                "output_index": index,
                "input": call.arguments,
            }
        )
        self._done_item(index, {**started, "input": call.arguments, "status": "completed"})
