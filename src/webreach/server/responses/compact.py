"""``POST /v1/responses/compact``: a conversation made short enough to continue from.

The answer is a compacted input window, not a response: the conversation's user messages as
they were sent, then one assistant message in which the upstream model summarised everything
(its replies, tool calls and their results). A client starts a new response with that window
as its ``input`` (and no ``previous_response_id``), followed by its next items. The summary is
a plain message, not an opaque ``compaction`` item, so any Responses server reads it back.
"""

from __future__ import annotations

import time
import uuid

from starlette.requests import Request
from starlette.responses import Response

from ..core.loop.context import ServerContext
from ..core.turn.errors import RequestError, ServerFailure
from ..core.turn.events import Usage
from ..core.turn.operator_log import request_log
from ..core.turn.shape import JSON
from ..core.upstream.client import thinking_params
from ..core.wire.framing import dumps
from ..core.wire.inbound import ClientGone, parse_json, read_body
from .codec import ResponsesCodec
from .request import parse_request

__all__ = ["COMPACT_ASK", "MAX_INPUT_CHARS", "MAX_SUMMARY_TOKENS", "compact_endpoint"]

COMPACT_ASK = (
    "Summarise the conversation so far so that it can be continued from the summary alone: "
    "keep every fact, name, number, decision, code word and open task the user or the tools "
    "gave, what was answered, and what is still to do. Write it as notes in the conversation's "
    "language; do not answer or continue the conversation."
)
"""The last user message of the summary's completion."""
MAX_INPUT_CHARS = 400_000
"""The most conversation (as Chat messages, in characters, about 100k tokens) one compaction
reads: more would not fit most models' context, and should have been compacted earlier."""
MAX_SUMMARY_TOKENS = 2_000
"""The summary's length bound: short enough to be worth compacting, long enough to keep a
long conversation's facts."""
_FIELDS = frozenset({"model", "input", "instructions", "previous_response_id", "prompt_cache_key"})
_CODEC = ResponsesCodec()


def _user_items(items: list[object]) -> list[JSON]:
    """The conversation's user messages as message items, as they were sent (a string content
    as its one ``input_text`` part, the item shape a compacted window lists)."""
    kept: list[JSON] = []
    for item in items:
        if not isinstance(item, dict) or item.get("role") != "user":
            continue
        if item.get("type", "message") != "message":
            continue
        content = item.get("content")
        if isinstance(content, str):
            content = [{"type": "input_text", "text": content}]
        kept.append({**item, "type": "message", "content": content})
    return kept


def _summary_item(text: str) -> JSON:
    return {
        "type": "message",
        "id": f"msg_{uuid.uuid4().hex}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _usage(usage: Usage) -> JSON:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


async def _compact(body: JSON, context: ServerContext) -> JSON:
    for name in body:
        if name not in _FIELDS:
            raise RequestError(
                f"{name}: not a field of a compaction (it takes {', '.join(sorted(_FIELDS))})",
                param=name,
            )
    if body.get("input") is None and body.get("previous_response_id") is None:
        raise RequestError("input: required (or a `previous_response_id`)", param="input")
    expanded = await _CODEC.prepare({**body, "input": body.get("input") or []}, context.store)
    given = expanded["input"]
    items = (
        [{"type": "message", "role": "user", "content": given}] if isinstance(given, str) else given
    )
    if not isinstance(items, list) or not items:
        raise RequestError("input: the conversation to compact is empty", param="input")
    ask: JSON = {"type": "message", "role": "user", "content": COMPACT_ASK}
    parsed = {
        "model": body.get("model"),
        "instructions": body.get("instructions"),
        "input": [*items, ask],
        "store": False,
    }
    turn = parse_request({key: value for key, value in parsed.items() if value is not None})
    upstream = context.upstream
    messages = upstream.placed(turn.messages)
    read = len(dumps(messages))
    if read > MAX_INPUT_CHARS:
        raise RequestError(
            f"input: the conversation is {read:,} characters as Chat messages; a compaction "
            f"reads at most {MAX_INPUT_CHARS:,}: compact it in parts, earliest first",
            param="input",
            status=413,
        )
    ask_body: JSON = {"model": turn.model, "messages": messages, "max_tokens": MAX_SUMMARY_TOKENS}
    ask_body.update(thinking_params(upstream.dialect, thinking=False, effort=None, off=True))
    answer = await upstream.complete_chat(ask_body)
    request_log().usage = answer.usage
    summary = (answer.text or "").strip()
    if not summary:
        raise ServerFailure(502, "the upstream model answered the compaction with no summary")
    return {
        "id": f"cmp_{uuid.uuid4().hex}",
        "object": "response.compaction",
        "created_at": int(time.time()),
        "output": [*_user_items(items), _summary_item(summary)],
        "usage": _usage(answer.usage),
    }


async def compact_endpoint(request: Request) -> Response:
    context: ServerContext = request.app.state.context
    try:
        raw = await read_body(request, context.settings.server_max_body_bytes)
        reply = await _compact(parse_json(raw), context)
    except RequestError as refused:
        request_log().note = refused.message
        error = _CODEC.error_body(
            refused.status, refused.message, param=refused.param, code=refused.code
        )
        return _json(refused.status, error)
    except ServerFailure as failure:
        request_log().note = failure.message
        return _json(failure.status, _CODEC.error_body(failure.status, failure.message))
    except ClientGone:
        return Response(status_code=499)
    return _json(200, reply)


def _json(status: int, body: JSON) -> Response:
    return Response(dumps(body).encode(), status, media_type="application/json")
