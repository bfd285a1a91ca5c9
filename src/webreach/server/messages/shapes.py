"""The Messages content blocks the renderer fills in, as the Anthropic SDK's types want them.

A strict client validates every block, so required fields are never left out.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ..core.turn.events import CallFailed, PageOutcome, SearchOutcome, Usage, WebCall
from ..core.turn.shape import JSON, Turn
from ..core.wire.display import image_field
from ..core.wire.framing import server_tool_use

__all__ = ["call_input", "result_block", "tool_input", "usage_json"]

_SEARCH_ERROR_CODES = frozenset({"invalid_tool_input", "unavailable", "max_uses_exceeded"})


def _opaque(url: str) -> str:
    """A non-empty ``encrypted_content``: strict clients require one, nothing reads it back."""
    return base64.urlsafe_b64encode(url.encode()).decode().rstrip("=") or "AA"


def call_input(call: WebCall) -> JSON:
    """The ``server_tool_use`` input: the action under its own name, with what it acts on."""
    action = call.action
    if action.finds == "sources":
        queries = list(action.queries)
        if queries:
            return {"action": action.name, "queries": queries, "query": queries[0]}
        return {"action": action.name, "queries": queries}
    if action.pattern is not None:
        return {"action": action.name, "url": action.url, "pattern": action.pattern}
    return {"action": action.name, "url": action.url}


def _search_content(outcome: SearchOutcome | PageOutcome | CallFailed) -> Any:
    if isinstance(outcome, SearchOutcome):
        return [
            {
                "type": "web_search_result",
                "title": source.title or "",
                "url": source.url,
                "encrypted_content": _opaque(source.url),
                "page_age": source.published_at,
                "snippet": source.snippet,
                "site_name": source.site_name,
                "site_icon": source.site_icon,
                **image_field(source),
            }
            for source in outcome.sources
        ]
    code = outcome.error_code if isinstance(outcome, CallFailed) else "unavailable"
    if code not in _SEARCH_ERROR_CODES:
        code = "unavailable"
    return {"type": "web_search_tool_result_error", "error_code": code}


def result_block(call: WebCall, outcome: SearchOutcome | PageOutcome | CallFailed) -> JSON:
    """A ``web_search_tool_result`` for a call that finds sources, else a
    ``web_fetch_tool_result``: Anthropic's two result blocks, whatever the tool."""
    if call.action.finds == "sources":
        return {
            "type": "web_search_tool_result",
            "tool_use_id": call.id,
            "content": _search_content(outcome),
            "kind": call.kind,
        }
    block: JSON = {"type": "web_fetch_tool_result", "tool_use_id": call.id}
    if isinstance(outcome, PageOutcome):
        block["content"] = {
            "type": "web_fetch_result",
            "url": outcome.url,
            "retrieved_at": outcome.retrieved_at,
            "content": {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": ""},
                "title": outcome.title,
            },
            "published_at": outcome.published_at,
        }
    else:
        code = outcome.error_code if isinstance(outcome, CallFailed) else "unavailable"
        block["content"] = {"type": "web_fetch_tool_result_error", "error_code": code}
    block["kind"] = call.kind
    if isinstance(outcome, PageOutcome) and outcome.signature:
        block["signature"] = outcome.signature
    return block


def tool_input(arguments: str) -> tuple[JSON, str]:
    """The call's input and the JSON to stream; arguments that are not an object become ``{}``."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value, arguments if value else ""
    return {}, ""


def usage_json(usage: Usage, turn: Turn) -> JSON:
    """Anthropic usage: ``input_tokens`` excludes what the upstream served from its cache."""
    out: JSON = {
        "input_tokens": max(usage.input_tokens - usage.cached_tokens, 0),
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cached_tokens,
        "cache_creation_input_tokens": 0,
    }
    if turn.thinking:
        out["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
    if turn.web.any or usage.has_server_tools:
        out["server_tool_use"] = server_tool_use(usage)
    return out
