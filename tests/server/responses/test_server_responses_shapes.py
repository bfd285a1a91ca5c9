"""The Responses shapes declared once: what the renderer writes is what ``shapes_out`` and
``shapes_stream`` say, and the input read whole is the input read item by item.

``shapes_out`` is checked by mypy where the renderer builds it; here every frame and body of the
scripted rounds is read back against those declarations (no key missing, none undeclared). The
input is read in one pass when every item is right, else item by item so a refusal names the
first wrong item: both ways must give the same conversation, and the same refusal.
"""

from __future__ import annotations

import json
import random
import types
import typing
from typing import Any, Literal, get_args, get_origin, get_type_hints

import pytest

import responses_events as scripted
from codec_helpers import body_of, stream_of
from webreach.server.core.turn.errors import RequestError
from webreach.server.core.turn.events import ClientToolCall, Finished, TextDelta
from webreach.server.responses import request as responses_request
from webreach.server.responses.request import parse_request
from webreach.server.responses.shapes_out import Response
from webreach.server.responses.shapes_stream import StreamEvent


def conforms(value: object, shape: Any) -> bool:
    """``value`` is ``shape``: a TypedDict has its required keys and no undeclared one, each
    of its declared type (pydantic reads ``typing.TypedDict`` only from Python 3.12 on)."""
    if shape is object:
        return True
    if shape is None or shape is type(None):
        return value is None
    if shape in (int, float):
        return isinstance(value, (int, float) if shape is float else int) and not isinstance(
            value, bool
        )
    if shape in (str, bool):
        return isinstance(value, shape)
    if typing.is_typeddict(shape):
        if not isinstance(value, dict):
            return False
        hints = get_type_hints(shape)
        keys = set(value)
        if not shape.__required_keys__ <= keys <= set(hints):
            return False
        return all(conforms(value[key], hints[key]) for key in keys)
    origin, args = get_origin(shape), get_args(shape)
    if origin in (typing.Union, types.UnionType):
        return any(conforms(value, member) for member in args)
    if origin is Literal:
        return value in args
    if origin is list:
        return isinstance(value, list) and all(conforms(v, args[0]) for v in value)
    if origin is dict:
        return isinstance(value, dict) and all(
            isinstance(k, str) and conforms(v, args[1]) for k, v in value.items()
        )
    raise AssertionError(f"no rule for {shape!r}")


ROUNDS = {
    "search": scripted.search_round,
    "failed search": scripted.failed_search_round,
    "deep search": scripted.deep_search_round,
    "read link": scripted.read_link_round,
    "client calls": scripted.client_call_round,
    "failing": scripted.failing_round,
    "custom and tool search": lambda: [
        TextDelta("x"),
        ClientToolCall("c1", "c", "free text", kind="custom"),
        ClientToolCall("c2", "g", "{}", namespace="ns"),
        ClientToolCall("c3", "tool_search", '{"q": 1}', kind="tool_search"),
        Finished("tool_use"),
    ],
    "max tokens": lambda: [TextDelta("x"), Finished("max_tokens")],
}

_TURN = parse_request(
    {
        "model": "m",
        "input": "hi",
        "instructions": "Be brief.",
        "metadata": {"a": "b"},
        "reasoning": {"effort": "low"},
        "text": {"verbosity": "low"},
        "tools": [
            {"type": "web_search", "filters": {"allowed_domains": ["example.com"]}},
            {"type": "function", "name": "get_weather", "parameters": {"type": "object"}},
        ],
        "tool_choice": {"type": "function", "name": "get_weather"},
    }
)


def _frames(text: str) -> list[dict[str, Any]]:
    return [
        json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")
    ]


@pytest.mark.parametrize("name", ROUNDS)
def test_every_frame_and_body_is_a_declared_shape(name: str) -> None:
    events = ROUNDS[name]()
    frames = [f for f in _frames(stream_of(scripted.CODEC, _TURN, events)) if "type" in f]
    assert frames
    for frame in frames:
        if frame["type"].endswith(".delta") and "call" not in frame["type"]:
            continue  # text and reasoning deltas are formatted, not built (Frames._emit_delta)
        assert conforms(frame, StreamEvent), frame
    if name != "failing":
        assert conforms(body_of(scripted.CODEC, _TURN, events), Response)


