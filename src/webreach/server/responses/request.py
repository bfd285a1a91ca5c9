"""OpenAI Responses request → :class:`Turn` (Chat Completions messages for the upstream).

Everything the server cannot honour is refused here with a 400 naming the field, so the loop
only ever sees requests it can answer.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Annotated

from ..core.errors import RequestError
from ..core.extensions import parse_extensions
from ..core.fields import (
    Boolean,
    JsonObject,
    ModelName,
    Number,
    PositiveInt,
    Request,
    String,
    StringOrObject,
    checked,
    validate,
    when_missing,
)
from ..core.turn import (
    JSON,
    PageRef,
    Turn,
)
from ..core.wire import dumps
from .tools import (
    TOOL_SEARCH,
    custom_arguments,
    loaded_tools_text,
    parse_tool_choice,
    parse_tools,
    upstream_name,
)

__all__ = ["parse_request"]

_OPENAI_SEARCH = re.compile(r"web_search(?:_preview)?(?:_\d{4}_\d{2}_\d{2})?")
_STATELESS = "not supported; send the whole conversation in `input`"
_REFUSED_PARAMS = {
    "conversation": _STATELESS,
    "top_logprobs": "not supported",
}
_NO_THINKING_EFFORTS = ("none", "minimal")
_NO_PARAMETERS: JSON = {"type": "object", "properties": {}}
_TEXT_PARTS = ("input_text", "output_text", "text")
_IMAGE_DETAILS = ("auto", "low", "high")


Array = Annotated[list[object], checked(lambda v: isinstance(v, list), "must be an array")]


class ResponsesRequest(Request):
    """What the server reads of a Responses request; the rest passes through unread."""

    model: ModelName = when_missing()
    input: object = None
    instructions: String | None = None
    stream: Boolean | None = None
    temperature: Number | None = None
    top_p: Number | None = None
    max_output_tokens: PositiveInt | None = None
    tools: Array | None = None
    tool_choice: StringOrObject | None = None
    parallel_tool_calls: Boolean | None = None
    user: String | None = None
    metadata: JsonObject | None = None
    store: Boolean | None = None
    reasoning: JsonObject | None = None
    text: JsonObject | None = None
    include: Array | None = None
    previous_response_id: String | None = None


def parse_request(body: JSON) -> Turn:
    """Translate one Responses request; raise :class:`RequestError` for what is refused."""
    for name, why in _REFUSED_PARAMS.items():
        if body.get(name) is not None:
            raise RequestError(f"{name}: {why}", param=name)
    request = validate(ResponsesRequest, body)
    _check_text_format(request.text)
    given = _Input()
    messages, pages = given.convert(request.instructions, request.input)
    web, client_tools = parse_tools(request.tools, given.loaded)
    tool_choice, forced = parse_tool_choice(request.tool_choice, web, client_tools)
    return Turn(
        protocol="responses",
        model=request.model,
        messages=messages,
        stream=request.stream is True,
        client_tools=client_tools,
        tool_choice=tool_choice,
        forced_web=forced,
        web=web,
        thinking=_thinking(request.reasoning),
        effort=_effort_of(request.reasoning),
        thinking_off=_effort_of(request.reasoning) in _NO_THINKING_EFFORTS,
        params=_params(request),
        pages=pages,
        store=request.store is not False,
        previous_response_id=request.previous_response_id,
        extensions=parse_extensions(body),
    )


def _check_text_format(text: JSON | None) -> None:
    if text is None:
        return
    fmt = text.get("format")
    if fmt is None:
        return
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind != "text":
        raise RequestError(
            f"text.format: `{kind}` is not supported; only `text` is", param="text.format"
        )


def _effort_of(reasoning: JSON | None) -> str | None:
    effort = reasoning.get("effort") if reasoning is not None else None
    return effort if isinstance(effort, str) else None


def _thinking(reasoning: JSON | None) -> bool:
    if reasoning is None:
        return False
    effort = reasoning.get("effort")
    return isinstance(effort, str) and effort not in _NO_THINKING_EFFORTS


def _params(request: ResponsesRequest) -> JSON:
    params: JSON = {}
    for target, value in (
        ("max_tokens", request.max_output_tokens),
        ("temperature", request.temperature),
        ("top_p", request.top_p),
    ):
        if value is not None:
            params[target] = value
    return params


# --- input ---------------------------------------------------------------------------------


class _Input:
    """Folds Responses input items into Chat messages, one item at a time."""

    def __init__(self) -> None:
        self.system: list[str] = []
        self.messages: list[JSON] = []
        self.pages: list[PageRef] = []
        self.last_user: int | None = None
        self.loaded: list[object] = []
        """Tools the client added in the input (``additional_tools``, a tool search's)."""

    def convert(self, instructions: str | None, raw: object) -> tuple[list[JSON], list[PageRef]]:
        if instructions:
            self.system.append(instructions)
        if raw is None:
            raise RequestError("input: required", param="input")
        items = [{"role": "user", "content": raw}] if isinstance(raw, str) else raw
        if not isinstance(items, list):
            raise RequestError("input: must be a string or an array of items", param="input")
        for item in items:
            if not isinstance(item, dict):
                raise RequestError("input: every item must be an object", param="input")
            self._item(item)
        if items:
            _refuse_continuation(items[-1])
        if not self.system:
            return self.messages, self.pages
        lead: JSON = {"role": "system", "content": "\n\n".join(self.system)}
        shifted = [replace(page, round=page.round + 1) for page in self.pages]
        return [lead, *self.messages], shifted

    def _item(self, item: JSON) -> None:
        kind = item.get("type")
        if kind is None and "role" in item:
            kind = "message"
        if kind == "message":
            self._message(item)
        elif kind in ("function_call", "custom_tool_call"):
            self._function_call(item, kind)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._function_output(item, kind)
        elif kind == "tool_search_call":
            self._tool_search_call(item)
        elif kind == "tool_search_output":
            self._tool_search_output(item)
        elif kind == "additional_tools":
            self.loaded.extend(_tools_of(item, kind))
        elif kind == "web_search_call":
            read = item.get("kind") == "read_link" or bool(item.get("signature"))
            if read and self.last_user is not None:
                page = PageRef.of(self.last_user, item.get("signature"), item.get("id"))
                if page is not None:
                    self.pages.append(page)
        elif kind == "reasoning":
            return
        elif kind == "item_reference":
            raise RequestError("input: `item_reference` items are not supported", param="input")
        else:
            raise RequestError(f"input: item type `{kind}` is not supported", param="input")

    def _message(self, item: JSON) -> None:
        role = item.get("role")
        content = _content(item.get("content"), role)
        if role in ("system", "developer"):
            if not isinstance(content, str):
                raise RequestError(
                    f"input: images are not supported in `{role}` messages", param="input"
                )
            if content:
                self.system.append(content)
        elif role == "user":
            self.last_user = len(self.messages)
            self.messages.append({"role": "user", "content": content})
        elif role == "assistant":
            if not isinstance(content, str):
                raise RequestError(
                    "input: images are not supported in `assistant` messages", param="input"
                )
            previous = self.messages[-1] if self.messages else None
            if previous and previous["role"] == "assistant" and "tool_calls" not in previous:
                texts = (previous["content"], content)
                previous["content"] = "\n\n".join(t for t in texts if isinstance(t, str) and t)
            else:
                self.messages.append({"role": "assistant", "content": content})
        else:
            raise RequestError(f"input: message role `{role}` is not supported", param="input")

    def _function_call(self, item: JSON, kind: str) -> None:
        """A call of the client's tool, under the name its upstream function has."""
        call_id, name, namespace = item.get("call_id"), item.get("name"), item.get("namespace")
        if not isinstance(call_id, str) or not isinstance(name, str):
            raise RequestError(f"input: a `{kind}` needs `call_id` and `name`", param="input")
        if kind == "custom_tool_call":
            given = item.get("input")
            arguments = custom_arguments(given if isinstance(given, str) else "")
        else:
            given = item.get("arguments")
            arguments = given if isinstance(given, str) else ""
        called = upstream_name(name, namespace if isinstance(namespace, str) else None)
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": called, "arguments": arguments},
        }
        previous = self.messages[-1] if self.messages else None
        calls = previous.get("tool_calls") if previous else None
        if previous and previous["role"] == "assistant" and isinstance(calls, list):
            calls.append(call)
        elif previous and previous["role"] == "assistant":
            previous["tool_calls"] = [call]
        else:
            self.messages.append({"role": "assistant", "content": None, "tool_calls": [call]})

    def _tool_search_call(self, item: JSON) -> None:
        arguments = item.get("arguments")
        call = {
            "type": "function_call",
            "call_id": item.get("call_id") or item.get("id"),
            "name": TOOL_SEARCH,
            "arguments": dumps(arguments if isinstance(arguments, dict) else {}),
        }
        self._function_call(call, "tool_search_call")

    def _tool_search_output(self, item: JSON) -> None:
        tools = _tools_of(item, "tool_search_output")
        self.loaded.extend(tools)
        call_id = item.get("call_id") or item.get("id")
        output = {"call_id": call_id, "output": loaded_tools_text(tools)}
        self._function_output(output, "tool_search_output")

    def _function_output(self, item: JSON, kind: str) -> None:
        call_id = item.get("call_id")
        if not isinstance(call_id, str):
            raise RequestError(f"input: a `{kind}` needs a `call_id`", param="input")
        output = _content(item.get("output"), "tool")
        if not isinstance(output, str):
            raise RequestError(f"input: images are not supported in `{kind}`", param="input")
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": output})


