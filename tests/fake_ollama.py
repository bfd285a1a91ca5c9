"""A small fake Ollama on 127.0.0.1: its real paths (``/api/tags``, ``/v1/models``,
``/v1/chat/completions``) and its real answers, errors included: Gin's plain-text
``404 page not found`` for any other path, and the 400 a model without tool support gives
when a request offers tools."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

WITH_TOOLS = "qwen3:8b"
"""A model whose template has tools."""
WITHOUT_TOOLS = "gemma3:4b"
"""A model Ollama refuses tools for."""


def _openai_error(status: int, message: str) -> JSONResponse:
    kind = "invalid_request_error" if status == 400 else "api_error"
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return JSONResponse(body, status_code=status)


class FakeOllama:
    def __init__(self) -> None:
        self.asked: list[str] = []
        app = Starlette(
            routes=[
                Route("/api/tags", self._tags, methods=["GET"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/{rest:path}", self._not_found, methods=["GET", "POST"]),
            ]
        )
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._server = uvicorn.Server(
            uvicorn.Config(app, log_level="error", lifespan="off", access_log=False)
        )
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    @property
    def root(self) -> str:
        """``http://127.0.0.1:<port>``: what a user who forgot ``/v1`` sets."""
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}"

    def __enter__(self) -> FakeOllama:
        self._thread.start()
        deadline = time.monotonic() + 60
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the fake Ollama did not start")
            time.sleep(0.005)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    async def _not_found(self, request: Request) -> Response:
        self.asked.append(f"{request.method} {request.url.path}")
        return PlainTextResponse("404 page not found", status_code=404)

    async def _tags(self, request: Request) -> Response:
        self.asked.append("GET /api/tags")
        models = [{"name": name, "model": name} for name in (WITH_TOOLS, WITHOUT_TOOLS)]
        return JSONResponse({"models": models})

    async def _models(self, request: Request) -> Response:
        self.asked.append("GET /v1/models")
        data = [
            {"id": name, "object": "model", "created": 1700000000, "owned_by": "library"}
            for name in (WITH_TOOLS, WITHOUT_TOOLS)
        ]
        return JSONResponse({"object": "list", "data": data})

    async def _chat(self, request: Request) -> Response:
        self.asked.append("POST /v1/chat/completions")
        body: dict[str, Any] = await request.json()
        model = str(body.get("model"))
        if model not in (WITH_TOOLS, WITHOUT_TOOLS):
            return _openai_error(404, f'model "{model}" not found, try pulling it first')
        if body.get("tools") and model == WITHOUT_TOOLS:
            return _openai_error(400, f"registry.ollama.ai/library/{model} does not support tools")
        message = {"role": "assistant", "content": "Hello from Ollama."}
        if not body.get("stream"):
            return JSONResponse(
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 1700000000,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9},
                }
            )

        def frames() -> Any:
            for delta, finish in ((message, None), ({}, "stop")):
                chunk = {
                    "id": "chatcmpl-1",
                    "object": "chat.completion.chunk",
                    "created": 1700000000,
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
                yield f"data: {json.dumps(chunk)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(frames(), media_type="text/event-stream")
