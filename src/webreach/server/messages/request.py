"""Anthropic Messages request → :class:`Turn`.

The conversation is translated into OpenAI Chat Completions messages, the upstream's language.
Web blocks of earlier rounds are dropped (only answers stay in context); the encrypted pages of
read links are kept aside in ``turn.pages`` for the loop to restore.
"""

from __future__ import annotations

from typing import NamedTuple

from ..core.turn.errors import RequestError
from ..core.turn.extensions import parse_extensions
from ..core.turn.shape import (
    ClientTool,
    ForcedWeb,
    PageRef,
    ReadUrlSpec,
    SearchSpec,
    ToolChoice,
    Turn,
    WebTools,
)
from ..core.wire.fields import (
    JSON,
    bad,
    validate,
)
from ..core.wire.filter_fields import location_hint
from ..core.wire.framing import (
    CANNOT_CONTINUE,
    DEEPSEEK_READ_URL,
    DEEPSEEK_SEARCH,
    dumps,
    refuse_deepseek_fields,
)
from .documents import document_part
from .settings import answer_format, effort, refuse_unhonoured, thinking, upstream_params
from .shapes_in import (
    ClientDeclared,
    Declared,
    ImageBlock,
    MessageParam,
    MessagesRequest,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    WebDeclared,
)
from .shapes_in import ToolChoice as ChoiceParam

__all__ = ["parse_messages_request"]

_NATIVE_SEARCH = ("web_search_2025", "web_search_2026")
_NATIVE_FETCH = ("web_fetch_2025", "web_fetch_2026")
_WEB_HISTORY_BLOCKS = ("server_tool_use", "web_search_tool_result", "web_fetch_tool_result")


def parse_messages_request(body: JSON) -> Turn:
    """Validate a Messages request body and translate it; refusals are ``RequestError``."""
    request = validate(MessagesRequest, body)
    refuse_unhonoured(request)
    params = upstream_params(request)
    web, client_tools = _tools(request.tools)
    tool_choice, serial, forced = _tool_choice(request.tool_choice, web, client_tools)
    if serial and (client_tools or web.any):
        params["parallel_tool_calls"] = False
    history = _conversation(request)
    return Turn(
        protocol="messages",
        model=request.model,
        messages=history.messages,
        stream=request.stream,
        client_tools=client_tools,
        tool_choice=tool_choice,
        forced_web=forced,
        web=web,
        thinking=thinking(request),
        effort=effort(request),
        thinking_off=request.thinking is not None and request.thinking.type == "disabled",
        params=params,
        pages=history.pages,
        continued=history.continued,
        extensions=parse_extensions(body),
        answer_format=answer_format(request),
    )


# --- tools -----------------------------------------------------------------------------------


def _web_tool(tool: JSON, kind: str, path: str) -> SearchSpec | ReadUrlSpec | None:
    """The web tool this declaration stands for, or None when it is not a web tool."""
    if kind in (DEEPSEEK_SEARCH, DEEPSEEK_READ_URL):
        refuse_deepseek_fields(tool, kind)
        declared = validate(Declared, tool, path)
        name = declared.name or kind
        if kind == DEEPSEEK_SEARCH:
            return SearchSpec(name, kind, declared.max_uses)
        return ReadUrlSpec(name, kind, declared.max_uses)
    if kind.startswith(_NATIVE_SEARCH + _NATIVE_FETCH):
        web = validate(WebDeclared, tool, path)
        if kind.startswith(_NATIVE_SEARCH):
            return SearchSpec(
                web.name or "web_search",
                kind,
                web.max_uses,
                web.domains(),
                location=location_hint(web.user_location),
                filters=web.search_filters(path),
            )
        return ReadUrlSpec(web.name or "web_fetch", kind, web.max_uses, web.domains())
    return None


def _client_tool(tool: JSON, path: str) -> ClientTool:
    declared = validate(ClientDeclared, tool, path)
    if not isinstance(declared.input_schema, dict):
        raise bad(f"{path}.input_schema", "must be an object")
    strict = True if declared.strict is True else None
    return ClientTool.function(declared.name, declared.description, declared.input_schema, strict)


def _tools(declared: list[JSON] | None) -> tuple[WebTools, list[ClientTool]]:
    search: SearchSpec | None = None
    read_url: ReadUrlSpec | None = None
    client: list[ClientTool] = []
    names: set[str] = set()

    def claim(name: str) -> None:
        if name in names:
            raise bad("tools", f"tool names must be unique; `{name}` is declared twice")
        names.add(name)

    for i, tool in enumerate(declared or ()):
        path = f"tools.{i}"
        kind = tool.get("type")
        if kind is None or kind == "custom":
            function_tool = _client_tool(tool, path)
            claim(function_tool.name)
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


class _Choice(NamedTuple):
    """The Chat Completions ``tool_choice``, whether parallel calls are off, and the web tool
    the first step must call (an Anthropic-native one the client forced)."""

    choice: ToolChoice
    serial: bool = False
    forced: ForcedWeb = None