def _tools_of(item: JSON, kind: str) -> list[object]:
    tools = item.get("tools")
    if not isinstance(tools, list):
        raise RequestError(f"input: a `{kind}` item needs a `tools` array", param="input")
    return tools


def _refuse_continuation(last: JSON) -> None:
    kind = last.get("type") or ("message" if "role" in last else None)
    if kind == "message" and last.get("role") == "assistant":
        what = "an assistant `message`"
    elif kind in ("reasoning", "web_search_call"):
        what = f"a `{kind}` item"
    else:
        return
    raise RequestError(
        f"input: ends with {what}; continuing a reply is not supported in the Responses API",
        param="input",
    )


def _content(raw: object, role: object) -> str | list[JSON]:
    """Message content as a Chat string, or Chat parts when it carries images."""
    if isinstance(raw, str):
        return raw
    if raw is None:
        return ""
    if not isinstance(raw, list):
        raise RequestError("input: content must be a string or an array of parts", param="input")
    parts = [_part(part) for part in raw]
    texts = [part["text"] for part in parts if part["type"] == "text"]
    if len(texts) == len(parts):
        separator = "" if role == "assistant" else "\n"
        return separator.join(map(str, texts))
    return parts


def _part(part: object) -> JSON:
    if not isinstance(part, dict):
        raise RequestError("input: every content part must be an object", param="input")
    kind = part.get("type")
    if kind in _TEXT_PARTS:
        return {"type": "text", "text": _text(part.get("text"))}
    if kind == "refusal":
        return {"type": "text", "text": _text(part.get("refusal"))}
    if kind == "input_image":
        url = part.get("image_url")
        if not isinstance(url, str) or not url:
            raise RequestError(
                "input: `input_image` needs an `image_url`; `file_id` is not supported",
                param="input",
            )
        image: JSON = {"url": url}
        if part.get("detail") in _IMAGE_DETAILS:
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    raise RequestError(f"input: content part type `{kind}` is not supported", param="input")


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise RequestError("input: a text part needs a string `text`", param="input")
    return value
