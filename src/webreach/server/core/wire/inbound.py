"""What comes in from a client: a bounded body, strict JSON, and the moment the client leaves.

Every refusal here is a :class:`RequestError` (a 4xx in the protocol's own shape), so hostile
bodies never reach the codecs, the upstream or a 500.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Awaitable
from typing import Any, TypeVar

from starlette.requests import ClientDisconnect, Request

from ..turn.errors import RequestError
from ..turn.shape import JSON

__all__ = ["MAX_DEPTH", "ClientGone", "parse_json", "read_body", "until_disconnected"]

T = TypeVar("T")

MAX_DEPTH = 100
"""Deepest nesting of arrays and objects a request may have; real requests stay far below."""

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class ClientGone(Exception):
    """The client disconnected before its response was ready."""


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, refusing (413) as soon as it is known to exceed ``limit`` bytes.

    A declared ``Content-Length`` over the limit is refused before a byte is read; a chunked
    body is refused at the chunk that crosses it, so memory never holds more than the limit.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise _too_large(limit)
    except ClientDisconnect:
        raise ClientGone from None
    return bytes(body)


def _too_large(limit: int) -> RequestError:
    return RequestError(
        f"the request body is larger than this server accepts ({limit:,} bytes; "
        "WEBREACH_SERVER_MAX_BODY_BYTES)",
        status=413,
    )


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def parse_json(raw: bytes) -> JSON:
    """A request body as a JSON object: standard JSON only, valid Unicode, bounded nesting.

    Python's parser accepts ``NaN``/``Infinity``, lone surrogates and overflowing numbers,
    none of which can be sent on to an upstream; and nesting deep enough to exhaust the
    stack fails later, anywhere. All of them are refused here instead.
    """
    try:
        body = json.loads(raw, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise RequestError(
            f"the request body is nested too deeply (at most {MAX_DEPTH} levels)"
        ) from None
    except ValueError as error:
        raise RequestError(f"the request body is not valid JSON ({_reason(error)})") from None
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and _depth(body) > MAX_DEPTH:
        raise RequestError(f"the request body is nested too deeply (at most {MAX_DEPTH} levels)")
    if _SURROGATE_ESCAPE.search(raw) and _has_lone_surrogate(body):
        raise RequestError(
            "the request body is not valid JSON (a string holds an unpaired UTF-16 surrogate)"
        )
    return body


def _reason(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at line {error.lineno}, column {error.colno}"
    if isinstance(error, UnicodeDecodeError):
        return "it is not UTF-8"
    return str(error)


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    if isinstance(value, list):
        return value
    return []


def _depth(body: JSON) -> int:
    deepest = 0
    stack: list[tuple[Any, int]] = [(body, 1)]
    while stack:
        value, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            break
        stack.extend((child, level + 1) for child in _children(value) if _children(child))
    return deepest


def _has_lone_surrogate(body: JSON) -> bool:
    stack: list[Any] = [body]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return True
        else:
            stack.extend(_children(value))
    return False


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def until_disconnected(request: Request, awaitable: Awaitable[T]) -> T:
    """Await ``awaitable`` unless the client leaves first: then cancel it and raise ``ClientGone``.

    Waiting for an upstream's first byte is where a departed client costs the most: without
    this, the model keeps generating for nobody until the upstream timeout. The work runs in
    the caller's own task (a watcher cancels it), so the common case costs one small task.
    """
    current = asyncio.current_task()
    assert current is not None
    left = asyncio.Event()

    async def watch() -> None:
        await _disconnected(request)
        left.set()
        current.cancel()

    watcher = asyncio.ensure_future(watch())
    try:
        return await awaitable
    except asyncio.CancelledError:
        if left.is_set() and current.uncancel() == 0:
            raise ClientGone from None
        raise
    finally:
        # It only waits on ``receive()``: nothing to clean up, so it is not waited for.
        watcher.cancel()
