"""Chat Completions requests: web tools out of ``tools``, server tool calls out of the history."""

from __future__ import annotations

from typing import Annotated

from ..core.turn.errors import RequestError
from ..core.turn.extensions import parse_extensions
from ..core.turn.shape import (
    ClientTool,
    DomainFilter,
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
    Boolean,
    Integer,
    JsonObject,
    ModelName,
    NonNegativeInt,
    Number,
    PositiveInt,
    Request,
    Stop,
    String,
    StringOrObject,
    checked,
    validate,
    when_missing,
)
from ..core.wire.framing import (
    CANNOT_CONTINUE,
    DEEPSEEK_READ_URL,
    DEEPSEEK_SEARCH,
    DEEPSEEK_TOOLS,
    refuse_deepseek_fields,
)
from ..core.wire.openrouter_tools import OPENROUTER_FETCH, OPENROUTER_TOOLS, openrouter_tool
from .search_asks import OPENAI_SEARCH_TOOLS, PERPLEXITY_FIELDS, asks_for_search, search_asked

__all__ = ["LATEST_REMINDER", "ChatRequest", "check_chat", "needs_loop", "parse_chat"]

LATEST_REMINDER = "latest_reminder"
"""A message role of DeepSeek's API: a reminder for the model, given to it as a system message."""

# Consumed here (or extensions the upstream must not see); everything else is passed on as sent.
_OWN_FIELDS = frozenset(
    {
        "model",
        "messages",
        "tools",
        "tool_choice",
        "stream",
        "stream_options",
        "thinking",
        "safety_check",
        "title",
        "web_search_options",
        "plugins",
        *PERPLEXITY_FIELDS,
    }
)
_EXTENSIONS = ("thinking", "safety_check", "title")
_CLIENT_TOOL_TYPES = ("function", "custom")
_REFUSED_WITH_WEB = {
    "logprobs": "logprobs: not supported together with web tools",
    "top_logprobs": "top_logprobs: not supported together with web tools",
}


