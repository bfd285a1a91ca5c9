"""OpenAI Responses request → :class:`Turn` (Chat Completions messages for the upstream).

Everything the server cannot honour is refused here with a 400 naming the field, so the loop
only ever sees requests it can answer.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar, assert_never

from ..core.turn.errors import RequestError
from ..core.turn.extensions import parse_extensions
from ..core.turn.shape import JSON, PageRef, Turn
from ..core.wire.fields import validate
from ..core.wire.framing import dumps
from .echo import echo_of
from .input_files import input_file
from .shapes_in import (
    AdditionalToolsItem,
    CustomToolCallItem,
    CustomToolOutputItem,
    FunctionCallItem,
    FunctionOutputItem,
    ImagePart,
    ItemHead,
    MessageItem,
    PartHead,
    ReasoningInput,
    ReasoningParam,
    RefusalPart,
    ResponsesRequest,
    TextPart,
    ToolSearchCallItem,
    ToolSearchOutputItem,
    WebSearchCallItem,
    read,
)
from .text_format import answer_format
from .tools import (
    TOOL_SEARCH,
    custom_arguments,
    loaded_tools_text,
    parse_tool_choice,
    parse_tools,
    upstream_name,
)
from .whole_input import InputItem, InputMessage, Part, read_items

__all__ = ["parse_request"]

_STATELESS = "not supported; send the whole conversation in `input`"
_REFUSED_PARAMS = {
    "conversation": _STATELESS,
    "top_logprobs": "not supported",
}
_NO_THINKING_EFFORTS = ("none", "minimal")
_TEXT_PARTS = ("input_text", "output_text", "text")
_TEXT_PROBLEM = "input: a text part needs a string `text`"

C = TypeVar("C", bound=FunctionCallItem)
L = TypeVar("L", bound=AdditionalToolsItem)


def parse_request(body: JSON) -> Turn:
    """Translate one Responses request; raise :class:`RequestError` for what is refused."""
    for name, why in _REFUSED_PARAMS.items():
        if body.get(name) is not None:
            raise RequestError(f"{name}: {why}", param=name)
    request = validate(ResponsesRequest, body)
    shape = answer_format(request.text)
    given = _Input()
    messages, pages = given.convert(request.instructions, request.input)
    web, client_tools = parse_tools(request.tools, given.loaded)
    tool_choice, forced = parse_tool_choice(request.tool_choice, web, client_tools)
    params = _params(request)
    if request.parallel_tool_calls is not None and (client_tools or web.any):
        params["parallel_tool_calls"] = request.parallel_tool_calls
    effort = _effort_of(request.reasoning)
    return Turn(
        protocol="responses",
        model=request.model,
        messages=messages,
        stream=request.stream is True,
        client_tools=client_tools,
        tool_choice=tool_choice,
        forced_web=forced,
        web=web,
        thinking=effort is not None and effort not in _NO_THINKING_EFFORTS,
        effort=effort,
        thinking_off=effort in _NO_THINKING_EFFORTS,
        params=params,
        pages=pages,
        store=request.store is not False,
        previous_response_id=request.previous_response_id,
        extensions=parse_extensions(body),
        echo=echo_of(request),
        answer_format=shape,
    )


def _effort_of(reasoning: ReasoningParam | None) -> str | None:
    return reasoning.effort if reasoning is not None else None


def _params(request: ResponsesRequest) -> JSON:
    params: JSON = {}
    for target, value in (
        ("max_tokens", request.max_output_tokens),
        ("temperature", request.temperature),
        ("top_p", request.top_p),
        ("presence_penalty", request.presence_penalty),
        ("frequency_penalty", request.frequency_penalty),
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
        self.called: set[str] = set()
        """The ``call_id`` of every call so far: an output must answer one of them."""

    def convert(self, instructions: str | None, raw: object) -> tuple[list[JSON], list[PageRef]]:
        if instructions:
            self.system.append(instructions)
        if raw is None:
            raise RequestError("input: required", param="input")
        items = [{"role": "user", "content": raw}] if isinstance(raw, str) else raw
        if not isinstance(items, list):
            raise RequestError("input: must be a string or an array of items", param="input")
        whole = read_items(items)
        if whole is not None:
            for model in whole:
                self._read_item(model)
            if whole:
                _refuse_continuation(*_ending(whole[-1]))
        else:
            last: ItemHead | None = None
            for item in items:
                last = _head(item)
                self._item(last, item)
            if last is not None:
                _refuse_continuation(last.kind, last.role)
        if not self.system:
            return self.messages, self.pages
        lead: JSON = {"role": "system", "content": "\n\n".join(self.system)}
        shifted = [replace(page, round=page.round + 1) for page in self.pages]
        return [lead, *self.messages], shifted

    def _read_item(self, item: InputItem) -> None:
        """One item of an input read whole (:func:`read_items`). Its exact class tells its kind
        (several are subclasses of another), most frequent first: this runs per item of a long
        history, and a miss of ``isinstance`` on a model class costs more than the rest."""
        if type(item) is InputMessage:
            self._message(item.role, _read_content(item.content, item.role))
        elif type(item) is FunctionCallItem:
            self._function_call(item)
        elif type(item) is FunctionOutputItem:
            self._function_output(item, "function_call_output")
        elif type(item) is ReasoningInput:
            return
        elif type(item) is CustomToolCallItem:
            self._function_call(item, custom_arguments(item.input or ""))
        elif type(item) is CustomToolOutputItem:
            self._function_output(item, "custom_tool_call_output")
        elif type(item) is WebSearchCallItem:
            self._web_search_call(item)
        elif type(item) is ToolSearchCallItem:
            self._tool_search_call(item)
        elif type(item) is ToolSearchOutputItem:
            self._tool_search_output(item)
        elif type(item) is AdditionalToolsItem:
            self.loaded.extend(item.tools)

    def _item(self, head: ItemHead, item: object) -> None:
        """One item of an input read item by item: the first wrong one is refused in its words."""
        kind = head.kind
        if kind == "message":
            message = read(MessageItem, item, "")
            self._message(message.role, _content(message.content, message.role))
        elif kind == "function_call":
            self._function_call(_call(FunctionCallItem, item, kind))
        elif kind == "custom_tool_call":
            call = _call(CustomToolCallItem, item, kind)
            self._function_call(call, custom_arguments(call.input or ""))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._function_output(_output(item, kind), kind)
        elif kind == "tool_search_call":
            self._tool_search_call(read(ToolSearchCallItem, item, ""))
        elif kind == "tool_search_output":
            self._tool_search_output(_tools_item(ToolSearchOutputItem, item, kind))
        elif kind == "additional_tools":
            self.loaded.extend(_tools_item(AdditionalToolsItem, item, kind).tools)
        elif kind == "web_search_call":
            self._web_search_call(read(WebSearchCallItem, item, ""))
        elif kind == "reasoning":
            return
        elif kind == "item_reference":
            raise RequestError("input: `item_reference` items are not supported", param="input")
        else:
            raise RequestError(f"input: item type `{kind}` is not supported", param="input")

    def _web_search_call(self, web: WebSearchCallItem) -> None:
        if web.read_link and self.last_user is not None:
            page = PageRef.of(self.last_user, web.signature, web.id)
            if page is not None:
                self.pages.append(page)

    def _message(self, role: object, content: str | list[JSON]) -> None:
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

    def _function_call(self, item: FunctionCallItem, arguments: str | None = None) -> None:
        """A call of the client's tool, under the name its upstream function has."""
        self.called.add(item.call_id)
        call = {
            "id": item.call_id,
            "type": "function",
            "function": {
                "name": upstream_name(item.name, item.namespace),
                "arguments": (item.arguments or "") if arguments is None else arguments,
            },
        }
        previous = self.messages[-1] if self.messages else None
        if previous is None or previous["role"] != "assistant":
            self.messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            return
        calls = previous.setdefault("tool_calls", [])
        if isinstance(calls, list):
            calls.append(call)
        else:
            previous["tool_calls"] = [call]

    def _tool_search_call(self, item: ToolSearchCallItem) -> None:
        call = {"call_id": item.ref, "name": TOOL_SEARCH, "arguments": dumps(item.arguments or {})}
        self._function_call(_call(FunctionCallItem, call, "tool_search_call"))

    def _tool_search_output(self, item: ToolSearchOutputItem) -> None:
        self.loaded.extend(item.tools)
        output = {"call_id": item.ref, "output": loaded_tools_text(item.tools)}
        self._function_output(_output(output, "tool_search_output"), "tool_search_output")

    def _function_output(self, item: FunctionOutputItem, kind: str) -> None:
        output = _content(item.output, "tool")
        if not isinstance(output, str):
            raise RequestError(f"input: images are not supported in `{kind}`", param="input")
        if kind != "tool_search_output" and item.call_id not in self.called:
            raise RequestError(
                f"input: the `{kind}` of call_id `{item.call_id}` answers no call earlier in "
                "the conversation",
                param="input",
            )
        self.messages.append({"role": "tool", "tool_call_id": item.call_id, "content": output})