def test_an_undeclared_key_is_caught() -> None:
    """The check above would see a key the declarations lack."""
    body = body_of(scripted.CODEC, _TURN, scripted.plain_round())
    assert conforms(body, Response)
    assert not conforms({**body, "undeclared": 1}, Response)
    assert not conforms({**body, "output": [{"type": "message"}]}, Response)


# --- the input, read whole or item by item -------------------------------------------------

_VALUES: list[object] = [None, "", "x", 1, True, [], {}, ["a"], {"a": 1}, "call_1", '{"a":1}']
_PARTS: list[object] = [
    {"type": "input_text", "text": "hi"},
    {"type": "output_text", "text": "yo"},
    {"type": "text", "text": 3},
    {"type": "refusal", "refusal": "no"},
    {"type": "refusal"},
    {"type": "input_image", "image_url": "http://a.example/b.png"},
    {"type": "input_image", "image_url": "http://a.example/b.png", "detail": "low"},
    {"type": "input_image", "image_url": ""},
    {"type": "input_image", "file_id": "f"},
    {"type": "input_file"},
    "text",
    None,
    {"text": "x"},
    {"type": ["x"]},
]
_KINDS = [
    "message",
    "role",
    "function_call",
    "custom_tool_call",
    "function_call_output",
    "custom_tool_call_output",
    "tool_search_call",
    "tool_search_output",
    "additional_tools",
    "web_search_call",
    "reasoning",
    "item_reference",
    "unknown",
    "list type",
    "not an object",
    "null type",
]
_FIELDS = ("call_id", "name", "arguments", "namespace", "input", "output", "id", "tools", "kind")


def _content(rng: random.Random) -> object:
    if rng.random() < 0.3:
        return rng.choice(["hello", "", None, 5, {"a": 1}, ("t",)])
    return [rng.choice(_PARTS) for _ in range(rng.randint(0, 3))]


def _item(rng: random.Random) -> object:
    kind = rng.choice(_KINDS)
    if kind == "not an object":
        return rng.choice([1, "s", None, []])
    if kind == "null type":
        return {"type": None}
    if kind in ("message", "role"):
        role = rng.choice(["user", "assistant", "system", "developer", "tool", 3])
        message: dict[str, object] = {"role": role, "content": _content(rng)}
        if kind == "message":
            message["type"] = "message"
        return message
    item: dict[str, object] = {"type": ["x"] if kind == "list type" else kind}
    for name in _FIELDS:
        if rng.random() < 0.6:
            extra: list[object] = {
                "tools": [[{"type": "function", "name": "loaded"}]],
                "kind": ["read_link"],
                "output": [_content(rng)],
            }.get(name, [])
            item[name] = rng.choice(_VALUES + extra)
    if rng.random() < 0.5 and kind.endswith(("call", "output")):
        item.update(call_id="c1", name="fn", output="out")
    if kind == "web_search_call" and rng.random() < 0.5:
        item.update(kind="read_link", signature="c2VhbGVk", id="ws_1")
    return item


def _outcome(body: dict[str, Any]) -> object:
    try:
        turn = parse_request(body)
    except RequestError as refused:
        return ("refused", refused.message, refused.param)
    return (turn.messages, turn.pages, [tool.name for tool in turn.client_tools])


def test_the_input_read_whole_is_the_input_read_item_by_item(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(19)
    bodies = [
        {"model": "m", "input": [_item(rng) for _ in range(rng.randint(0, 5))]} for _ in range(1500)
    ]
    whole = [_outcome(body) for body in bodies]
    monkeypatch.setattr(responses_request, "read_items", lambda items: None)
    by_item = [_outcome(body) for body in bodies]
    assert whole == by_item
    accepted = sum(
        1 for outcome in whole if not isinstance(outcome, tuple) or outcome[0] != "refused"
    )
    assert accepted > 200
