"""The tools of a Responses request: web tools, functions, and the kinds coding agents send.

Codex declares ``namespace`` tools (functions grouped under a name), ``custom`` tools (one
free-form string in, no JSON schema) and a ``tool_search`` it runs itself to load deferred
tools. A Chat upstream knows none of them, so a namespace's functions become upstream functions
named ``{namespace}__{name}``, a custom tool a function of one string, ``input``, and the tool
search a function; the calls go back to the client in its own shapes. Tools the client loads
later (a ``tool_search_output``, an ``additional_tools`` item) join the declared ones.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence

from ..core.turn.errors import RequestError
from ..core.turn.shape import (
    JSON,
    ClientTool,
    DomainFilter,
    ForcedWeb,
    ReadUrlSpec,
    SearchSpec,
    ToolChoice,
    WebTools,
)
from ..core.wire.fields import Request, validate
from ..core.wire.filter_fields import Approximate, context_size, location_hint, tool_filters
from ..core.wire.framing import DEEPSEEK_READ_URL, DEEPSEEK_SEARCH, refuse_deepseek_fields
from ..core.wire.openrouter_tools import OPENROUTER_TOOLS, openrouter_tool
from .shapes_in import (
    CustomTool,
    DomainFilters,
    FunctionTool,
    Grammar,
    NamespaceTool,
    ToolChoiceParam,
    ToolHead,
    ToolSearchTool,
    WebSearchTool,
    read,
)

__all__ = [
    "TOOL_SEARCH",
    "custom_arguments",
    "loaded_tools_text",
    "parse_tool_choice",
    "parse_tools",
    "upstream_name",
]

_OPENAI_SEARCH = re.compile(r"web_search(?:_preview)?(?:_\d{4}_\d{2}_\d{2})?")
TOOL_SEARCH = "tool_search"
_TOOL_SEARCH_PARAMETERS: JSON = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "limit": {"type": "number"}},
    "required": ["query"],
}
_NO_PARAMETERS: JSON = {"type": "object", "properties": {}}
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_MAX_NAME = 64
"""The longest function name OpenAI-compatible upstreams accept."""


def upstream_name(name: str, namespace: str | None = None) -> str:
    """The function name the upstream sees for a client tool: ``{namespace}__{name}`` in the
    characters upstreams accept, shortened with a hash of the original when too long, so the
    same tool always gets the same name (history and declarations must agree)."""
    full = f"{namespace}__{name}" if namespace else name
    if len(full) <= _MAX_NAME and _UNSAFE.search(full) is None:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:8]
    return f"{_UNSAFE.sub('_', full)[: _MAX_NAME - 9]}_{digest}"


def custom_arguments(text: str) -> str:
    """A custom tool's free-form input as the arguments of its upstream function."""
    return json.dumps({"input": text}, ensure_ascii=False)


def parse_tools(
    raw: Sequence[object] | None, loaded: Sequence[object] = ()
) -> tuple[WebTools, list[ClientTool]]:
    """The declared tools, then those the client loaded since (one of a name: the first)."""
    web, client_tools = _declared(raw)
    _unique(client_tools)
    names = {tool.name for tool in client_tools}
    for tool in _declared(loaded)[1]:
        if tool.name not in names:
            names.add(tool.name)
            client_tools.append(tool)
    return web, client_tools


