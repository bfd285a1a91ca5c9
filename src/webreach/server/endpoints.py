"""The HTTP endpoints: one per protocol (relay or loop), the model list, and health.

Resources live on ``request.app.state.context`` (a :class:`ServerContext`, set up by the app's
lifespan), the server's settings among them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from starlette.background import BackgroundTask
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response, StreamingResponse

from ..seam import cancel_and_wait
from ..settings.server import ServerSettings
from .chat.request import check_chat, needs_loop
from .core.loop.context import ServerContext
from .core.loop.debug import relayed
from .core.loop.runner import TurnRunner
from .core.turn.errors import RequestError, ServerFailure
from .core.turn.events import Usage
from .core.turn.limits import Stopping, TurnLimits, TurnTimedOut, Waits, within
from .core.turn.operator_log import request_log
from .core.turn.shape import JSON, CitationStyle, Turn
from .core.upstream.readiness import Readiness
from .core.upstream.relay import failed_stream_frame, relay
from .core.upstream.usage import asking_usage
from .core.wire.codec import Codec, Reply, stream_frames, whole_body
from .core.wire.framing import dumps
from .core.wire.inbound import ClientGone, parse_json, read_body, until_disconnected
from .core.wire.keepalive import server_timing, with_keepalive

__all__ = ["ProtocolEndpoint", "healthz", "json_response", "models_endpoint", "readyz"]

logger = logging.getLogger("webreach.server")

CLIENT_GONE = 499
"""Nobody reads it: the status logged for a client that left before its answer."""


def json_response(status: int, body: Reply, headers: dict[str, str] | None = None) -> Response:
    return Response(dumps(body).encode(), status, headers, media_type="application/json")


def _error(codec: Codec, failure: RequestError | ServerFailure) -> Response:
    request_log().note = failure.message
    if isinstance(failure, ServerFailure):
        body = codec.error_body(failure.status, failure.message)
        return json_response(failure.status, body, failure.headers)
    body = codec.error_body(failure.status, failure.message, param=failure.param, code=failure.code)
    return json_response(failure.status, body)


CITATIONS_HEADER = "x-webreach-citations"
STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
"""A stream is not to be cached or buffered: nginx and proxies that honour it pass each event on."""
CANNOT_CONTINUE_HERE = (
    "messages: this server's upstream cannot continue a reply (WEBREACH_UPSTREAM_CONTINUE is "
    "`off`); end the conversation with a user message"
)


def _citation_style(request: HTTPConnection, settings: ServerSettings) -> CitationStyle:
    """The request's header, else the server's setting."""
    asked = request.headers.get(CITATIONS_HEADER)
    style = settings.citations if asked is None else asked.strip().lower()
    if style == "markdown":
        return "markdown"
    if style == "annotations":
        return "annotations"
    raise RequestError("X-Webreach-Citations: must be `annotations` or `markdown`")


class ProtocolEndpoint:
    """``POST`` of one protocol: a Chat request without web tools is relayed as bytes; any other
    goes through the loop, streamed or as one body."""

    def __init__(self, codec: Codec, keepalive_seconds: float = 10.0) -> None:
        self.codec = codec
        self.keepalive_seconds = keepalive_seconds
        """How long a client waits without a byte: then an SSE comment, or a newline."""

    async def handle(self, request: Request) -> Response:
        started = time.perf_counter()
        context: ServerContext = request.app.state.context
        settings = context.settings
        stopping: Stopping | None = getattr(request.app.state, "stopping", None)
        limits = TurnLimits.starting_now(settings.max_steps, settings.turn_timeout, stopping)
        try:
            raw = await read_body(request, settings.server_max_body_bytes)
            body = parse_json(raw)
            if self.codec.protocol == "chat" and not needs_loop(body):
                check_chat(body)
                return await self._relay(request, context, body, raw, started, limits)
            body = await self.codec.prepare(body, context.store)
            turn = self._parse(body)
            if turn.continued and context.upstream.continuation == "off":
                raise RequestError(CANNOT_CONTINUE_HERE, param="messages")
            turn.store = turn.store and context.store is not None
            turn.citations = _citation_style(request, settings)
            runner = TurnRunner(turn, context, limits)
            log = request_log()
            log.stream, log.usage = turn.stream, runner.usage
            if turn.stream:
                return await self._stream(request, runner, body, started)
            return await self._whole(request, runner, body, started)
        except (RequestError, ServerFailure) as failure:
            return _error(self.codec, failure)
        except ClientGone:
            return Response(status_code=CLIENT_GONE)

    def _parse(self, body: JSON) -> Turn:
        """The codec's translation; a shape it did not foresee is still the client's 400."""
        try:
            return self.codec.parse(body)
        except RequestError:
            raise
        except Exception:
            logger.exception(
                "an unexpected request shape reached the %s parser", self.codec.protocol
            )
            raise RequestError("the request has a shape this server cannot read") from None

    async def _relay(
        self,
        request: Request,
        context: ServerContext,
        body: JSON,
        raw: bytes,
        started: float,
        limits: TurnLimits,
    ) -> Response:
        """The client's bytes go on as they came (they are strict JSON by now), unless the
        server names the model itself or asks for a stream's usage. The turn's deadline bounds
        it too: a stream then ends the Chat way."""
        original = body
        stream = request_log().stream = body.get("stream") is True
        relayed(body)
        upstream = context.upstream
        hide_usage = False
        if stream:
            body, hide_usage = asking_usage(body)
        if upstream.model:
            body = {**body, "model": upstream.model}
        model = str(body.get("model") or "")
        payload = raw if body is original else dumps(body).encode()
        async with within(limits):
            response = await relay(
                request,
                upstream,
                self.codec,
                "POST",
                "/chat/completions",
                payload,
                started,
                stream=stream,
                hide_usage=hide_usage,
                model=model,
            )
        if isinstance(response, StreamingResponse):
            response.body_iterator = _relayed_within(
                response.body_iterator, limits, self.codec, model
            )
        elif response.status_code == 200:
            request_log().usage = _relayed_usage(bytes(response.body))
        return response

    async def _stream(
        self,
        request: Request,
        runner: TurnRunner,
        body: JSON,
        started: float,
    ) -> Response:
        try:
            await until_disconnected(request, runner.start())
        except BaseException:
            await runner.aclose()
            raise
        store = runner.context.store

        async def finished(reply: Reply) -> None:
            await self.codec.remember(body, reply, store)

        frames = with_keepalive(
            stream_frames(self.codec, runner.turn, runner.events(), finished),
            self.keepalive_seconds,
        )
        headers = {"Server-Timing": _timing(runner, started), **STREAM_HEADERS}
        return StreamingResponse(
            frames,
            media_type="text/event-stream",
            headers=headers,
            background=BackgroundTask(runner.aclose),
        )

    async def _whole(
        self,
        request: Request,
        runner: TurnRunner,
        body: JSON,
        started: float,
    ) -> Response:
        """One JSON body. An answer that takes longer than the keep-alive interval is preceded
        by newlines (valid leading JSON whitespace) so proxies do not cut a long deep search;
        from then on the status is sent, and a failure is the protocol's error body."""

        async def answer() -> Reply:
            try:
                await runner.start()
                reply = await whole_body(self.codec, runner.turn, runner.events())
            finally:
                await runner.aclose()
            await self.codec.remember(body, reply, runner.context.store)
            return reply

        work = asyncio.ensure_future(answer())
        try:
            await until_disconnected(request, asyncio.wait({work}, timeout=self.keepalive_seconds))
        except BaseException:
            await cancel_and_wait([work])
            raise
        headers = {"Server-Timing": _timing(runner, started)}
        if work.done():
            return json_response(200, work.result(), headers)
        frames = _newlines_then(work, self.codec, self.keepalive_seconds)
        return StreamingResponse(frames, 200, headers, media_type="application/json")


