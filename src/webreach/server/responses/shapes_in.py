"""The OpenAI Responses request as the server reads it: the body, its input items and its tools.

Fields the server only passes on or echoes are checked as the response will repeat them (a
``metadata`` value that is not a string would make the echo one the SDK refuses). Input items
and tools are read one kind at a time, each with its own shape: where a field of the wrong type
has always been ignored (an ``arguments`` that is not a string, say) its type says so
(:data:`Loose`), so the conversion reads models, never raw dicts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    StrictStr,
    StringConstraints,
    ValidationError,
)

from ..core.turn.errors import RequestError
from ..core.wire.fields import (
    JSON,
    Boolean,
    ModelName,
    NonEmptyString,
    Number,
    PositiveInt,
    Request,
    String,
    StringList,
    StringOrObject,
    checked,
    when_missing,
)

__all__ = [
    "AdditionalToolsItem",
    "CustomTool",
    "CustomToolCallItem",
    "CustomToolOutputItem",
    "DomainFilters",
    "FunctionCallItem",
    "FunctionOutputItem",
    "FunctionTool",
    "Grammar",
    "ImagePart",
    "ItemHead",
    "MessageItem",
    "NamespaceTool",
    "PartHead",
    "ReasoningInput",
    "ReasoningParam",
    "RefusalPart",
    "ResponsesRequest",
    "TextParam",
    "TextPart",
    "ToolChoiceParam",
    "ToolHead",
    "ToolSearchCallItem",
    "ToolSearchOutputItem",
    "ToolSearchTool",
    "WebSearchCallItem",
    "WebSearchTool",
    "read",
]

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


def read(shape: type[M], value: object, problem: str, param: str = "input") -> M:
    """``value`` as ``shape``, or ``problem`` as the 400: input items and tools are refused in
    the words the server has always used for them, whatever field was wrong."""
    try:
        return shape.model_validate(value)
    except ValidationError:
        raise RequestError(problem, param=param) from None


def _loose(kind: type[T] | tuple[type, ...], test: Callable[[T], bool] = bool) -> BeforeValidator:
    def keep(value: object) -> object:
        return value if isinstance(value, kind) and test(value) else None  # type: ignore[arg-type]

    return BeforeValidator(keep)


Loose = Annotated[str | None, _loose(str)]
"""A string, or None when the field is missing, empty or not a string."""
LooseAny = Annotated[str | None, _loose(str, lambda _: True)]
"""A string (empty included), or None when missing or not a string."""
LooseObject = Annotated[JSON | None, _loose(dict)]
"""A non-empty object, or None."""
LooseBool = Annotated[bool | None, _loose(bool, lambda _: True)]
Named = NonEmptyString
Id = String
List = Annotated[list[object], checked(lambda v: isinstance(v, list), "must be an array")]


def _one_of(*values: str) -> Callable[[object], bool]:
    return lambda v: v is None or v in values


def _choices(*values: str) -> str:
    named = [f"`{value}`" for value in values]
    return f"must be {', '.join(named[:-1])} or {named[-1]}"


# --- the body ------------------------------------------------------------------------------

Metadata = Annotated[dict[str, String], checked(lambda v: isinstance(v, dict), "must be an object")]
Truncation = Annotated[
    str | None, checked(_one_of("auto", "disabled"), _choices("auto", "disabled"))
]
Verbosity = Annotated[
    str | None, checked(_one_of("low", "medium", "high"), _choices("low", "medium", "high"))
]
Retention = Annotated[
    str | None, checked(_one_of("in_memory", "24h"), _choices("in_memory", "24h"))
]
OptionalString = Annotated[
    str | None, checked(lambda v: v is None or isinstance(v, str), "must be a string")
]


class ReasoningParam(Request):
    effort: OptionalString = None
    summary: OptionalString = None


class TextParam(Request):
    format: object = None
    verbosity: Verbosity = None

    @property
    def format_type(self) -> object:
        """The ``type`` of ``format``; None when ``format`` is not an object."""
        return self.format.get("type") if isinstance(self.format, dict) else None


class ResponsesRequest(Request):
    """What the server reads of a Responses request, and what its response repeats back."""

    model: ModelName = when_missing()
    input: object = None
    instructions: String | None = None
    stream: Boolean | None = None
    temperature: Number | None = None
    top_p: Number | None = None
    presence_penalty: Number | None = None
    frequency_penalty: Number | None = None
    max_output_tokens: PositiveInt | None = None
    max_tool_calls: PositiveInt | None = None
    tools: List | None = None
    tool_choice: StringOrObject | None = None
    parallel_tool_calls: Boolean | None = None
    user: String | None = None
    safety_identifier: String | None = None
    prompt_cache_key: String | None = None
    prompt_cache_retention: Retention = None
    service_tier: String | None = None
    metadata: Metadata | None = None
    store: Boolean | None = None
    background: Boolean | None = None
    truncation: Truncation = None
    reasoning: ReasoningParam | None = None
    text: TextParam | None = None
    include: List | None = None
    previous_response_id: String | None = None


# --- input items ---------------------------------------------------------------------------


class _Item(BaseModel):
    """An input item or content part: read once per item of a long history, so its checks are
    pydantic's own (a refusal names the item's problem, not the field); other fields ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)