def _declared(raw: Sequence[object] | None) -> tuple[WebTools, list[ClientTool]]:
    search: SearchSpec | None = None
    read_url: ReadUrlSpec | None = None
    client_tools: list[ClientTool] = []
    for index, tool in enumerate(raw or ()):
        kind = read(ToolHead, tool, "tools: every tool needs a `type`", "tools").type
        if kind in ("function", "custom"):
            client_tools.append(_client_tool(tool, None))
        elif kind == "namespace":
            client_tools.extend(_namespace(tool))
        elif kind in OPENROUTER_TOOLS:
            declared = openrouter_tool(kind, tool, f"tools.{index}")
            if (search if isinstance(declared, SearchSpec) else read_url) is not None:
                raise RequestError(f"tools: `{kind}` can only be declared once", param="tools")
            if isinstance(declared, SearchSpec):
                search = declared
            else:
                read_url = declared
        elif kind == DEEPSEEK_SEARCH or _OPENAI_SEARCH.fullmatch(kind):
            if search is not None:
                raise RequestError(f"tools: `{kind}` can only be declared once", param="tools")
            search = _search_tool(tool, kind, f"tools.{index}")
        elif kind == DEEPSEEK_READ_URL:
            if read_url is not None:
                raise RequestError(f"tools: `{kind}` can only be declared once", param="tools")
            refuse_deepseek_fields(_fields(tool), kind)
            read_url = ReadUrlSpec(DEEPSEEK_READ_URL, DEEPSEEK_READ_URL)
        elif kind == TOOL_SEARCH:
            searched = read(ToolSearchTool, tool, "", "tools")
            if searched.execution == "client":
                client_tools.append(_tool_search(searched))
    return WebTools(search=search, read_url=read_url), client_tools


def _fields(tool: object) -> JSON:
    """A declaration's fields by name (the DeepSeek tools refuse some by name)."""
    return read(ToolHead, tool, "", "tools").model_extra or {}


def _unique(tools: list[ClientTool]) -> None:
    seen: dict[str, ClientTool] = {}
    for tool in tools:
        if tool.name in seen:
            raise RequestError(
                f"tools: `{tool.shown}` and `{seen[tool.name].shown}` have the same name",
                param="tools",
            )
        seen[tool.name] = tool


def _namespace(tool: object) -> list[ClientTool]:
    declared = read(NamespaceTool, tool, "tools: a `namespace` tool needs a `name`", "tools")
    name, inner = declared.name, declared.tools
    if not isinstance(inner, list):
        raise RequestError(f"tools: namespace `{name}` needs a `tools` array", param="tools")
    only = f"tools: namespace `{name}` may only hold `function` and `custom` tools"
    tools: list[ClientTool] = []
    for member in inner:
        if read(ToolHead, member, only, "tools").type not in ("function", "custom"):
            raise RequestError(only, param="tools")
        tools.append(_client_tool(member, name, declared.description))
    return tools


def _client_tool(tool: object, namespace: str | None, context: str | None = None) -> ClientTool:
    kind = read(ToolHead, tool, "", "tools").type
    shape = CustomTool if kind == "custom" else FunctionTool
    declared = read(shape, tool, f"tools: a `{kind}` tool needs a `name`", "tools")
    about = declared.description
    if context:
        about = f"{context}\n\n{about}" if about else context
    if isinstance(declared, CustomTool):
        parameters = _free_form(declared.format)
        strict = None
    else:
        parameters = declared.parameters or _NO_PARAMETERS
        strict = declared.strict
    return ClientTool.function(
        upstream_name(declared.name, namespace),
        about,
        parameters,
        strict,
        shown=declared.name,
        namespace=namespace,
        kind="custom" if kind == "custom" else "function",
    )


def _tool_search(tool: ToolSearchTool) -> ClientTool:
    """The client's own tool search: a function the model calls, answered by the client with
    the tools it loads. (A hosted one is ignored: every declared tool is offered at once.)"""
    return ClientTool.function(
        TOOL_SEARCH,
        tool.description if tool.description is not None else "Find more tools by a query.",
        tool.parameters or _TOOL_SEARCH_PARAMETERS,
        kind="tool_search",
    )


def loaded_tools_text(tools: Sequence[object]) -> str:
    """What the model reads as a tool search's result: the tools it may call from now on."""
    found = _declared(tools)[1]
    if not found:
        return "No tools found."
    lines = [f"- {tool.name}: {tool.description or ''}".rstrip(": ") for tool in found]
    return "These tools can be called now:\n" + "\n".join(lines)


