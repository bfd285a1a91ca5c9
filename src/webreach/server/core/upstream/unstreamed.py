"""A whole completion given where a stream was asked for, turned into that stream.

Some upstreams ignore ``stream: true``; a relayed client that asked for a stream would read an
empty one from a JSON body. The completion, once checked, is sent as the Chat chunks that would
have carried it; anything else is the upstream's failure.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from pydantic import ValidationError

from ..wire.framing import dumps, sse_frame
from .chunks import CompletionBody, invalid
from .client import Upstream
from .failures import broken
from .stream import reported_error

__all__ = ["completion_frames"]


def completion_frames(content: bytes, kind: str, upstream: Upstream) -> bytes:
    """``content`` (a whole completion) as its event stream, ``[DONE]`` included; a body that
    is not a completion raises :class:`~..turn.errors.UpstreamError` (502)."""
    not_one = f"upstream answered 200 with {kind} that is not a completion"
    try:
        answer = CompletionBody.model_validate_json(content)
    except ValidationError as error:
        said = upstream.redactor(f"{not_one} ({invalid(error)})")
        raise broken(said, "malformed", upstream.where) from None
    if answer.error:
        reported = reported_error(answer.error, upstream.redactor)
        raise broken(reported, "error_body", upstream.where)
    if not answer.choices:
        raise broken(f"{not_one} (no choices)", "malformed", upstream.where)
    whole: dict[str, Any] = json.loads(content)
    choice = whole["choices"][0]
    message = dict(choice.get("message") or {})
    calls = message.pop("tool_calls", None) or []
    head = {
        "id": whole.get("id") or f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion.chunk",
        "created": whole.get("created") or int(time.time()),
        "model": whole.get("model") or "",
    }
    delta = {**message, "role": "assistant"}
    if calls:
        delta["tool_calls"] = [{**call, "index": number} for number, call in enumerate(calls)]
    finish = choice.get("finish_reason") or "stop"
    chunks: list[dict[str, Any]] = [
        {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
    ]
    if whole.get("usage") is not None:
        chunks.append({**head, "choices": [], "usage": whole["usage"]})
    frames = "".join(sse_frame(dumps(chunk)) for chunk in chunks) + "data: [DONE]\n\n"
    return frames.encode()
