"""Anthropic Messages request → :class:`Turn`.

The conversation is translated into OpenAI Chat Completions messages, the upstream's language.
Web blocks of earlier rounds are dropped (only answers stay in context); the sealed pages of
read links are kept aside in ``turn.page_signatures`` for the loop to restore.
"""

from __future__ import annotations

from typing import Any

from ..core.errors import RequestError
from ..core.fields import bad, non_empty_string, number, positive_int, required, string
from ..core.turn import DomainFilter, ReadUrlSpec, SearchSpec, Turn, WebTools
from ..core.wire import (
    CANNOT_CONTINUE,
    DEEPSEEK_READ_URL,
    DEEPSEEK_SEARCH,
    dumps,
    refuse_deepseek_fields,
)

__all__ = ["parse_messages_request"]

_NATIVE_SEARCH = ("web_search_2025", "web_search_2026")
_NATIVE_FETCH = ("web_fetch_2025", "web_fetch_2026")
_WEB_HISTORY_BLOCKS = frozenset(
    {"server_tool_use", "web_search_tool_result", "web_fetch_tool_result"}
)
_THINKING_ON = frozenset({"enabled", "adaptive", "between_tools"})


def parse_messages_request(body: Any) -> Turn:
    """Validate a Messages request body and translate it; refusals are ``RequestError``."""
    if not isinstance(body, dict):
        raise RequestError("body: must be a JSON object")
    model = required(body, "model", non_empty_string)
    if "max_tokens" not in body:
        raise bad("max_tokens", "Field required")
    params: dict[str, Any] = {"max_tokens": positive_int(body["max_tokens"], "max_tokens")}
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise bad("stream", "must be a boolean")
    for name in ("temperature", "top_p"):
        if body.get(name) is not None:
            params[name] = number(body[name], name)
    stop = body.get("stop_sequences")
    if stop is not None:
        if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
            raise bad("stop_sequences", "must be a list of strings")
        if stop:
            params["stop"] = stop

    web, client_tools = _tools(body.get("tools"))
    tool_choice, serial = _tool_choice(body.get("tool_choice"), web, client_tools)
    if serial and (client_tools or web.any):
        params["parallel_tool_calls"] = False
    messages, signatures = _conversation(body.get("system"), body.get("messages"))
    return Turn(
        protocol="messages",
        model=model,
        messages=messages,
        stream=stream,
        client_tools=client_tools,
        tool_choice=tool_choice,
        web=web,
        thinking=_thinking(body.get("thinking")),
        params=params,
        page_signatures=signatures,
    )


def _thinking(raw: Any) -> bool:
    if raw is None:
        return False
    kind = raw.get("type") if isinstance(raw, dict) else None
    if isinstance(kind, str) and kind in _THINKING_ON:
        return True
    if kind == "disabled":
        return False
    raise bad("thinking.type", "must be `enabled`, `adaptive` or `disabled`")


# --- tools -----------------------------------------------------------------------------------


def _domains(tool: dict[str, Any], path: str) -> DomainFilter:
    lists: list[tuple[str, ...]] = []
    for field in ("allowed_domains", "blocked_domains"):
        value = tool.get(field)
        if value is None:
            lists.append(())
        elif isinstance(value, list) and all(isinstance(d, str) for d in value):
            lists.append(tuple(value))
        else:
            raise bad(f"{path}.{field}", "must be a list of strings")
    return DomainFilter(allowed=lists[0], blocked=lists[1])


def _max_uses(tool: dict[str, Any], path: str) -> int | None:
    value = tool.get("max_uses")
    return None if value is None else positive_int(value, f"{path}.max_uses")


def _tool_name(tool: dict[str, Any], path: str, default: str) -> str:
    name = tool.get("name", default)
    if not isinstance(name, str) or not name:
        raise bad(f"{path}.name", "must be a non-empty string")
    return name


def _web_tool(tool: dict[str, Any], kind: str, path: str) -> SearchSpec | ReadUrlSpec | None:
    """The web tool this declaration stands for, or None when it is not a web tool."""
    if kind in (DEEPSEEK_SEARCH, DEEPSEEK_READ_URL):
        refuse_deepseek_fields(tool, kind)
        name = _tool_name(tool, path, kind)
        if kind == DEEPSEEK_SEARCH:
            return SearchSpec(name, kind, _max_uses(tool, path))
        return ReadUrlSpec(name, kind, _max_uses(tool, path))
    if kind.startswith(_NATIVE_SEARCH):
        name = _tool_name(tool, path, "web_search")
        return SearchSpec(name, kind, _max_uses(tool, path), _domains(tool, path))
    if kind.startswith(_NATIVE_FETCH):
        name = _tool_name(tool, path, "web_fetch")
        return ReadUrlSpec(name, kind, _max_uses(tool, path), _domains(tool, path))
    return None


