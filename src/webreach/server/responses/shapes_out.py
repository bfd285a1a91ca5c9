"""The Responses API as the server writes it: the response object and its output items,
declared once (the stream's events are in ``shapes_stream``).

They are TypedDicts: mypy checks every dict the renderer builds against them, and at run
time they are the plain dicts that are written out (no model to build or dump on the hot path).
Each mirrors the official SDK's model of the same name, field for field in wire order, with
webreach's additions marked; the tests read every shape back with the SDK's strict validation.
"""

from dataclasses import dataclass, field
from typing import Literal, NotRequired, TypedDict

from ..core.turn.shape import JSON

__all__ = [
    "CustomToolCall",
    "Echo",
    "FindInPageAction",
    "FunctionCall",
    "FunctionChoice",
    "FunctionToolEcho",
    "ItemStatus",
    "OpenPageAction",
    "OutputItem",
    "OutputMessage",
    "OutputText",
    "ReasoningItem",
    "ReasoningText",
    "Response",
    "ResponseUsage",
    "SearchAction",
    "SummaryText",
    "ToolChoiceEcho",
    "ToolEcho",
    "ToolSearchCall",
    "UrlCitation",
    "WebSearchCall",
    "WebSearchToolEcho",
]

ItemStatus = Literal["in_progress", "completed", "incomplete"]
ResponseStatus = Literal["in_progress", "completed", "failed", "incomplete"]

# --- content parts -------------------------------------------------------------------------


class UrlCitation(TypedDict):
    type: Literal["url_citation"]
    url: str
    title: str
    start_index: int
    end_index: int


class OutputText(TypedDict):
    type: Literal["output_text"]
    text: str
    annotations: list[UrlCitation]
    logprobs: list[JSON]


class ReasoningText(TypedDict):
    type: Literal["reasoning_text"]
    text: str


class SummaryText(TypedDict):
    type: Literal["summary_text"]
    text: str


# --- output items --------------------------------------------------------------------------


class OutputMessage(TypedDict):
    id: str
    type: Literal["message"]
    role: Literal["assistant"]
    status: ItemStatus
    content: list[OutputText]


class ReasoningItem(TypedDict):
    id: str
    type: Literal["reasoning"]
    summary: list[SummaryText]
    content: list[ReasoningText]
    status: ItemStatus


class SearchAction(TypedDict):
    type: Literal["search"]
    queries: list[str]
    query: NotRequired[str]
    sources: NotRequired[list[JSON]]
    """Each as ``core.wire.display.url_source`` shows it (the SDK's ``url`` source, and more)."""


class OpenPageAction(TypedDict):
    type: Literal["open_page"]
    url: str


class FindInPageAction(TypedDict):
    type: Literal["find_in_page"]
    url: str
    pattern: str


class PageRead(TypedDict):
    """webreach's: the page a ``read_link`` or page call read."""

    url: str
    title: str | None
    published_at: str | None


class CallError(TypedDict):
    """webreach's: why a call failed."""

    code: str


class WebSearchCall(TypedDict):
    id: str
    type: Literal["web_search_call"]
    status: Literal["in_progress", "completed", "failed"]
    kind: str
    """webreach's: which server tool made the call (``search``, ``read_link`` …)."""
    action: SearchAction | OpenPageAction | FindInPageAction
    page: NotRequired[PageRead]
    signature: NotRequired[str]
    """webreach's: the encrypted page a later request hands back to read it again."""
    error: NotRequired[CallError]


class FunctionCall(TypedDict):
    id: str
    type: Literal["function_call"]
    call_id: str
    name: str
    arguments: str
    status: ItemStatus
    namespace: NotRequired[str]


class CustomToolCall(TypedDict):
    id: str
    type: Literal["custom_tool_call"]
    call_id: str
    name: str
    input: str
    status: ItemStatus
    namespace: NotRequired[str]


class ToolSearchCall(TypedDict):
    id: str
    type: Literal["tool_search_call"]
    call_id: str
    arguments: JSON
    execution: Literal["client"]
    status: Literal["completed"]


