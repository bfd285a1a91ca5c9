"""Model-facing tools: ``web_search`` and ``web_fetch``, their schemas, text and adapters.

This package reaches providers only through :class:`webreach.seam.WebRuntime`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .adapters import (
    WebToolkit,
    anthropic_tools,
    openai_chat_tools,
    openai_responses_tools,
    parse_arguments,
    tool_error_text,
)
from .base import (
    CONTEXT_SIZES,
    INVALID_ARGUMENTS,
    RECENCIES,
    ContextSize,
    SearchFilters,
    SearchTuning,
    ToolDefinition,
    ToolError,
    ToolOptions,
    ToolResult,
)
from .fetch import (
    WEB_FETCH,
    FetchToolResult,
    format_fetch,
    render_body,
    render_fetched,
    web_fetch_tool,
)
from .prompt import web_tools_prompt
from .search import (
    WEB_SEARCH,
    SearchToolResult,
    format_search,
    parse_queries,
    run_search,
    web_search_tool,
)
from .toolset import web_tools
from .untrusted import fence, neutralise

if TYPE_CHECKING:
    from .render import RenderedPage, render_html, render_page

__all__ = [
    "CONTEXT_SIZES",
    "INVALID_ARGUMENTS",
    "RECENCIES",
    "WEB_FETCH",
    "WEB_SEARCH",
    "ContextSize",
    "FetchToolResult",
    "RenderedPage",
    "SearchFilters",
    "SearchToolResult",
    "SearchTuning",
    "ToolDefinition",
    "ToolError",
    "ToolOptions",
    "ToolResult",
    "WebToolkit",
    "anthropic_tools",
    "fence",
    "format_fetch",
    "format_search",
    "neutralise",
    "openai_chat_tools",
    "openai_responses_tools",
    "parse_arguments",
    "parse_queries",
    "render_body",
    "render_fetched",
    "render_html",
    "render_page",
    "run_search",
    "tool_error_text",
    "web_fetch_tool",
    "web_search_tool",
    "web_tools",
    "web_tools_prompt",
]

_LAZY = {"render_html", "render_page", "RenderedPage"}


def __getattr__(name: str) -> Any:
    """The renderer loads its HTML parser only when first used."""
    if name in _LAZY:
        from . import render

        return getattr(render, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
