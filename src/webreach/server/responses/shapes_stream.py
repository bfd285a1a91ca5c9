"""The events of a Responses stream as the server writes them, declared once.

TypedDicts, as in ``shapes_out``: mypy checks each event the renderer builds; each mirrors
the official SDK's event of the same type, field for field in wire order.
"""

from typing import Literal, TypedDict

from ..core.turn.shape import JSON
from .shapes_out import OutputItem, OutputText, ReasoningText, Response, SummaryText, UrlCitation

__all__ = [
    "AnnotationAdded",
    "CallEvent",
    "ContentPartEvent",
    "FunctionArgumentsDone",
    "InputDelta",
    "InputDone",
    "ItemEvent",
    "OutputTextDone",
    "ReasoningSummaryDone",
    "ReasoningTextDone",
    "ResponseEvent",
    "StreamEvent",
    "SummaryPartEvent",
]


class ResponseEvent(TypedDict):
    type: Literal[
        "response.created",
        "response.in_progress",
        "response.completed",
        "response.failed",
        "response.incomplete",
    ]
    sequence_number: int
    response: Response


class ItemEvent(TypedDict):
    type: Literal["response.output_item.added", "response.output_item.done"]
    sequence_number: int
    output_index: int
    item: OutputItem


class ContentPartEvent(TypedDict):
    type: Literal["response.content_part.added", "response.content_part.done"]
    sequence_number: int
    item_id: str
    output_index: int
    content_index: int
    part: OutputText | ReasoningText


class SummaryPartEvent(TypedDict):
    type: Literal["response.reasoning_summary_part.added", "response.reasoning_summary_part.done"]
    sequence_number: int
    item_id: str
    output_index: int
    summary_index: int
    part: SummaryText


class OutputTextDone(TypedDict):
    type: Literal["response.output_text.done"]
    sequence_number: int
    item_id: str
    output_index: int
    content_index: int
    text: str
    logprobs: list[JSON]


class ReasoningTextDone(TypedDict):
    type: Literal["response.reasoning_text.done"]
    sequence_number: int
    item_id: str
    output_index: int
    content_index: int
    text: str


class ReasoningSummaryDone(TypedDict):
    type: Literal["response.reasoning_summary_text.done"]
    sequence_number: int
    item_id: str
    output_index: int
    summary_index: int
    text: str


class AnnotationAdded(TypedDict):
    type: Literal["response.output_text.annotation.added"]
    sequence_number: int
    item_id: str
    output_index: int
    content_index: int
    annotation_index: int
    annotation: UrlCitation


class CallEvent(TypedDict):
    type: Literal[
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
    ]
    sequence_number: int
    item_id: str
    output_index: int


class InputDelta(TypedDict):
    type: Literal["response.function_call_arguments.delta", "response.custom_tool_call_input.delta"]
    sequence_number: int
    item_id: str
    output_index: int
    delta: str


class FunctionArgumentsDone(TypedDict):
    type: Literal["response.function_call_arguments.done"]
    sequence_number: int
    item_id: str
    output_index: int
    arguments: str
    name: str


class InputDone(TypedDict):
    type: Literal["response.custom_tool_call_input.done"]
    sequence_number: int
    item_id: str
    output_index: int
    input: str


StreamEvent = (
    ResponseEvent
    | ItemEvent
    | ContentPartEvent
    | SummaryPartEvent
    | OutputTextDone
    | ReasoningTextDone
    | ReasoningSummaryDone
    | AnnotationAdded
    | CallEvent
    | InputDelta
    | FunctionArgumentsDone
    | InputDone
)
"""Every event the stream writes as a dict; the text and reasoning deltas (the hot path) are
formatted straight to their frames by ``Frames._emit_delta``, in the SDK's own shapes."""
