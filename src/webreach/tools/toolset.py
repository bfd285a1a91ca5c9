"""The enabled tools as one set, as agent frameworks, MCP and the API server offer them."""

from __future__ import annotations

from ..seam import WebRuntime
from .base import ToolDefinition, ToolOptions
from .fetch import web_fetch_tool
from .search.tool import web_search_tool

__all__ = ["web_tools"]


def web_tools(runtime: WebRuntime, options: ToolOptions | None = None) -> list[ToolDefinition]:
    """Every enabled tool; a tool is never hidden because its provider is missing."""
    options = options or ToolOptions()
    tools = []
    if options.search_enabled:
        tools.append(web_search_tool(runtime, options))
    if options.fetch_enabled:
        tools.append(web_fetch_tool(runtime, options))
    return tools
