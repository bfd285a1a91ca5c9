"""Requests without web tools go to the upstream and back as bytes, streamed as they arrive.

Only what must change is touched: an upstream's refusal of the server's own credentials, a
secret in anything it sent (a bytes search, and one a model spreads over frames caught by
reading each frame's texts: :mod:`.frame_redaction`), a body that is not what was asked for, a
stream the upstream cut or left unfinished (ended the Chat way, never mid-frame). A frame is
written anew only when part of a secret must be hidden in it.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import AsyncIterator

from pydantic import ValidationError
from pydantic_core import from_json
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from ....seam.causes import network_cause
from ..turn.errors import UpstreamError
from ..turn.operator_log import request_log, upstream_failure
from ..turn.shape import JSON
from ..wire.codec import Codec
from ..wire.framing import dumps, sse_frame
from ..wire.inbound import until_disconnected
from ..wire.keepalive import server_timing
from .chunks import ChatChunk
from .client import RawUpstreamResponse, Upstream
from .failures import broken, refused
from .frame_redaction import RelayedSecrets
from .openai_stream import SSEDecoder
from .secrets import Redactor
from .stream import reported_error
from .unstreamed import completion_frames
from .usage import has_usage, read_usage

__all__ = ["RELAY_CUT", "failed_stream_frame", "relay"]

RELAY_CUT = "the upstream ended the stream before it was complete"
_MAX_ERROR_BODY = 1 << 20
_MAX_MESSAGE = 1000
"""The most of an upstream's own error text passed on (after redaction, so no key is cut)."""
_FINISHED = (b'"finish_reason":"', b'"finish_reason": "')
"""A finish reason that is set (not ``null``), as compact and as spaced JSON write it."""
_DONE = b"data: [DONE]"


async def relay(
    request: Request,
    upstream: Upstream,
    codec: Codec,
    method: str,
    path: str,
    payload: bytes | None,
    started: float,
    *,
    stream: bool = False,
    hide_usage: bool = False,
    model: str = "",
) -> Response:
    """Relay one request (``stream``: the client asked for a stream; ``hide_usage``: the
    server asked for the stream's usage chunk, which the client did not; ``model``: what a
    failed stream's last chunk names); raises
    ``UpstreamError`` or ``ClientGone`` before anything was sent."""
    stack = contextlib.AsyncExitStack()

    async def answer() -> tuple[RawUpstreamResponse, bytes | None, str]:
        """The upstream's status and headers, the whole body unless it is a stream, and the
        body's media type."""
        raw = await stack.enter_async_context(upstream.relay(method, path, payload))
        if raw.status >= 400:
            return raw, await _read(raw, _MAX_ERROR_BODY), raw.content_type
        kind = raw.content_type.split(";")[0].strip().lower()[:80]
        if stream and kind == "text/event-stream":
            return raw, None, raw.content_type
        if not kind.endswith("json"):
            expected = "not an event stream" if stream else "not JSON"
            said = f"upstream answered {raw.status} with {kind or 'no content type'}, {expected}"
            cause = "not_a_stream" if stream else "not_json"
            raise broken(upstream.redactor(said), cause, upstream.where)
        content = await _read(raw, None)
        if stream:
            return raw, completion_frames(content, kind, upstream), "text/event-stream"
        _check_json(content, raw.status, kind, upstream)
        return raw, content, raw.content_type

    try:
        raw, content, media_type = await until_disconnected(request, answer())
    except BaseException:
        await stack.aclose()
        raise
    elapsed = time.perf_counter() - started
    headers = {"Server-Timing": server_timing(elapsed, elapsed, 0.0), **raw.headers}
    if content is None:
        headers.setdefault("X-Accel-Buffering", "no")
        watch = _Watch(upstream.redactor, upstream.where, hide_usage)
        return StreamingResponse(
            _frames(raw, codec, stack, watch, model),
            raw.status,
            headers,
            media_type=raw.content_type,
            background=BackgroundTask(stack.aclose),
        )
    await stack.aclose()
    return _whole(raw, content, headers, media_type, upstream)


def _whole(
    raw: RawUpstreamResponse,
    content: bytes,
    headers: dict[str, str],
    media_type: str,
    upstream: Upstream,
) -> Response:
    """A whole upstream answer for the client, its secrets redacted; an error is logged, the
    upstream refusing the server's own key is the server's error, not the client's, and an
    error body that is not JSON (a proxy's page) becomes the protocol's error naming it."""
    redactor = upstream.redactor
    if raw.status < 400:
        if redactor.found_in(content):
            content = redactor.redacted_bytes(content)
        return Response(content, raw.status, headers, media_type=media_type)
    failure, is_json = refused(
        raw.status, content, raw.content_type, raw.headers, redactor, upstream.where
    )
    if failure.status != raw.status or not is_json:
        raise failure
    content = redactor.redacted_bytes(content)
    return Response(content, raw.status, headers, media_type=raw.content_type)