def _call(shape: type[C], item: object, kind: str) -> C:
    return read(shape, item, f"input: a `{kind}` needs `call_id` and `name`")


def _output(item: object, kind: str) -> FunctionOutputItem:
    return read(FunctionOutputItem, item, f"input: a `{kind}` needs a `call_id`")


def _tools_item(shape: type[L], item: object, kind: str) -> L:
    return read(shape, item, f"input: a `{kind}` item needs a `tools` array")


def _head(item: object) -> ItemHead:
    return read(ItemHead, item, "input: every item must be an object")


def _ending(item: InputItem) -> tuple[str, object]:
    """The kind and role of the last item read whole, as its :class:`ItemHead` tells them."""
    match item:
        case InputMessage(role=role):
            return "message", role
        case WebSearchCallItem():
            return "web_search_call", None
        case ReasoningInput():
            return "reasoning", None
    return "", None


def _refuse_continuation(kind: object, role: object) -> None:
    if kind == "message" and role == "assistant":
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
    return _joined([_part(part) for part in raw], role)


def _read_content(content: str | list[Part] | None, role: object) -> str | list[JSON]:
    """Message content read with its item (:class:`InputMessage`), as :func:`_content` makes it."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    return _joined([_read_part(part) for part in content], role)


def _joined(parts: list[JSON], role: object) -> str | list[JSON]:
    texts = [part["text"] for part in parts if part["type"] == "text"]
    if len(texts) == len(parts):
        separator = "" if role == "assistant" else "\n"
        return separator.join(map(str, texts))
    return parts


def _read_part(part: Part) -> JSON:
    match part:
        case TextPart(text=text) | RefusalPart(refusal=text):
            return {"type": "text", "text": text}
        case ImagePart():
            return _image(part)
    assert_never(part)


def _part(part: object) -> JSON:
    kind = read(PartHead, part, "input: every content part must be an object").type
    if kind in _TEXT_PARTS:
        return {"type": "text", "text": read(TextPart, part, _TEXT_PROBLEM).text}
    if kind == "refusal":
        return {"type": "text", "text": read(RefusalPart, part, _TEXT_PROBLEM).refusal}
    if kind == "input_file":
        return input_file(part)
    if kind == "input_image":
        image = read(
            ImagePart,
            part,
            "input: `input_image` needs an `image_url`; `file_id` is not supported",
        )
        return _image(image)
    raise RequestError(f"input: content part type `{kind}` is not supported", param="input")


def _image(image: ImagePart) -> JSON:
    url: JSON = {"url": image.image_url}
    if image.detail is not None:
        url["detail"] = image.detail
    return {"type": "image_url", "image_url": url}
