"""The FastAPI application: routes, inbound keys, and the choice between relay and loop."""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse

from ..seam import WebRuntime
from ..tools import ToolOptions
from .chat import ChatCodec
from .chat_request import declares_web_tools
from .codec import Codec
from .loop import TurnRunner
from .loop_context import ServerContext
from .model import RequestError
from .sealing import PageSealer
from .transport import server_timing, with_keepalive
from .upstream import Upstream, UpstreamError

__all__ = ["ServerConfig", "create_app"]


@dataclass(frozen=True, slots=True)
class ServerConfig:
    upstream_base_url: str
    upstream_api_key: str | None = None
    upstream_model: str | None = None
    api_keys: Sequence[str] = ()
    signing_key: str | None = None
    keepalive_seconds: float = 10.0
    upstream_timeout: float = 600.0


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


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


def default_codecs() -> dict[str, Codec]:
    from .messages import MessagesCodec
    from .responses import ResponsesCodec

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
    state: dict[str, Upstream] = {}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        state["upstream"] = Upstream(
            base_url=config.upstream_base_url,
            api_key=config.upstream_api_key,
            model=config.upstream_model,
            timeout=config.upstream_timeout,
        )
        try:
            yield
        finally:
            await state["upstream"].aclose()
            await runtime.aclose()

    app = FastAPI(title="webreach", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.add_middleware(_ServerTiming)
    codecs = codecs if codecs is not None else default_codecs()

    def context() -> ServerContext:
        return ServerContext(state["upstream"], runtime, options, sealer)

    def endpoint(protocol: str) -> Callable[[Request], Any]:
        codec = codecs[protocol]

        async def handle(request: Request) -> Response:
            started = time.perf_counter()
            if not _authorised(request, keys):
                return _json(401, codec.error_body(401, "invalid or missing API key"))
            try:
                body = json.loads(await request.body())
            except ValueError:
                return _json(400, codec.error_body(400, "the request body is not valid JSON"))
            if not isinstance(body, dict):
                return _json(400, codec.error_body(400, "the request body must be a JSON object"))
            if protocol == "chat" and not declares_web_tools(body):
                return await _relay_chat(body, started, codec)
            try:
                turn = codec.parse(body)
            except RequestError as error:
                return _json(error.status, codec.error_body(error.status, error.message))
            runner = TurnRunner(turn, context())
            try:
                await runner.start()
            except UpstreamError as error:
                return _json(error.status, codec.error_body(error.status, error.message))
            if turn.stream:
                timing = server_timing(
                    time.perf_counter() - started, runner.upstream_seconds, runner.web_seconds
                )
                frames = with_keepalive(
                    codec.stream(turn, runner.events()), config.keepalive_seconds
                )
                return StreamingResponse(
                    frames,
                    media_type="text/event-stream",
                    headers={"Server-Timing": timing, "Cache-Control": "no-cache"},
                )
            work = asyncio.ensure_future(codec.body(turn, runner.events()))
            watch = asyncio.ensure_future(_disconnected(request))
            try:
                await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (work, watch):
                    if not task.done():
                        task.cancel()
                await asyncio.gather(work, watch, return_exceptions=True)
            if work.cancelled():
                return Response(status_code=499)
            timing = server_timing(
                time.perf_counter() - started, runner.upstream_seconds, runner.web_seconds
            )
            return _json(200, work.result(), {"Server-Timing": timing})

        return handle

    async def _relay_chat(body: dict[str, Any], started: float, codec: Codec) -> Response:
        """No web tools: the upstream's bytes go back as they are, streamed as they arrive."""
        upstream = state["upstream"]
        if upstream.model:
            body = {**body, "model": upstream.model}
        payload = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        return await _relay(upstream, "POST", "/chat/completions", payload, started, codec)

    async def _relay(
        upstream: Upstream,
        method: str,
        path: str,
        payload: bytes | None,
        started: float,
        codec: Codec,
    ) -> Response:
        manager = upstream.relay(method, path, payload)
        try:
            raw = await manager.__aenter__()
        except UpstreamError as error:
            return _json(error.status, codec.error_body(error.status, error.message))
        upstream_time = time.perf_counter() - started
        timing = server_timing(upstream_time, upstream_time, 0.0)
        headers = {"Server-Timing": timing}
        if not raw.content_type.startswith("text/event-stream"):
            try:
                content = b"".join([chunk async for chunk in raw.chunks])
            finally:
                await manager.__aexit__(None, None, None)
            return Response(content, raw.status, headers=headers, media_type=raw.content_type)

        async def relayed() -> AsyncIterator[bytes]:
            try:
                async for chunk in raw.chunks:
                    yield chunk
            finally:
                await manager.__aexit__(None, None, None)

        return StreamingResponse(
            relayed(), raw.status, headers=headers, media_type=raw.content_type
        )

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
        codec = codecs["chat"]
        if not _authorised(request, keys):
            return _json(401, codec.error_body(401, "invalid or missing API key"))
        return await _relay(state["upstream"], "GET", "/models", None, time.perf_counter(), codec)

    async def healthz() -> Response:
        return _json(200, {"status": "ok"})

    app.add_api_route("/v1/models", models, methods=["GET"], include_in_schema=False)
    app.add_api_route("/models", models, methods=["GET"], include_in_schema=False)
    app.add_api_route("/healthz", healthz, methods=["GET"], include_in_schema=False)
    return app
