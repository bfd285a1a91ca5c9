"""Requests without web tools go to the upstream and back as bytes, streamed as they arrive.

Only what must change is touched: an upstream's refusal of the server's own credentials, the
key in an error message, a stream the upstream cut (ended the Chat way, never mid-frame).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import AsyncIterator

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from ...seam.causes import network_cause
from .codec import Codec
from .errors import UpstreamError
from .inbound import until_disconnected
from .journal import request_log, upstream_failure
from .streaming import server_timing
from .turn import JSON
from .upstream import RawUpstreamResponse, Upstream
from .wire import dumps, sse_frame

__all__ = ["RELAY_CUT", "relay"]

RELAY_CUT = "the upstream ended the stream before it was complete"
_MAX_ERROR_BODY = 1 << 20


async def relay(
    request: Request,
    upstream: Upstream,
    codec: Codec,
    method: str,
    path: str,
    payload: bytes | None,
    started: float,
) -> Response:
    """Relay one request; raises ``UpstreamError`` or ``ClientGone`` before anything was sent."""
    stack = contextlib.AsyncExitStack()

    async def answer() -> tuple[RawUpstreamResponse, bytes | None]:
        """The upstream's status and headers, and the whole body unless it is a stream."""
        raw = await stack.enter_async_context(upstream.relay(method, path, payload))
        if raw.status >= 400:
            return raw, await _read(raw, _MAX_ERROR_BODY)
        if not raw.content_type.startswith("text/event-stream"):
            return raw, await _read(raw, None)
        return raw, None

    try:
        raw, content = await until_disconnected(request, answer())
    except BaseException:
        await stack.aclose()
        raise
    elapsed = time.perf_counter() - started
    headers = {"Server-Timing": server_timing(elapsed, elapsed, 0.0), **raw.headers}
    if content is None:
        headers.setdefault("X-Accel-Buffering", "no")
        return StreamingResponse(
            _frames(raw, codec, stack),
            raw.status,
            headers,
            media_type=raw.content_type,
            background=BackgroundTask(stack.aclose),
        )
    await stack.aclose()
    if raw.status < 400:
        return Response(content, raw.status, headers, media_type=raw.content_type)
    relayed = f"the upstream answered HTTP {raw.status}"
    upstream_failure(raw.status, relayed, f"http_{raw.status}")
    message = upstream.redact(content.decode("utf-8", "replace"))
    if raw.status in (401, 403):
        raise upstream.status_error(raw.status, message, raw.headers)
    return Response(message, raw.status, headers, media_type=raw.content_type)


async def _read(raw: RawUpstreamResponse, limit: int | None) -> bytes:
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in raw.chunks:
            parts.append(chunk)
            size += len(chunk)
            if limit is not None and size >= limit:
                break
    except Exception as error:
        failure = UpstreamError(502, f"upstream: the response was cut ({_why(error)})")
        upstream_failure(502, failure.message, "closed")
        raise failure from None
    return b"".join(parts)


def _why(error: Exception) -> str:
    cause = network_cause(error)
    return cause.describe() if cause is not None else type(error).__name__


def _frame_end(data: bytes) -> int:
    """Where the last complete server-sent event of ``data`` ends (0 when none has)."""
    lf = data.rfind(b"\n\n")
    crlf = data.rfind(b"\n\r\n")
    return max(lf + 2 if lf >= 0 else 0, crlf + 3 if crlf >= 0 else 0)


async def _frames(
    raw: RawUpstreamResponse, codec: Codec, stack: contextlib.AsyncExitStack
) -> AsyncIterator[bytes]:
    """The upstream's events, each passed on whole; a cut ends with the protocol's error event."""
    pending = b""
    try:
        async for chunk in raw.chunks:
            if not pending and chunk.endswith(b"\n\n"):
                yield chunk  # the usual case: whole events
                continue
            data = pending + chunk if pending else chunk
            end = _frame_end(data)
            if end:
                yield data[:end]
            pending = data[end:]
    except Exception as error:
        upstream_failure(200, f"the relayed stream was cut ({_why(error)})", "closed")
        request_log().note = f"failed in stream: {RELAY_CUT}"
        yield _cut_frame(codec).encode()
        return
    finally:
        await stack.aclose()
    if pending.strip():
        yield pending


def _cut_frame(codec: Codec) -> str:
    """Chat's way to end a failed stream: a last chunk with ``error``, no ``[DONE]``."""
    failure: JSON = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "choices": [],
        **codec.error_body(502, RELAY_CUT),
    }
    return sse_frame(dumps(failure))