def _free_form(fmt: Grammar | None) -> JSON:
    """One string argument; a grammar the input must follow is given to the model to read."""
    about = "The tool's whole input, as free-form text."
    if fmt is not None and fmt.type == "grammar" and fmt.definition:
        about += f" It must follow this {fmt.syntax or 'formal'} grammar:\n{fmt.definition}"
    return {
        "type": "object",
        "properties": {"input": {"type": "string", "description": about}},
        "required": ["input"],
    }


def _search_tool(tool: object, kind: str, path: str) -> SearchSpec:
    """OpenAI's web search tool: ``filters.allowed_domains`` and ``user_location.country``
    pushed to the provider (the domains checked again on what comes back), the location a hint
    for the model, ``search_context_size`` the page context the model gets."""
    if kind == DEEPSEEK_SEARCH:
        refuse_deepseek_fields(_fields(tool), kind)
        return SearchSpec(DEEPSEEK_SEARCH, DEEPSEEK_SEARCH)
    declared = read(WebSearchTool, tool, "", "tools")
    domains = DomainFilter()
    if declared.filters is not None:
        read(Request, declared.filters, "tools: `filters` must be an object", "tools")
        refused = "tools: domain filters must be arrays of strings"
        given = read(DomainFilters, declared.filters, refused, "tools")
        domains = DomainFilter(
            allowed=tuple(given.allowed_domains or ()), blocked=tuple(given.blocked_domains or ())
        )
    place = (
        None
        if declared.user_location is None
        else validate(Approximate, declared.user_location, f"{path}.user_location")
    )
    filters = tool_filters(
        domains,
        place,
        allowed=f"{path}.filters.allowed_domains",
        blocked=f"{path}.filters.blocked_domains",
        located=f"{path}.user_location",
    )
    return SearchSpec(
        "web_search",
        kind,
        domains=domains,
        location=location_hint(place),
        filters=filters,
        context_size=context_size(declared.search_context_size, f"{path}.search_context_size"),
        live=declared.external_web_access is not False,
    )


def parse_tool_choice(
    raw: str | JSON | None, web: WebTools, client_tools: list[ClientTool]
) -> tuple[ToolChoice, ForcedWeb]:
    """The upstream ``tool_choice``, and the web search the first step must make when the
    client forced OpenAI's own ``web_search`` (forcing ``deepseek_*`` stays DeepSeek's 400)."""
    if raw is None:
        return None, None
    if isinstance(raw, str):
        if raw not in ("auto", "none", "required"):
            raise RequestError(f"tool_choice: `{raw}` is not a valid choice", param="tool_choice")
        return raw, None
    choice = read(ToolChoiceParam, raw, "", "tool_choice")
    kind = choice.type
    if kind in ("function", "custom"):
        name = choice.name
        if not isinstance(name, str) or not name:
            raise RequestError(
                f"tool_choice: a `{kind}` choice needs a `name`", param="tool_choice"
            )
        named = [tool for tool in client_tools if name in (tool.name, tool.shown)]
        if named:
            return {"type": "function", "function": {"name": named[0].name}}, None
        return "auto", _forced_web(name, web, "is not a declared tool")
    if isinstance(kind, str):
        return "auto", _forced_web(kind, web, "is not supported")
    raise RequestError(f"tool_choice: `{kind}` is not supported", param="tool_choice")


def _forced_web(name: str, web: WebTools, otherwise: str) -> ForcedWeb:
    """A choice naming a web tool, as a type or as a function name: OpenAI's own search is
    forced for the first step; DeepSeek's tools cannot be forced (named as declared)."""
    if name == DEEPSEEK_SEARCH or _OPENAI_SEARCH.fullmatch(name):
        declared = web.search.declared_type if web.search else name
        if web.search is not None and _OPENAI_SEARCH.fullmatch(declared):
            return "search"
        named = declared
    elif name == DEEPSEEK_READ_URL:
        named = name
    else:
        raise RequestError(f"tool_choice: `{name}` {otherwise}", param="tool_choice")
    raise RequestError(f"tool_choice: `{named}` cannot be forced", param="tool_choice")