def _objects(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


Messages = Annotated[
    list[JSON],
    checked(
        lambda v: isinstance(v, list) and bool(v),
        "a non-empty array of messages is required",
        (_objects, "each message must be an object"),
    ),
]
Tools = Annotated[
    list[JSON],
    checked(
        lambda v: isinstance(v, list), "must be an array", (_objects, "each tool must be an object")
    ),
]


class ChatRequest(Request):
    """The fields of a Chat Completions request the server reads or checks before passing on."""

    model: ModelName = when_missing()
    messages: Messages
    stream: Boolean | None = None
    temperature: Number | None = None
    top_p: Number | None = None
    tools: Tools | None = None
    tool_choice: StringOrObject | None = None
    parallel_tool_calls: Boolean | None = None
    user: String | None = None
    metadata: JsonObject | None = None
    max_tokens: PositiveInt | None = None
    max_completion_tokens: PositiveInt | None = None
    n: PositiveInt | None = None
    presence_penalty: Number | None = None
    frequency_penalty: Number | None = None
    seed: Integer | None = None
    stop: Stop | None = None
    stream_options: JsonObject | None = None
    logprobs: Boolean | None = None
    top_logprobs: NonNegativeInt | None = None
    response_format: JsonObject | None = None
    logit_bias: JsonObject | None = None


def _web_tool(kind: str) -> bool:
    return (
        kind in DEEPSEEK_TOOLS
        or kind in OPENROUTER_TOOLS
        or OPENAI_SEARCH_TOOLS.fullmatch(kind) is not None
    )


def needs_loop(body: JSON) -> bool:
    """Whether a Chat request needs the server (web tools asked for any way, web history, the
    reference's extension fields) or can be relayed to the upstream as it is."""
    tools = body.get("tools")
    messages = body.get("messages")
    return (
        (
            isinstance(tools, list)
            and any(isinstance(tool, dict) and _web_tool(_type_of(tool)) for tool in tools)
        )
        or asks_for_search(body)
        or any(body.get(name) is not None for name in _EXTENSIONS)
        or (
            isinstance(messages, list)
            and any(
                isinstance(m, dict)
                and ("server_tool_calls" in m or "prefix" in m or m.get("role") == LATEST_REMINDER)
                for m in messages
            )
        )
    )


def _type_of(tool: JSON) -> str:
    kind = tool.get("type")
    return kind if isinstance(kind, str) else ""


def check_chat(body: JSON) -> ChatRequest:
    """The field checks every Chat request gets, relayed or not."""
    return validate(ChatRequest, body)


def _web_tools(tools: list[JSON]) -> tuple[WebTools, list[ClientTool]]:
    search: SearchSpec | None = None
    read_url: ReadUrlSpec | None = None
    client: list[ClientTool] = []
    for index, tool in enumerate(tools):
        kind = _type_of(tool)
        if not _web_tool(kind):
            if kind in _CLIENT_TOOL_TYPES or ("function" in tool and not kind):
                client.append(ClientTool.sent(tool))
            continue  # another server's own tool type: ignored, as DeepSeek's API does
        if kind == DEEPSEEK_SEARCH:
            refuse_deepseek_fields(tool, kind)
        reads = kind in (DEEPSEEK_READ_URL, OPENROUTER_FETCH)
        if (not reads and search) or (reads and read_url):
            raise RequestError(f"tools: `{kind}` can only be declared once", param="tools")
        if kind in OPENROUTER_TOOLS:
            declared = openrouter_tool(kind, tool, f"tools.{index}")
            if isinstance(declared, SearchSpec):
                search = declared
            else:
                read_url = declared
        elif kind == DEEPSEEK_READ_URL:
            read_url = ReadUrlSpec(kind, kind, domains=DomainFilter())
        else:
            search = SearchSpec(kind if kind == DEEPSEEK_SEARCH else "web_search", kind)
    return WebTools(search=search, read_url=read_url), client


def _check_tool_choice(
    choice: str | JSON | None, web: WebTools, client: list[ClientTool]
) -> tuple[ToolChoice, ForcedWeb]:
    """The upstream ``tool_choice``, and the search the first step must make when the client
    forced OpenAI's own web search (forcing a ``deepseek_*`` tool stays DeepSeek's 400)."""
    if isinstance(choice, dict):
        named = choice.get("type")
        function = choice.get("function")
        if isinstance(function, dict):
            named = function.get("name", named)
        if isinstance(named, str) and named in DEEPSEEK_TOOLS:
            raise RequestError(f"tool_choice: `{named}` cannot be forced", param="tool_choice")
        search = web.search
        own = {tool.name for tool in client}
        if (
            isinstance(named, str)
            and named not in own
            and search is not None
            and named in (search.name, search.declared_type)
        ):
            return "auto", "search"
    return choice, None


def _history(messages: list[JSON]) -> tuple[list[JSON], list[PageRef]]:
    """Drop ``server_tool_calls`` from earlier replies, keeping where their read pages were."""
    cleaned: list[JSON] = []
    pages: list[PageRef] = []
    last_user = -1
    for message in messages:
        if message.get("role") == LATEST_REMINDER:
            message = {**message, "role": "system"}
        if message.get("role") == "user":
            last_user = len(cleaned)
        steps = message.get("server_tool_calls")
        if steps is None:
            cleaned.append(_as_input(message))
            continue
        for step in steps if isinstance(steps, list) else ():
            calls = step.get("calls", ()) if isinstance(step, dict) else ()
            for call in calls if isinstance(calls, list | tuple) else ():
                if not isinstance(call, dict) or last_user < 0 or not _read(call):
                    continue
                page = PageRef.of(last_user, call.get("signature"), call.get("id"))
                if page is not None:
                    pages.append(page)
        cleaned.append(_as_input(message))
    return cleaned, pages


_REPLY_ONLY = frozenset({"server_tool_calls", "annotations", "parsed", "prefix"})
"""Fields of a reply that clients send back but an upstream does not take as input (``prefix``
is the server's to pass on, in the upstream's own way)."""


def _as_input(message: JSON) -> JSON:
    """A history message without what only replies carry (``refusal: null`` included)."""
    if message.get("role") != "assistant":
        return message
    kept = {k: v for k, v in message.items() if k not in _REPLY_ONLY}
    if kept.get("refusal", "") is None:
        del kept["refusal"]
    return kept


def _read(call: JSON) -> bool:
    """A call that read a page the next rounds should see again."""
    return call.get("kind") == "read_link" or bool(call.get("signature"))


def _refuse_with_web(body: JSON, request: ChatRequest) -> None:
    """DeepSeek's refusals for what cannot be honoured once web tools run the turn."""
    for name, message in _REFUSED_WITH_WEB.items():
        if body.get(name) not in (None, False):
            raise RequestError(message, param=name)


def _answer_format(shape: JSON | None) -> JSON | None:
    """A JSON ``response_format``, checked here: the step that answers is past the point
    where an upstream's refusal of it could still be an HTTP error."""
    kind = shape.get("type") if shape is not None else None
    if shape is None or kind == "text":
        return None
    if kind not in ("json_schema", "json_object"):
        raise RequestError(
            "response_format.type: must be `text`, `json_schema` or `json_object`",
            param="response_format",
        )
    schema = shape.get("json_schema")
    if kind == "json_schema" and not (isinstance(schema, dict) and schema.get("name")):
        raise RequestError(
            "response_format.json_schema: an object with a `name` is required",
            param="response_format",
        )
    return shape


def _prefixed(messages: list[JSON]) -> bool:
    """Whether the last message is an assistant reply to continue (``prefix: true``, the beta
    endpoint's way); ``prefix`` anywhere else is refused."""
    last = len(messages) - 1
    for i, message in enumerate(messages):
        prefix = message.get("prefix")
        if prefix is None:
            continue
        if not isinstance(prefix, bool):
            raise RequestError(f"messages.{i}.prefix: must be a boolean", param="messages")
        if prefix and (i != last or message.get("role") != "assistant"):
            raise RequestError(
                f"messages.{i}.prefix: only the last message, an `assistant` one, may set it",
                param="messages",
            )
    return messages[last].get("prefix") is True


def parse_chat(body: JSON) -> Turn:
    request = check_chat(body)
    declared, client_tools = _web_tools(request.tools or [])
    search, model = search_asked(body, declared.search)
    web = WebTools(search=search, read_url=declared.read_url)
    if web.any:
        _refuse_with_web(body, request)
    tool_choice, forced = _check_tool_choice(request.tool_choice, web, client_tools)
    history, pages = _history(request.messages)
    last = request.messages[-1]
    if last.get("role") == "assistant" and last.get("server_tool_calls"):
        raise RequestError(CANNOT_CONTINUE, param="messages")
    continued = _prefixed(request.messages)
    thinking = body.get("thinking")
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    effort = body.get("reasoning_effort")
    answer_format = _answer_format(request.response_format)
    params = {k: v for k, v in body.items() if k not in _OWN_FIELDS}
    if answer_format is not None:
        del params["response_format"]
    return Turn(
        protocol="chat",
        model=model,
        messages=history,
        stream=request.stream is True,
        client_tools=client_tools,
        tool_choice=tool_choice,
        forced_web=forced,
        web=web,
        thinking=kind == "enabled",
        effort=effort if isinstance(effort, str) else None,
        thinking_off=kind == "disabled",
        params=params,
        pages=pages,
        continued=continued,
        extensions=parse_extensions(body),
        answer_format=answer_format,
    )
