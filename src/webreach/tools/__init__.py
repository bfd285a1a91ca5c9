"""Model-facing tools: ``web_search`` and ``web_fetch``, their schemas, text and adapters.

This package reaches providers only through :class:`webreach.seam.WebRuntime`. Names load on
first use (PEP 562): a command that fetches one page loads neither the search tool nor the
adapters, and the renderer's HTML parser loads with the first render.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
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
    from .render import RenderedPage, render_html, render_page
    from .search.tool import (
        WEB_SEARCH,
        SearchToolResult,
        format_search,
        parse_queries,
        run_search,
        web_search_tool,
    )
    from .toolset import web_tools
    from .untrusted import fence, neutralise

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

_HOMES = {
    "CONTEXT_SIZES": "base",
    "ContextSize": "base",
    "FetchToolResult": "fetch",
    "INVALID_ARGUMENTS": "base",
    "RECENCIES": "base",
    "RenderedPage": "render",
    "SearchFilters": "base",
    "SearchToolResult": "search.tool",
    "SearchTuning": "base",
    "ToolDefinition": "base",
    "ToolError": "base",
    "ToolOptions": "base",
    "ToolResult": "base",
    "WEB_FETCH": "fetch",
    "WEB_SEARCH": "search.tool",
    "WebToolkit": "adapters",
    "anthropic_tools": "adapters",
    "fence": "untrusted",
    "format_fetch": "fetch",
    "format_search": "search.tool",
    "neutralise": "untrusted",
    "openai_chat_tools": "adapters",
    "openai_responses_tools": "adapters",
    "parse_arguments": "adapters",
    "parse_queries": "search.tool",
    "render_body": "fetch",
    "render_fetched": "fetch",
    "render_html": "render",
    "render_page": "render",
    "run_search": "search.tool",
    "tool_error_text": "adapters",
    "web_fetch_tool": "fetch",
    "web_search_tool": "search.tool",
    "web_tools": "toolset",
    "web_tools_prompt": "prompt",
}
"""The submodule each public name is defined in."""


if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = lazy_names(__name__, _HOMES, globals())