def _client_tool(tool: dict[str, Any], path: str) -> dict[str, Any]:
    name = _tool_name(tool, path, "")
    schema = tool.get("input_schema")
    if not isinstance(schema, dict):
        raise bad(
            f"{path}.input_schema", "Field required" if schema is None else "must be an object"
        )
    function: dict[str, Any] = {"name": name}
    description = tool.get("description")
    if description is not None:
        function["description"] = string(description, f"{path}.description")
    function["parameters"] = schema
    if tool.get("strict") is True:
        function["strict"] = True
    return {"type": "function", "function": function}


def _tools(raw: Any) -> tuple[WebTools, list[dict[str, Any]]]:
    if raw is None:
        return WebTools(), []
    if not isinstance(raw, list):
        raise bad("tools", "must be a list")
    search: SearchSpec | None = None
    read_url: ReadUrlSpec | None = None
    client: list[dict[str, Any]] = []
    names: set[str] = set()

    def claim(name: str) -> None:
        if name in names:
            raise bad("tools", f"tool names must be unique; `{name}` is declared twice")
        names.add(name)

    for i, tool in enumerate(raw):
        path = f"tools.{i}"
        if not isinstance(tool, dict):
            raise bad(path, "must be an object")
        kind = tool.get("type")
        if kind is None or kind == "custom":
            function_tool = _client_tool(tool, path)
            claim(function_tool["function"]["name"])
            client.append(function_tool)
            continue
        if not isinstance(kind, str):
            raise bad(f"{path}.type", "must be a string")
        spec = _web_tool(tool, kind, path)
        if spec is None:
            raise bad(f"{path}.type", f"unsupported tool type `{kind}`")
        if (search if isinstance(spec, SearchSpec) else read_url) is not None:
            raise RequestError(f"tools: `{kind}` can only be declared once", param="tools")
        claim(spec.name)
        if isinstance(spec, SearchSpec):
            search = spec
        else:
            read_url = spec
    return WebTools(search=search, read_url=read_url), client


def _tool_choice(raw: Any, web: WebTools, client: list[dict[str, Any]]) -> tuple[Any, bool]:
    """The Chat Completions ``tool_choice``, and whether parallel tool calls are disabled."""
    if raw is None:
        return None, False
    if not isinstance(raw, dict):
        raise bad("tool_choice", "must be an object")
    serial = raw.get("disable_parallel_tool_use") is True
    kind = raw.get("type")
    if kind not in ("auto", "any", "tool", "none"):
        raise bad("tool_choice.type", "must be `auto`, `any`, `tool` or `none`")
    if not client and not web.any and kind != "tool":
        return None, False
    if kind == "none":
        return "none", False
    if kind == "auto":
        return "auto", serial
    if kind == "any":
        return ("required" if client and not web.any else "auto"), serial
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise bad("tool_choice.name", "Field required")
    specs = [spec for spec in (web.search, web.read_url) if spec is not None]
    if any(name in (spec.name, spec.declared_type) for spec in specs):
        raise RequestError(f"tool_choice: `{name}` cannot be forced", param="tool_choice")
    if all(tool["function"]["name"] != name for tool in client):
        raise bad("tool_choice.name", f"`{name}` is not a declared tool")
    return {"type": "function", "function": {"name": name}}, serial


# --- conversation ----------------------------------------------------------------------------


