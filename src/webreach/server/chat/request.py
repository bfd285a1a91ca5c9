"""Chat Completions requests: web tools out of ``tools``, server tool calls out of the history."""

from __future__ import annotations

from typing import Any

from ..core.errors import RequestError
from ..core.fields import CHAT_FIELDS, check_fields, non_empty_string, required
from ..core.turn import DomainFilter, ReadUrlSpec, SearchSpec, Turn, WebTools
from ..core.wire import (
    CANNOT_CONTINUE,
    DEEPSEEK_READ_URL,
    DEEPSEEK_SEARCH,
    DEEPSEEK_TOOLS,
    refuse_deepseek_fields,
)

__all__ = ["check_chat", "declares_web_tools", "parse_chat"]

# Consumed here; everything else is passed to the upstream as the client sent it.
_OWN_FIELDS = frozenset({"model", "messages", "tools", "tool_choice", "stream", "stream_options"})


def declares_web_tools(body: dict[str, Any]) -> bool:
    tools = body.get("tools")
    return isinstance(tools, list) and any(
        isinstance(tool, dict) and _type_of(tool) in DEEPSEEK_TOOLS for tool in tools
    )


def _type_of(tool: dict[str, Any]) -> str | None:
    kind = tool.get("type")
    return kind if isinstance(kind, str) else None


def _web_tools(tools: list[Any]) -> tuple[WebTools, list[dict[str, Any]]]:
    search: SearchSpec | None = None
    read_url: ReadUrlSpec | None = None
    client: list[dict[str, Any]] = []
    for tool in tools:
        if not isinstance(tool, dict):
            raise RequestError("tools: each tool must be an object", param="tools")
        kind = _type_of(tool)
        if kind not in DEEPSEEK_TOOLS:
            client.append(tool)
            continue
        if kind == DEEPSEEK_SEARCH:
            refuse_deepseek_fields(tool, kind)
        if (kind == DEEPSEEK_SEARCH and search) or (kind == DEEPSEEK_READ_URL and read_url):
            raise RequestError(f"tools: `{kind}` can only be declared once", param="tools")
        if kind == DEEPSEEK_SEARCH:
            search = SearchSpec(str(kind), str(kind))
        else:
            read_url = ReadUrlSpec(str(kind), str(kind), domains=DomainFilter())
    return WebTools(search=search, read_url=read_url), client


def _check_tool_choice(choice: Any, web: WebTools) -> Any:
    if isinstance(choice, dict):
        named = choice.get("type")
        function = choice.get("function")
        if isinstance(function, dict):
            named = function.get("name", named)
        if isinstance(named, str) and named in DEEPSEEK_TOOLS:
            raise RequestError(f"tool_choice: `{named}` cannot be forced", param="tool_choice")
    if choice == "required" and web.any:
        return "auto"
    return choice


def _history(messages: list[Any]) -> tuple[list[dict[str, Any]], list[tuple[int, str]]]:
    """Drop ``server_tool_calls`` from earlier replies, keeping read-link signatures."""
    cleaned: list[dict[str, Any]] = []
    signatures: list[tuple[int, str]] = []
    last_user = -1
    for message in messages:
        if not isinstance(message, dict):
            raise RequestError("messages: each message must be an object", param="messages")
        if message.get("role") == "user":
            last_user = len(cleaned)
        steps = message.get("server_tool_calls")
        if steps is None:
            cleaned.append(message)
            continue
        for step in steps if isinstance(steps, list) else ():
            for call in step.get("calls", ()) if isinstance(step, dict) else ():
                signature = call.get("signature") if isinstance(call, dict) else None
                if isinstance(signature, str) and signature and last_user >= 0:
                    signatures.append((last_user, signature))
        cleaned.append({k: v for k, v in message.items() if k != "server_tool_calls"})
    return cleaned, signatures


def check_chat(body: dict[str, Any]) -> None:
    """The field checks every Chat request gets, relayed or not."""
    required(body, "model", non_empty_string)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages: a non-empty array of messages is required", param="messages")
    check_fields(body, CHAT_FIELDS)


def parse_chat(body: dict[str, Any]) -> Turn:
    check_chat(body)
    messages: list[Any] = body["messages"]
    model: str = body["model"]
    tools = body.get("tools") or []
    web, client_tools = _web_tools(tools)
    if web.any and "web_search_options" in body:
        raise RequestError(
            "web_search_options: not supported together with `deepseek_web_search` or "
            "`deepseek_read_url`; declare the web tools in `tools` instead",
            param="web_search_options",
        )
    history, signatures = _history(messages)
    if (
        isinstance(messages[-1], dict)
        and messages[-1].get("role") == "assistant"
        and (messages[-1].get("server_tool_calls"))
    ):
        raise RequestError(CANNOT_CONTINUE, param="messages")
    thinking = body.get("thinking")
    return Turn(
        protocol="chat",
        model=model,
        messages=history,
        stream=body.get("stream") is True,
        client_tools=client_tools,
        tool_choice=_check_tool_choice(body.get("tool_choice"), web),
        web=web,
        thinking=isinstance(thinking, dict) and thinking.get("type") == "enabled",
        params={k: v for k, v in body.items() if k not in _OWN_FIELDS},
        page_signatures=signatures,
    )