def _tool_choice(choice: ChoiceParam | None, web: WebTools, client: list[ClientTool]) -> _Choice:
    if choice is None:
        return _Choice(None)
    serial = choice.disable_parallel_tool_use is True
    kind = choice.type
    if not client and not web.any and kind != "tool":
        return _Choice(None)
    if kind == "none":
        return _Choice("none")
    if kind == "auto":
        return _Choice("auto", serial)
    if kind == "any":
        return _Choice("required", serial)
    name = choice.name
    if not isinstance(name, str) or not name:
        raise bad("tool_choice.name", "Field required")
    for spec in (web.search, web.read_url):
        if spec is None or name not in (spec.name, spec.declared_type):
            continue
        if not spec.declared_type.startswith(_NATIVE_SEARCH + _NATIVE_FETCH):
            raise RequestError(f"tool_choice: `{name}` cannot be forced", param="tool_choice")
        return _Choice("auto", serial, "search" if isinstance(spec, SearchSpec) else "read")
    if all(tool.name != name for tool in client):
        raise bad("tool_choice.name", f"`{name}` is not a declared tool")
    return _Choice({"type": "function", "function": {"name": name}}, serial)


# --- conversation ----------------------------------------------------------------------------


def _image_part(block: JSON, path: str) -> JSON:
    source = validate(ImageBlock, block, path).source
    if source.type == "base64":
        media = validate_string(source.media_type, f"{path}.source.media_type")
        data = validate_string(source.data, f"{path}.source.data")
        url = f"data:{media};base64,{data}"
    else:
        url = validate_string(source.url, f"{path}.source.url")
    return {"type": "image_url", "image_url": {"url": url}}


def validate_string(value: str | None, path: str) -> str:
    if value is None:
        raise bad(path, "must be a string")
    return value


def _text(block: JSON, path: str) -> str:
    return validate(TextBlock, block, path).text


def _tool_result(block: JSON, path: str) -> tuple[JSON, list[JSON]]:
    """A ``tool`` message, and the images of the result (they go in the user message)."""
    result = validate(ToolResultBlock, block, path)
    texts: list[str] = []
    images: list[JSON] = []
    for i, part in enumerate(result.content):
        where, kind = f"{path}.content.{i}", part["type"]
        if kind == "text":
            texts.append(_text(part, where))
        elif kind == "image":
            images.append(_image_part(part, where))
        else:
            raise bad(f"{where}.type", f"unsupported content block type `{kind}` in a tool result")
    text = "\n".join(texts)
    if result.is_error is True:
        text = f"Error: {text}" if text else "Error"
    return {"role": "tool", "tool_call_id": result.tool_use_id, "content": text}, images


def _tool_call(block: JSON, path: str) -> JSON:
    call = validate(ToolUseBlock, block, path)
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": dumps(call.input)},
    }


class _History:
    """Builds the Chat Completions conversation and remembers where each round began."""

    def __init__(self) -> None:
        self.messages: list[JSON] = []
        self.pages: list[PageRef] = []
        self.round_start: int | None = None
        self.continued = False

    def user(self, blocks: list[JSON], path: str) -> None:
        if not blocks:
            raise bad(path, "must not be empty")
        tools: list[JSON] = []
        parts: list[JSON] = []
        for i, block in enumerate(blocks):
            where, kind = f"{path}.{i}", block["type"]
            if kind == "text":
                parts.append({"type": "text", "text": _text(block, where)})
            elif kind == "image":
                parts.append(_image_part(block, where))
            elif kind == "document":
                parts.append(document_part(block, where))
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
        texts = [part["text"] for part in parts if part["type"] == "text"]
        if len(texts) == len(parts):
            self.messages.append({"role": "user", "content": "\n\n".join(map(str, texts))})
        else:
            self.messages.append({"role": "user", "content": parts})

    def system(self, blocks: list[JSON], path: str) -> None:
        """A system message where the client put it: the upstream reads it at that point."""
        texts = []
        for i, block in enumerate(blocks):
            if block["type"] != "text":
                raise bad(f"{path}.{i}.type", "must be `text` in a `system` message")
            texts.append(_text(block, f"{path}.{i}"))
        text = "\n\n".join(t for t in texts if t)
        if text:
            self.messages.append({"role": "system", "content": text})

    def assistant(self, blocks: list[JSON], path: str, *, last: bool) -> None:
        texts: list[str] = []
        calls: list[JSON] = []
        used_web = False
        for i, block in enumerate(blocks):
            where, kind = f"{path}.{i}", block["type"]
            if kind == "text":
                texts.append(_text(block, where))
            elif kind == "tool_use":
                calls.append(_tool_call(block, where))
            elif kind in _WEB_HISTORY_BLOCKS:
                used_web = True
                if kind == "web_fetch_tool_result" and self.round_start is not None:
                    page = PageRef.of(
                        self.round_start, block.get("signature"), block.get("tool_use_id")
                    )
                    if page is not None:
                        self.pages.append(page)
            elif kind not in ("thinking", "redacted_thinking"):
                raise bad(f"{where}.type", f"unsupported content block type `{kind}`")
        if last and used_web:
            raise RequestError(CANNOT_CONTINUE, param="messages")
        text = "".join(texts)
        if not text and not calls:
            return
        message: JSON = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = calls
        self.continued = last and not calls
        self.messages.append(message)


def _conversation(request: MessagesRequest) -> _History:
    history = _History()
    system = "\n\n".join(
        _text(block, f"system.{i}") for i, block in enumerate(request.system or ())
    )
    if system:
        history.messages.append({"role": "system", "content": system})
    last = len(request.messages) - 1
    for i, message in enumerate(request.messages):
        _add(history, message, f"messages.{i}.content", last=i == last)
    return history


def _add(history: _History, message: MessageParam, path: str, *, last: bool) -> None:
    if message.role == "user":
        history.user(message.content, path)
    elif message.role == "system":
        history.system(message.content, path)
    else:
        history.assistant(message.content, path, last=last)