def _system_text(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        texts = []
        for i, block in enumerate(raw):
            if not isinstance(block, dict) or block.get("type") != "text":
                raise bad(f"system.{i}", "must be a `text` block")
            texts.append(string(block.get("text"), f"system.{i}.text"))
        return "\n\n".join(texts)
    raise bad("system", "must be a string or a list of text blocks")


def _image_part(block: dict[str, Any], path: str) -> dict[str, Any]:
    source = block.get("source")
    if not isinstance(source, dict):
        raise bad(f"{path}.source", "Field required")
    kind = source.get("type")
    if kind == "base64":
        media = string(source.get("media_type"), f"{path}.source.media_type")
        data = string(source.get("data"), f"{path}.source.data")
        url = f"data:{media};base64,{data}"
    elif kind == "url":
        url = string(source.get("url"), f"{path}.source.url")
    else:
        raise bad(f"{path}.source.type", "must be `base64` or `url`")
    return {"type": "image_url", "image_url": {"url": url}}


def _blocks(content: Any, path: str) -> list[tuple[str, dict[str, Any], str]]:
    """The (type, block, path) of each content block; a string is one text block."""
    if isinstance(content, str):
        return [("text", {"type": "text", "text": content}, path)]
    if not isinstance(content, list):
        raise bad(path, "must be a string or a list of content blocks")
    out = []
    for i, block in enumerate(content):
        where = f"{path}.{i}"
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise bad(where, "must be a content block with a `type`")
        out.append((block["type"], block, where))
    return out


def _tool_result(block: dict[str, Any], path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A ``tool`` message, and the images of the result (they go in the user message)."""
    call_id = string(block.get("tool_use_id"), f"{path}.tool_use_id")
    content = block.get("content", "")
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for kind, part, where in _blocks(content, f"{path}.content"):
        if kind == "text":
            texts.append(string(part.get("text"), f"{where}.text"))
        elif kind == "image":
            images.append(_image_part(part, where))
        else:
            raise bad(f"{where}.type", f"unsupported content block type `{kind}` in a tool result")
    text = "\n".join(texts)
    if block.get("is_error") is True:
        text = f"Error: {text}" if text else "Error"
    return {"role": "tool", "tool_call_id": call_id, "content": text}, images


def _tool_call(block: dict[str, Any], path: str) -> dict[str, Any]:
    arguments = block.get("input", {})
    if not isinstance(arguments, dict):
        raise bad(f"{path}.input", "must be an object")
    return {
        "id": string(block.get("id"), f"{path}.id"),
        "type": "function",
        "function": {
            "name": string(block.get("name"), f"{path}.name"),
            "arguments": dumps(arguments),
        },
    }


class _History:
    """Builds the Chat Completions conversation and remembers where each round began."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.signatures: list[tuple[int, str]] = []
        self.round_start: int | None = None

    def user(self, content: Any, path: str) -> None:
        tools: list[dict[str, Any]] = []
        parts: list[dict[str, Any]] = []
        blocks = _blocks(content, path)
        if not blocks:
            raise bad(path, "must not be empty")
        for kind, block, where in blocks:
            if kind == "text":
                parts.append({"type": "text", "text": string(block.get("text"), f"{where}.text")})
            elif kind == "image":
                parts.append(_image_part(block, where))
            elif kind == "tool_result":
                message, images = _tool_result(block, where)
                tools.append(message)
                parts.extend(images)
            else:
                raise bad(f"{where}.type", f"unsupported content block type `{kind}`")
        self.messages.extend(tools)
        if not parts:
            return
        if not tools:
            self.round_start = len(self.messages)
        if all(part["type"] == "text" for part in parts):
            text: str | list[dict[str, Any]] = "\n\n".join(part["text"] for part in parts)
            self.messages.append({"role": "user", "content": text})
        else:
            self.messages.append({"role": "user", "content": parts})

    def assistant(self, content: Any, path: str, *, last: bool) -> None:
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        used_web = False
        for kind, block, where in _blocks(content, path):
            if kind == "text":
                texts.append(string(block.get("text"), f"{where}.text"))
            elif kind == "tool_use":
                calls.append(_tool_call(block, where))
            elif kind in _WEB_HISTORY_BLOCKS:
                used_web = True
                signature = block.get("signature")
                if isinstance(signature, str) and signature and self.round_start is not None:
                    self.signatures.append((self.round_start, signature))
            elif kind not in ("thinking", "redacted_thinking"):
                raise bad(f"{where}.type", f"unsupported content block type `{kind}`")
        if last and used_web:
            raise RequestError(CANNOT_CONTINUE, param="messages")
        text = "".join(texts)
        if not text and not calls:
            return
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = calls
        self.messages.append(message)


def _conversation(system: Any, raw: Any) -> tuple[list[dict[str, Any]], list[tuple[int, str]]]:
    if raw is None:
        raise bad("messages", "Field required")
    if not isinstance(raw, list) or not raw:
        raise bad("messages", "must be a non-empty list")
    history = _History()
    if system is not None:
        text = _system_text(system)
        if text:
            history.messages.append({"role": "system", "content": text})
    for i, message in enumerate(raw):
        path = f"messages.{i}"
        if not isinstance(message, dict):
            raise bad(path, "must be an object")
        role = message.get("role")
        if "content" not in message:
            raise bad(f"{path}.content", "Field required")
        if role == "user":
            history.user(message["content"], f"{path}.content")
        elif role == "assistant":
            history.assistant(message["content"], f"{path}.content", last=i == len(raw) - 1)
        else:
            raise bad(f"{path}.role", "must be `user` or `assistant`")
    return history.messages, history.signatures
