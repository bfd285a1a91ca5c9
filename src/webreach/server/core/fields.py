"""Type checks for the top-level request fields the server reads or passes on.

All three protocols refuse a mistyped field with the same 400 (``<field>: must be …``) before
anything reaches the upstream: ``stream: "yes"`` must not start a stream, nor
``max_tokens: -5`` reach a model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .errors import RequestError

__all__ = [
    "CHAT_FIELDS",
    "RESPONSES_FIELDS",
    "bad",
    "boolean",
    "check_fields",
    "non_empty_string",
    "number",
    "positive_int",
    "required",
    "string",
]

Check = Callable[[Any, str], Any]


def bad(path: str, problem: str) -> RequestError:
    return RequestError(f"{path}: {problem}", param=path.split(".", 1)[0])


def positive_int(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise bad(path, "must be a positive integer")
    return value


def non_negative_int(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise bad(path, "must be a non-negative integer")
    return value


def integer(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad(path, "must be an integer")
    return value


def number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise bad(path, "must be a number")
    return value


def string(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise bad(path, "must be a string")
    return value


def non_empty_string(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise bad(path, "must be a non-empty string")
    return value


def boolean(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise bad(path, "must be a boolean")
    return value


def obj(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise bad(path, "must be an object")
    return value


def array(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise bad(path, "must be an array")
    return value


def choice(value: Any, path: str) -> Any:
    if not isinstance(value, str | dict):
        raise bad(path, "must be a string or an object")
    return value


def stop(value: Any, path: str) -> Any:
    if isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(item, str) for item in value)
    ):
        return value
    raise bad(path, "must be a string or an array of strings")


_COMMON: dict[str, Check] = {
    "stream": boolean,
    "temperature": number,
    "top_p": number,
    "tools": array,
    "tool_choice": choice,
    "parallel_tool_calls": boolean,
    "user": string,
    "metadata": obj,
}
CHAT_FIELDS: Mapping[str, Check] = {
    **_COMMON,
    "max_tokens": positive_int,
    "max_completion_tokens": positive_int,
    "n": positive_int,
    "presence_penalty": number,
    "frequency_penalty": number,
    "seed": integer,
    "stop": stop,
    "stream_options": obj,
    "logprobs": boolean,
    "top_logprobs": non_negative_int,
    "response_format": obj,
    "logit_bias": obj,
}
RESPONSES_FIELDS: Mapping[str, Check] = {
    **_COMMON,
    "max_output_tokens": positive_int,
    "instructions": string,
    "store": boolean,
    "reasoning": obj,
    "text": obj,
    "include": array,
}


def required(body: dict[str, Any], name: str, check: Check) -> Any:
    """``body[name]`` checked; a missing or null field is refused as Anthropic's API words it."""
    value = body.get(name)
    if value is None:
        raise bad(name, "Field required")
    return check(value, name)


def check_fields(body: dict[str, Any], checks: Mapping[str, Check]) -> None:
    """Refuse the first present, non-null field of ``body`` whose type is wrong."""
    for name, check in checks.items():
        value = body.get(name)
        if value is not None:
            check(value, name)
