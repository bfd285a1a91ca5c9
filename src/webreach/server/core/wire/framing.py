"""Wire details every protocol shares, written once: compact JSON, SSE frames, error types,
the ``server_tool_use`` usage block, and the DeepSeek web tools' own refusals."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..turn.errors import RequestError
from ..turn.events import Usage

__all__ = [
    "CANNOT_CONTINUE",
    "DEEPSEEK_READ_URL",
    "DEEPSEEK_SEARCH",
    "DEEPSEEK_TOOLS",
    "dumps",
    "error_type",
    "refuse_deepseek_fields",
    "server_tool_use",
    "sse_frame",
]

DEEPSEEK_SEARCH = "deepseek_web_search"
DEEPSEEK_READ_URL = "deepseek_read_url"
DEEPSEEK_TOOLS = frozenset({DEEPSEEK_SEARCH, DEEPSEEK_READ_URL})
_DEEPSEEK_REFUSED_FIELDS = ("allowed_domains", "blocked_domains", "user_location", "filters")

CANNOT_CONTINUE = (
    "messages: the last `assistant` message used `deepseek_web_search` or `deepseek_read_url` "
    "and cannot be continued; resend the previous request"
)

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII kept as is: what every body and frame is written with."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def sse_frame(data: str, event: str | None = None) -> str:
    """One server-sent event; ``data`` is already-serialised JSON on a single line."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data}\n\n"


def error_type(status: int, *, server: str, own: Mapping[int, str] | None = None) -> str:
    """The error ``type`` a protocol gives an HTTP status: its ``own`` names first, then the
    names the three share, then ``server`` for 5xx."""
    if own and status in own:
        return own[status]
    if status in _ERROR_TYPES:
        return _ERROR_TYPES[status]
    return server if status >= 500 else "invalid_request_error"


def server_tool_use(usage: Usage) -> dict[str, int]:
    return {
        "web_search_requests": usage.web_search_requests,
        "web_fetch_requests": usage.web_fetch_requests,
        "tool_search": usage.tool_search,
        "tool_fetch": usage.tool_fetch,
        "tool_image_search": usage.tool_image_search,
    }


def refuse_deepseek_fields(tool: Mapping[str, Any], kind: str) -> None:
    """Domain filters and locations belong to the Anthropic and OpenAI tools, not DeepSeek's."""
    for field in _DEEPSEEK_REFUSED_FIELDS:
        if tool.get(field) is not None:
            raise RequestError(f"tools: `{field}` is not supported by `{kind}`", param="tools")
