"""The parts of a Responses reply the renderer fills in, built as the types of ``shapes_out``.

Every shape here is one the official SDK's models accept, also with strict validation.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import cast

from ..core.turn.events import Action, ClientToolCall, Usage
from ..core.turn.shape import Turn
from ..core.wire.framing import server_tool_use
from .echo import NO_ECHO
from .shapes_out import (
    Echo,
    FindInPageAction,
    OpenPageAction,
    OutputText,
    ReasoningText,
    Response,
    ResponseUsage,
    SearchAction,
    SummaryText,
    ToolEcho,
    ToolSearchCall,
    UrlCitation,
    WebSearchToolEcho,
)

__all__ = [
    "action_shape",
    "base_response",
    "reasoning_part",
    "summary_part",
    "text_part",
    "tool_search_item",
    "usage_shape",
]

_SDK_WEB_SEARCH_TYPES = frozenset(
    {"web_search", "web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11"}
)


_ECHOED = tuple(setting.name for setting in dataclasses.fields(Echo))
_RESPONSE_KEYS = tuple(key for key in Response.__annotations__ if key != "title")
"""The response's keys in the order the wire carries them, which is :class:`Response`'s."""


def base_response(turn: Turn, response_id: str) -> Response:
    """Every field the SDK's ``Response`` requires, and the request's settings echoed back.

    ``store`` says whether the server keeps this response (``previous_response_id`` and
    ``item_reference`` can then name it and its items).
    """
    echo = turn.echo if isinstance(turn.echo, Echo) else NO_ECHO
    values: dict[str, object] = {name: getattr(echo, name) for name in _ECHOED}
    values |= {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "completed_at": None,
        "status": "in_progress",
        "error": None,
        "incomplete_details": None,
        "model": turn.model,
        "output": [],
        "previous_response_id": turn.previous_response_id,
        "store": turn.store,
        "tools": _tools_echo(turn),
        "usage": None,
    }
    return cast(Response, {key: values[key] for key in _RESPONSE_KEYS})


def _tools_echo(turn: Turn) -> list[ToolEcho]:
    """The declared tools as the SDK's ``Tool`` union knows them.

    DeepSeek tool types are left out: a client with strict response validation rejects a
    ``tools`` entry whose type is not one of the SDK's own.
    """
    tools: list[ToolEcho] = [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
            "strict": tool.strict,
        }
        for tool in turn.client_tools
    ]
    search = turn.web.search
    if search is not None and search.declared_type in _SDK_WEB_SEARCH_TYPES:
        echo: WebSearchToolEcho = {"type": search.declared_type}
        if search.domains.allowed and not search.declared_type.startswith("web_search_preview"):
            echo["filters"] = {"allowed_domains": list(search.domains.allowed)}
        if search.context_size is not None:
            echo["search_context_size"] = search.context_size
        tools.append(echo)
    return tools


def action_shape(action: Action) -> SearchAction | OpenPageAction | FindInPageAction:
    """The action in the SDK's own vocabulary (``search``, ``open_page``, ``find_in_page``),
    which strict clients validate: whatever a tool calls it, it finds sources or reads a page."""
    if action.finds == "sources":
        rendered: SearchAction = {"type": "search", "queries": list(action.queries)}
        if action.queries:
            rendered["query"] = action.queries[0]
        return rendered
    if action.pattern is not None:
        return {"type": "find_in_page", "url": action.url, "pattern": action.pattern}
    return {"type": "open_page", "url": action.url}


def reasoning_part(text: str) -> ReasoningText:
    return {"type": "reasoning_text", "text": text}


def summary_part(text: str) -> SummaryText:
    return {"type": "summary_text", "text": text}


def text_part(text: str, annotations: list[UrlCitation]) -> OutputText:
    return {"type": "output_text", "text": text, "annotations": annotations, "logprobs": []}


def tool_search_item(call: ClientToolCall, item_id: str) -> ToolSearchCall:
    """A ``tool_search_call`` the client runs itself (Codex's deferred tools)."""
    try:
        arguments = json.loads(call.arguments)
    except ValueError:
        arguments = {}
    return {
        "id": item_id,
        "type": "tool_search_call",
        "call_id": call.id,
        "arguments": arguments if isinstance(arguments, dict) else {},
        "execution": "client",
        "status": "completed",
    }


def usage_shape(usage: Usage) -> ResponseUsage:
    """Both token-detail objects are required by the SDK, ``cache_write_tokens`` included."""
    rendered: ResponseUsage = {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens, "cache_write_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }
    if usage.billed:
        rendered["server_tool_use"] = server_tool_use(usage)
    return rendered
