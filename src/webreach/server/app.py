"""The FastAPI application: routes, inbound keys, and the choice between relay and loop."""

from __future__ import annotations

import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse
from starlette.background import BackgroundTask

from ..seam import WebRuntime
from ..tools import ToolOptions
from .chat.codec import ChatCodec
from .chat.request import check_chat, declares_web_tools
from .core.codec import Codec, stream_frames, whole_body
from .core.context import ServerContext
from .core.errors import RequestError, ServerFailure
from .core.inbound import ClientGone, parse_json, read_body, until_disconnected
from .core.loop import TurnRunner
from .core.relay import relay
from .core.sealing import PageSealer
from .core.streaming import server_timing, with_keepalive
from .core.turn import Turn
from .core.upstream import Upstream

__all__ = ["DEFAULT_MAX_BODY_BYTES", "ServerConfig", "create_app"]

logger = logging.getLogger("webreach.server")

DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ServerConfig:
    upstream_base_url: str
    upstream_api_key: str | None = None
    upstream_model: str | None = None
    api_keys: Sequence[str] = ()
    signing_key: str | None = None
    keepalive_seconds: float = 10.0
    upstream_timeout: float = 600.0
    upstream_connect_timeout: float = 10.0
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES


def _json(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
    content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    return Response(content, status, headers=headers, media_type="application/json")


class _ServerTiming:
    """Gives every response a ``Server-Timing`` header; handlers that split out upstream and
    web time set their own."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def timed(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                if not any(name.lower() == b"server-timing" for name, _ in headers):
                    own = (time.perf_counter() - started) * 1000
                    headers.append((b"server-timing", f"webreach;dur={own:.2f}".encode()))
                    message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, timed)


def _authorised(request: Request, keys: Sequence[bytes]) -> bool:
    if not keys:
        return True
    offered = request.headers.get("x-api-key", "")
    authorization = request.headers.get("authorization", "")
    if authorization[:7].lower() == "bearer ":
        offered = authorization[7:].strip()
    candidate = offered.encode()
    # Compare against every key so the time taken says nothing about which one matched.
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(candidate, key)
    return matched


def default_codecs() -> dict[str, Codec]:
    from .messages.codec import MessagesCodec
    from .responses.codec import ResponsesCodec

    return {"chat": ChatCodec(), "responses": ResponsesCodec(), "messages": MessagesCodec()}


def create_app(
    config: ServerConfig,
    runtime: WebRuntime,
    options: ToolOptions,
    codecs: dict[str, Codec] | None = None,
) -> FastAPI:
    """The server; it owns ``runtime`` and closes it on shutdown."""
    keys = [key.encode() for key in config.api_keys if key]
    sealer = PageSealer(config.signing_key)
    upstream = Upstream(
        base_url=config.upstream_base_url,
        api_key=config.upstream_api_key,
        model=config.upstream_model,
        timeout=config.upstream_timeout,
        connect_timeout=config.upstream_connect_timeout,
    )
    context = ServerContext(upstream, runtime, options, sealer)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await upstream.aclose()
            await runtime.aclose()

    app = FastAPI(title="webreach", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.add_middleware(_ServerTiming)
    codecs = codecs if codecs is not None else default_codecs()

    def endpoint(protocol: str) -> Callable[[Request], Any]:
        codec = codecs[protocol]

        async def handle(request: Request) -> Response:
            started = time.perf_counter()
            if not _authorised(request, keys):
                return _error(codec, 401, "invalid or missing API key")
            try:
                body = parse_json(await read_body(request, config.max_body_bytes))
                if protocol == "chat" and not declares_web_tools(body):
                    check_chat(body)
                    return await _relay_chat(request, body, started, codec)
                turn = _parse(codec, body)
                return await _answer(request, turn, codec, started)
            except RequestError as error:
                return _error(codec, error.status, error.message)
            except ServerFailure as error:
                return _error(codec, error.status, error.message, error.headers)
            except ClientGone:
                return Response(status_code=499)

        return handle

    async def _answer(request: Request, turn: Turn, codec: Codec, started: float) -> Response:
        runner = TurnRunner(turn, context)
        if turn.stream:
            try:
                await until_disconnected(request, runner.start())
            except BaseException:
                await runner.aclose()
                raise
            timing = server_timing(
                time.perf_counter() - started, runner.upstream_seconds, runner.web_seconds
            )
            frames = with_keepalive(
                stream_frames(codec, turn, runner.events()), config.keepalive_seconds
            )
            return StreamingResponse(
                frames,
                media_type="text/event-stream",
                headers={"Server-Timing": timing, "Cache-Control": "no-cache"},
                background=BackgroundTask(runner.aclose),
            )

        async def whole() -> dict[str, Any]:
            try:
                await runner.start()
                return await whole_body(codec, turn, runner.events())
            finally:
                await runner.aclose()

        answer = await until_disconnected(request, whole())
        timing = server_timing(
            time.perf_counter() - started, runner.upstream_seconds, runner.web_seconds
        )
        return _json(200, answer, {"Server-Timing": timing})

    async def _relay_chat(
        request: Request, body: dict[str, Any], started: float, codec: Codec
    ) -> Response:
        if upstream.model:
            body = {**body, "model": upstream.model}
        payload = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        return await relay(request, upstream, codec, "POST", "/chat/completions", payload, started)

    routes = {
        "chat": ("/v1/chat/completions", "/chat/completions"),
        "responses": ("/v1/responses", "/responses"),
        "messages": ("/v1/messages", "/messages", "/anthropic/v1/messages"),
    }
    for protocol, paths in routes.items():
        if protocol not in codecs:
            continue
        handler = endpoint(protocol)
        for path in paths:
            app.add_api_route(path, handler, methods=["POST"], include_in_schema=False)

    async def models(request: Request) -> Response:
        codec = codecs.get("chat") or ChatCodec()
        if not _authorised(request, keys):
            return _error(codec, 401, "invalid or missing API key")
        try:
            return await relay(
                request, upstream, codec, "GET", "/models", None, time.perf_counter()
            )
        except ServerFailure as error:
            return _error(codec, error.status, error.message, error.headers)
        except ClientGone:
            return Response(status_code=499)

    async def healthz() -> Response:
        return _json(200, {"status": "ok"})

    app.add_api_route("/v1/models", models, methods=["GET"], include_in_schema=False)
    app.add_api_route("/models", models, methods=["GET"], include_in_schema=False)
    app.add_api_route("/healthz", healthz, methods=["GET"], include_in_schema=False)
    return app


def _parse(codec: Codec, body: dict[str, Any]) -> Turn:
    """The codec's translation; a shape it did not foresee is still the client's 400."""
    try:
        return codec.parse(body)
    except RequestError:
        raise
    except Exception:
        logger.exception("an unexpected request shape reached the %s parser", codec.protocol)
        raise RequestError("the request has a shape this server cannot read") from None


def _error(
    codec: Codec, status: int, message: str, headers: dict[str, str] | None = None
) -> Response:
    return _json(status, codec.error_body(status, message), headers)
