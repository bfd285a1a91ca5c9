"""The Anthropic Messages request as the server reads it: declared, and checked as declared.

Every top-level field of Anthropic's API is declared with its type, so a mistyped one is a 400
naming it even when the server then ignores or refuses it (``settings.py`` decides which).
Refusals name the field as the API does (``messages.0.content.1.type: …``). Content blocks
are checked by kind where they are read (``request.py``), with the block shapes below.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field

from ...tools import SearchFilters
from ..core.turn.shape import DomainFilter
from ..core.wire.fields import (
    JSON,
    Boolean,
    JsonObject,
    ModelName,
    NonNegativeInt,
    Number,
    Objects,
    PositiveInt,
    Request,
    String,
    StringList,
    StringOrObject,
    checked,
    when_missing,
)
from ..core.wire.filter_fields import Approximate, tool_filters

__all__ = [
    "Block",
    "ClientDeclared",
    "Declared",
    "ImageBlock",
    "MessageParam",
    "MessagesRequest",
    "OutputFormat",
    "TextBlock",
    "ToolChoice",
    "ToolResultBlock",
    "ToolUseBlock",
    "WebDeclared",
]

THINKING_TYPES = ("enabled", "adaptive", "between_tools", "disabled")
CHOICE_TYPES = ("auto", "any", "tool", "none")


def one_of(*values: str) -> BeforeValidator:
    """A string out of ``values``, refused in the API's words (``must be `a`, `b` or `c```)."""
    named = [f"`{value}`" for value in values]
    listed = f"{', '.join(named[:-1])} or {named[-1]}" if len(named) > 1 else named[0]
    return checked(lambda v: v in values, f"must be {listed}")


def _text_blocks(value: object) -> object:
    """A string is one text block, as the API reads it."""
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    return value


def _is_object(value: object) -> bool:
    return isinstance(value, dict)


def _text_block(value: object) -> bool:
    return isinstance(value, dict) and value.get("type") == "text"


def _block(value: object) -> bool:
    return isinstance(value, dict) and isinstance(value.get("type"), str)


Block = Annotated[JSON, checked(_block, "must be a content block with a `type`")]
"""A content block: an object with a ``type``; its kind decides the rest."""
# Before-validators run last first: a string becomes one text block, then the list is checked.
Content = Annotated[
    list[Block],
    checked(lambda v: isinstance(v, list), "must be a string or a list of content blocks"),
    BeforeValidator(_text_blocks),
]


class TextBlock(Request):
    text: String = when_missing()


class ImageSource(Request):
    type: Annotated[str, checked(lambda v: v in ("base64", "url"), "must be `base64` or `url`")] = (
        when_missing()
    )
    media_type: String | None = None
    data: String | None = None
    url: String | None = None


class ImageBlock(Request):
    source: Annotated[ImageSource, checked(_is_object, "Field required")] = when_missing()


class ToolUseBlock(Request):
    id: String = when_missing()
    name: String = when_missing()
    input: JsonObject = Field(default_factory=dict)


class ToolResultBlock(Request):
    tool_use_id: String = when_missing()
    content: Content = Field(default="", validate_default=True)
    is_error: object = None


SystemBlock = Annotated[
    JSON,
    checked(lambda v: isinstance(v, dict) and v.get("type") == "text", "must be a `text` block"),
]
System = Annotated[
    list[SystemBlock],
    checked(lambda v: isinstance(v, list), "must be a string or a list of text blocks"),
    BeforeValidator(_text_blocks),
]


class MessageParam(Request):
    """A turn of the history; ``system`` ones may come anywhere (Claude Code sends them between
    user turns)."""

    content: Content
    role: Annotated[
        str,
        checked(
            lambda v: v in ("user", "assistant", "system"),
            "must be `user`, `assistant` or `system`",
        ),
    ] = when_missing()


class ToolChoice(Request):
    type: Annotated[
        str,
        checked(
            lambda v: v in ("auto", "any", "tool", "none"),
            "must be `auto`, `any`, `tool` or `none`",
        ),
    ] = when_missing()
    name: object = None
    disable_parallel_tool_use: object = None


class Thinking(Request):
    type: Annotated[
        str, checked(lambda v: v in THINKING_TYPES, "must be `enabled`, `adaptive` or `disabled`")
    ] = when_missing()
    budget_tokens: object = None


class Metadata(Request):
    user_id: String | None = None


