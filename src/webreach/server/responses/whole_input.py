"""A Responses input read whole: one pydantic pass over every item and content part.

A long history (a coding agent's hundred items) is read once per request, so the items are one
discriminated union read in a single call rather than a head and a shape per item. It reads the
shapes of ``shapes_in``; an input with any wrong item is read item by item instead (by
``request``), so the refusal names the first wrong item in the words it always had.
"""

from typing import Annotated

from pydantic import Discriminator, Strict, StrictStr, Tag, TypeAdapter, ValidationError

from .shapes_in import (
    AdditionalToolsItem,
    CustomToolCallItem,
    CustomToolOutputItem,
    FunctionCallItem,
    FunctionOutputItem,
    ImagePart,
    MessageItem,
    ReasoningInput,
    RefusalPart,
    TextPart,
    ToolSearchCallItem,
    ToolSearchOutputItem,
    WebSearchCallItem,
)

__all__ = [
    "InputItem",
    "InputMessage",
    "Part",
    "item_kind",
    "read_items",
]


def item_kind(value: object) -> str | None:
    """An input item's kind, as :attr:`ItemHead.kind` tells it (None when it has none)."""
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind is None:
        return "message" if "role" in value else None
    return kind if isinstance(kind, str) else None


_TEXT_KINDS = frozenset(("input_text", "output_text", "text"))


def _part_kind(value: object) -> str | None:
    kind = value.get("type") if isinstance(value, dict) else None
    if not isinstance(kind, str):
        return None
    return "text" if kind in _TEXT_KINDS else kind


Part = Annotated[
    Annotated[TextPart, Tag("text")]
    | Annotated[RefusalPart, Tag("refusal")]
    | Annotated[ImagePart, Tag("input_image")],
    Discriminator(_part_kind),
]


class InputMessage(MessageItem):
    """A message whose content parts are read with it (``MessageItem`` leaves them raw)."""

    content: StrictStr | Annotated[list[Part], Strict()] | None = None


InputItem = Annotated[
    Annotated[InputMessage, Tag("message")]
    | Annotated[FunctionCallItem, Tag("function_call")]
    | Annotated[CustomToolCallItem, Tag("custom_tool_call")]
    | Annotated[FunctionOutputItem, Tag("function_call_output")]
    | Annotated[CustomToolOutputItem, Tag("custom_tool_call_output")]
    | Annotated[ToolSearchCallItem, Tag("tool_search_call")]
    | Annotated[ToolSearchOutputItem, Tag("tool_search_output")]
    | Annotated[AdditionalToolsItem, Tag("additional_tools")]
    | Annotated[WebSearchCallItem, Tag("web_search_call")]
    | Annotated[ReasoningInput, Tag("reasoning")],
    Discriminator(item_kind),
]
"""Every input item the server takes, by its kind; an ``item_reference`` or an unknown kind is
no member, so the list it is in is read item by item (and refused in that item's words)."""

_INPUT = TypeAdapter(list[InputItem])


def read_items(items: list[object]) -> list[InputItem] | None:
    """The whole input read in one pass, or None when any item is wrong: the caller then reads
    it item by item, so the refusal names the first wrong item as it always has."""
    try:
        return _INPUT.validate_python(items)
    except ValidationError:
        return None