OutputItem = (
    OutputMessage | ReasoningItem | WebSearchCall | FunctionCall | CustomToolCall | ToolSearchCall
)

# --- the response object -------------------------------------------------------------------


class InputTokensDetails(TypedDict):
    cached_tokens: int
    cache_write_tokens: int


class OutputTokensDetails(TypedDict):
    reasoning_tokens: int


class ResponseUsage(TypedDict):
    input_tokens: int
    input_tokens_details: InputTokensDetails
    output_tokens: int
    output_tokens_details: OutputTokensDetails
    total_tokens: int
    server_tool_use: NotRequired[dict[str, int]]
    """webreach's: the web calls billed, as every protocol reports them."""


class FunctionChoice(TypedDict):
    type: Literal["function"]
    name: str


ToolChoiceEcho = str | FunctionChoice | JSON
"""As the client sent it: a mode, a function, a hosted tool (``{"type": "web_search"}``)."""


class FunctionToolEcho(TypedDict):
    type: Literal["function"]
    name: str
    description: str | None
    parameters: JSON | None
    strict: bool | None


class DomainFilter(TypedDict):
    allowed_domains: list[str]


class WebSearchToolEcho(TypedDict):
    type: str
    """One of the SDK's web search tool types."""
    filters: NotRequired[DomainFilter]
    search_context_size: NotRequired[str]


ToolEcho = FunctionToolEcho | WebSearchToolEcho


class ReasoningEcho(TypedDict):
    effort: str | None
    summary: str | None


class TextFormat(TypedDict):
    type: Literal["text"]


class TextEcho(TypedDict):
    format: TextFormat | dict[str, object]
    """Plain text, or the ``json_schema`` / ``json_object`` format as the request sent it."""
    verbosity: NotRequired[str]


class ErrorDetail(TypedDict):
    code: Literal["server_error"]
    message: str


class IncompleteDetails(TypedDict):
    reason: Literal["max_output_tokens", "content_filter"]


class Response(TypedDict):
    id: str
    object: Literal["response"]
    created_at: int
    completed_at: int | None
    """None until the response is completed."""
    status: ResponseStatus
    background: bool
    error: ErrorDetail | None
    incomplete_details: IncompleteDetails | None
    instructions: str | None
    max_output_tokens: int | None
    max_tool_calls: int | None
    model: str
    output: list[OutputItem]
    parallel_tool_calls: bool
    previous_response_id: str | None
    prompt_cache_key: str | None
    prompt_cache_retention: str | None
    reasoning: ReasoningEcho
    safety_identifier: str | None
    service_tier: str
    store: bool
    temperature: float
    text: TextEcho
    tool_choice: ToolChoiceEcho
    tools: list[ToolEcho]
    top_logprobs: int
    top_p: float
    presence_penalty: float
    frequency_penalty: float
    truncation: str
    usage: ResponseUsage | None
    user: str | None
    metadata: dict[str, str]
    title: NotRequired[str | None]
    """webreach's ``title`` extension, when the request asked for one."""


@dataclass(frozen=True, slots=True)
class Echo:
    """The request's settings the response repeats, as OpenAI's does; a setting the client
    left out is OpenAI's default. Each is declared here alone: the parser copies the request's
    field of the same name (``echo_of``), the renderer puts each where :class:`Response` has
    it (``base_response``)."""

    background: bool = False
    instructions: str | None = None
    max_output_tokens: int | None = None
    max_tool_calls: int | None = None
    parallel_tool_calls: bool = True
    prompt_cache_key: str | None = None
    prompt_cache_retention: str | None = None
    reasoning: ReasoningEcho = field(
        default_factory=lambda: ReasoningEcho(effort=None, summary=None)
    )
    safety_identifier: str | None = None
    service_tier: str = "default"
    temperature: float = 1.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    text: TextEcho = field(default_factory=lambda: TextEcho(format={"type": "text"}))
    tool_choice: ToolChoiceEcho = "auto"
    top_logprobs: int = 0
    top_p: float = 1.0
    truncation: str = "disabled"
    user: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