def _check_json(content: bytes, status: int, kind: str, upstream: Upstream) -> None:
    """A whole answer passes on only as a strict JSON object that is not an error: what the
    label promised, so a client's SDK never reads a 200 it cannot parse; otherwise the
    upstream's failure (502), as the loop answers the same body."""
    try:
        answer = from_json(content, allow_inf_nan=False)
    except ValueError as error:
        said = f"upstream answered {status} with {kind} that is not JSON ({_first_line(error)})"
        raise broken(upstream.redactor(said), "malformed", upstream.where) from None
    if not isinstance(answer, dict):
        said = f"upstream answered {status} with {kind} that is not a JSON object"
        raise broken(said, "malformed", upstream.where)
    if answer.get("error"):
        try:
            told = ChatChunk.model_validate({"error": answer["error"]}).error
        except ValidationError:
            told = None
        said = reported_error(told or str(answer["error"]), upstream.redactor)
        raise broken(said[:_MAX_MESSAGE], "error_body", upstream.where)


def _first_line(error: ValueError) -> str:
    return str(error).splitlines()[0][:200] if str(error) else type(error).__name__


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


class _Watch:
    """What the relay learns of a stream from cheap looks at its bytes: whether it finished,
    whether it carried an upstream error or its usage, and where a secret must be hidden."""

    __slots__ = ("complete", "failed", "hide_usage", "redactor", "secrets", "where")

    def __init__(self, redactor: Redactor, where: str, hide_usage: bool = False) -> None:
        self.redactor = redactor
        self.secrets = RelayedSecrets(redactor) if redactor.active else None
        self.where = where
        self.hide_usage = hide_usage
        self.complete = False
        self.failed = False

    def passed(self, block: bytes) -> bytes:
        """``block`` (whole events) as the client gets it."""
        if not self.complete:
            self.complete = _DONE in block or _FINISHED[0] in block or _FINISHED[1] in block
        if b'"error"' in block:
            self._log_errors(block)
        if has_usage(block):
            block, usage = read_usage(block, self.hide_usage)
            if usage is not None:
                request_log().usage = usage
        if self.secrets is not None:
            block = self.secrets.passed(block)
        return block

    def _log_errors(self, block: bytes) -> None:
        for event in SSEDecoder().iter_bytes(iter([block])):
            try:
                chunk = ChatChunk.model_validate_json(event.data)
            except ValidationError:
                continue
            if chunk.error:
                message = reported_error(chunk.error, self.redactor)
                broken(message, "stream_error", self.where)
                request_log().note = f"failed in stream: {message}"
                self.failed = True


async def _frames(
    raw: RawUpstreamResponse,
    codec: Codec,
    stack: contextlib.AsyncExitStack,
    watch: _Watch,
    model: str,
) -> AsyncIterator[bytes]:
    """The upstream's events, each passed on whole; a cut or an unfinished stream ends with
    the protocol's error event."""
    pending = b""
    try:
        async for chunk in raw.chunks:
            if not pending and chunk.endswith(b"\n\n"):
                yield watch.passed(chunk)  # the usual case: whole events
                continue
            data = pending + chunk if pending else chunk
            end = _frame_end(data)
            if end:
                yield watch.passed(data[:end])
            pending = data[end:]
    except Exception as error:
        upstream_failure(200, f"the relayed stream was cut ({_why(error)})", "closed")
        request_log().note = f"failed in stream: {RELAY_CUT}"
        yield failed_stream_frame(codec, 502, RELAY_CUT, model)
        return
    finally:
        await stack.aclose()
    if pending.strip() == _DONE:
        yield watch.passed(pending.strip() + b"\n\n")
    if watch.complete or watch.failed:
        return
    broken(RELAY_CUT, "truncated", watch.where)
    request_log().note = f"failed in stream: {RELAY_CUT}"
    yield failed_stream_frame(codec, 502, RELAY_CUT, model)


def failed_stream_frame(codec: Codec, status: int, message: str, model: str) -> bytes:
    """Chat's way to end a failed stream: a last chunk with ``error``, no ``[DONE]``; a chunk
    still, so it carries every field a chunk must (``model`` included)."""
    failure: JSON = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [],
        **codec.error_body(status, message),
    }
    return sse_frame(dumps(failure)).encode()