def _relayed_usage(answer: bytes) -> Usage | None:
    """The tokens of a relayed completion, for its key's usage (a stream's are read from its
    usage chunk as it passes)."""
    try:
        parsed = json.loads(answer)
    except ValueError:
        return None
    return Usage.of_completion(parsed) if isinstance(parsed, dict) else None


async def _relayed_within(
    chunks: AsyncIterable[str | bytes | memoryview], limits: TurnLimits, codec: Codec, model: str
) -> AsyncIterator[str | bytes | memoryview]:
    """A relayed stream until the turn's deadline; then the Chat way to fail a stream: a last
    chunk with ``error``, no ``[DONE]``, and the upstream's stream closed."""
    iterator = aiter(chunks)
    waits = Waits(limits)
    try:
        while True:
            try:
                chunk = await waits.next(iterator)
            except TurnTimedOut as timed_out:
                request_log().note = f"failed in stream: {timed_out.message}"
                yield failed_stream_frame(codec, timed_out.status, timed_out.message, model)
                return
            if chunk is None:
                return
            yield chunk
    finally:
        waits.close()
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()


async def _newlines_then(
    work: asyncio.Future[Reply], codec: Codec, interval: float
) -> AsyncIterator[bytes]:
    """A newline every ``interval`` until the answer is ready, then the answer."""
    try:
        while not (await asyncio.wait({work}, timeout=interval))[0]:
            yield b"\n"
        try:
            reply = work.result()
        except ServerFailure as failure:
            request_log().note = f"failed after the status was sent: {failure.message}"
            reply = codec.error_body(failure.status, failure.message)
        yield dumps(reply).encode()
    finally:
        await cancel_and_wait([work])


def _timing(runner: TurnRunner, started: float) -> str:
    elapsed = time.perf_counter() - started
    return server_timing(elapsed, runner.upstream_seconds, runner.web_seconds)


def models_endpoint(codec: Codec) -> Any:
    """``GET /v1/models``: the upstream's list, relayed."""

    async def models(request: Request) -> Response:
        context: ServerContext = request.app.state.context
        try:
            return await relay(
                request, context.upstream, codec, "GET", "/models", None, time.perf_counter()
            )
        except ServerFailure as failure:
            return _error(codec, failure)
        except ClientGone:
            return Response(status_code=CLIENT_GONE)

    return models


async def healthz(request: Request) -> Response:
    """Alive: the process answers. Whether it can serve is ``/readyz``."""
    return json_response(200, {"status": "ok"})


async def readyz(request: Request) -> Response:
    """Ready (200) when the upstream answered within ``WEBREACH_READY_WINDOW`` seconds, else
    503 saying why; what a load balancer or an orchestrator routes by."""
    readiness: Readiness = request.app.state.readiness
    state = readiness.state()
    body: dict[str, object] = {"status": "ready" if state.ready else "not ready"}
    if state.reason is not None:
        body["reason"] = state.reason
    ago = state.answered_ago
    body["upstream_answered_seconds_ago"] = None if ago is None else round(ago, 1)
    body["window_seconds"] = readiness.window
    headers = {"Cache-Control": "no-store"}
    return json_response(200 if state.ready else 503, body, headers)