class OutputFormat(Request):
    """Structured output: the answer is JSON of ``schema``."""

    type: Annotated[str, one_of("json_schema")] = when_missing()
    # Read as `schema` on the wire; the name itself would shadow pydantic's `BaseModel.schema`.
    schema_: Annotated[JSON, checked(_is_object, "must be an object")] = Field(alias="schema")


class OutputConfig(Request):
    effort: Annotated[str, one_of("low", "medium", "high", "xhigh", "max")] | None = None
    format: OutputFormat | None = None
    task_budget: JsonObject | None = None


class CacheControl(Request):
    type: Annotated[str, one_of("ephemeral")] = when_missing()
    ttl: Annotated[str, one_of("5m", "1h")] | None = None


class Diagnostics(Request):
    previous_message_id: String | None = None


class ContextManagement(Request):
    edits: Objects | None = None


class BillingPolicy(Request):
    type: Annotated[str, one_of("billing_policy")] = when_missing()
    bill_to: Annotated[str, one_of("self", "user_profile")] | None = None


Fallbacks = Annotated[
    object,
    checked(
        lambda v: v == "default" or (isinstance(v, list) and all(map(_is_object, v))),
        "must be `default` or an array of objects",
    ),
]


class MessagesRequest(Request):
    """A Messages request: every field of Anthropic's API, typed; unknown ones are kept unread.

    ``temperature``, ``top_p`` and ``top_k`` left the SDK's declared parameters, but clients
    (the AI SDK's, older SDKs) still send them. ``betas``, ``user_profile_id`` and
    ``workspace_id`` are the SDK's headers, not body fields."""

    model: ModelName = when_missing()
    max_tokens: PositiveInt | None = None
    stream: Boolean = False
    temperature: Number | None = None
    top_p: Number | None = None
    top_k: NonNegativeInt | None = None
    stop_sequences: StringList | None = None
    metadata: Metadata | None = None
    output_config: OutputConfig | None = None
    output_format: OutputFormat | None = None
    """The beta's earlier name of ``output_config.format``."""
    cache_control: CacheControl | None = None
    diagnostics: Diagnostics | None = None
    service_tier: Annotated[str, one_of("auto", "standard_only")] | None = None
    speed: Annotated[str, one_of("standard", "fast")] | None = None
    context_management: ContextManagement | None = None
    fallbacks: Fallbacks | None = None
    fallback_credit_token: StringOrObject | None = None
    billing_policy: BillingPolicy | None = None
    inference_geo: String | None = None
    container: StringOrObject | None = None
    mcp_servers: Objects | None = None
    compaction: JsonObject | None = None
    thread: JsonObject | None = None
    tools: (
        Annotated[list[JsonObject], checked(lambda v: isinstance(v, list), "must be a list")] | None
    ) = None
    tool_choice: ToolChoice | None = None
    system: System | None = None
    messages: Annotated[
        list[MessageParam],
        checked(lambda v: isinstance(v, list) and bool(v), "must be a non-empty list"),
    ]
    thinking: Thinking | None = None


# --- tools -----------------------------------------------------------------------------------


def _named(value: object) -> bool:
    return isinstance(value, str) and bool(value)


class Declared(Request):
    """What every tool declaration may carry; ``name`` defaults by kind."""

    name: Annotated[str, checked(_named, "must be a non-empty string")] | None = None
    max_uses: PositiveInt | None = None


class WebDeclared(Declared):
    """Anthropic's ``web_search`` / ``web_fetch``: domains, and (search) where the user is."""

    allowed_domains: StringList | None = None
    blocked_domains: StringList | None = None
    user_location: Approximate | None = None

    def domains(self) -> DomainFilter:
        return DomainFilter(
            allowed=tuple(self.allowed_domains or ()), blocked=tuple(self.blocked_domains or ())
        )

    def search_filters(self, path: str) -> SearchFilters:
        """The domains and the user's country, pushed to the provider (the domains are checked
        again on what comes back)."""
        return tool_filters(
            self.domains(),
            self.user_location,
            allowed=f"{path}.allowed_domains",
            blocked=f"{path}.blocked_domains",
            located=f"{path}.user_location",
        )


class ClientDeclared(Request):
    name: Annotated[str, checked(_named, "must be a non-empty string")] = when_missing()
    input_schema: Annotated[JSON, checked(lambda v: v is not None, "Field required")] = (
        when_missing()
    )
    description: String | None = None
    strict: object = None