Text = StrictStr
NonEmpty = Annotated[StrictStr, StringConstraints(min_length=1)]


class ItemHead(_Item):
    """What decides an input item's kind: its ``type``, or a ``role`` alone (a message)."""

    type: object = None
    role: object = None

    @property
    def kind(self) -> object:
        if self.type is None and "role" in self.model_fields_set:
            return "message"
        return self.type


class MessageItem(_Item):
    role: object = None
    content: object = None


class PartHead(_Item):
    type: object = None


class TextPart(_Item):
    text: Text


class RefusalPart(_Item):
    refusal: Text


class ImagePart(_Item):
    image_url: NonEmpty
    detail: Annotated[str | None, _loose(str, lambda v: v in ("auto", "low", "high"))] = None


class FunctionCallItem(_Item):
    """A ``function_call``; also the shape a client-run tool search's call is read into."""

    call_id: Text
    name: Text
    arguments: LooseAny = None
    namespace: LooseAny = None


class CustomToolCallItem(FunctionCallItem):
    input: LooseAny = None


class FunctionOutputItem(_Item):
    call_id: Text
    output: object = None


class ToolSearchCallItem(_Item):
    call_id: object = None
    id: object = None
    arguments: Annotated[JSON | None, _loose(dict, lambda _: True)] = None

    @property
    def ref(self) -> object:
        """The call's id: ``call_id``, else its item ``id``."""
        return self.call_id or self.id


class AdditionalToolsItem(_Item):
    tools: List = when_missing()


class ToolSearchOutputItem(AdditionalToolsItem):
    call_id: object = None
    id: object = None

    @property
    def ref(self) -> object:
        return self.call_id or self.id


class WebSearchCallItem(_Item):
    id: object = None
    kind: object = None
    signature: object = None

    @property
    def read_link(self) -> bool:
        return self.kind == "read_link" or bool(self.signature)


class CustomToolOutputItem(FunctionOutputItem):
    """A ``custom_tool_call_output``: a function output under its own kind."""


class ReasoningInput(_Item):
    """A ``reasoning`` item: nothing of it reaches the upstream."""


# --- tools ---------------------------------------------------------------------------------


class ToolHead(Request):
    """What every declared tool has: a ``type``, which decides the rest."""

    type: Id = when_missing()


class FunctionTool(Request):
    type: Literal["function", "custom"] = "function"
    name: Named = when_missing()
    description: LooseAny = None
    parameters: LooseObject = None
    strict: LooseBool = None


class Grammar(Request):
    type: object = None
    syntax: Loose = None
    definition: Loose = None


class CustomTool(FunctionTool):
    format: Annotated[Grammar | None, _loose(dict, lambda _: True)] = None


class NamespaceTool(Request):
    name: Named = when_missing()
    tools: object = None
    description: LooseAny = None


class DomainFilters(Request):
    allowed_domains: StringList | None = None
    blocked_domains: StringList | None = None


class WebSearchTool(Request):
    filters: object = None
    user_location: object = None
    search_context_size: object = None
    external_web_access: Boolean | None = None


class ToolSearchTool(Request):
    execution: object = None
    description: LooseAny = None
    parameters: LooseObject = None


class ToolChoiceParam(Request):
    """An object ``tool_choice``: a ``type``, and the ``name`` of a function or custom tool."""

    type: object = None
    name: object = None
