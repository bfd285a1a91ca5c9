"""A scripted OpenAI-compatible Chat Completions server on 127.0.0.1, for tests and benchmarks.

Each request takes the next :class:`Step` of the script (or a default answer) and serves it
streamed or not, as the request asks. Requests are recorded for assertions.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from webreach.server.core.loop.title import TITLE_ASK
from webreach.server.core.review.reviewers import REVIEW_ASK


@dataclass
class Call:
    name: str
    arguments: dict[str, Any] | str

    @property
    def text(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Step:
    content: str | list[str] = ""
    reasoning: str | list[str] = ""
    calls: list[Call] = field(default_factory=list)
    finish_reason: str | None = None
    usage: tuple[int, int] = (10, 5)
    status: int = 200
    error: str = "scripted failure"
    hold: threading.Event | None = None
    """Wait for this before sending the body (headers are sent at once when streaming)."""
    break_after: int | None = None
    """Drop the connection after this many chunks (a failure mid-stream); without streaming,
    send half of the JSON body and then drop the connection."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers (``Retry-After`` on a 429, say)."""
    hang: bool = False
    """Answer nothing until the client hangs up; :attr:`ScriptedUpstream.hung_up` records when."""
    pace: float = 0.0
    """Seconds between streamed chunks, so each reaches the client on its own."""
    raw_body: bytes | None = None
    """Send these bytes as the body instead of a valid completion (malformed JSON, say)."""

    def chunks(self, field_value: str | list[str]) -> list[str]:
        return (
            [field_value]
            if isinstance(field_value, str) and field_value
            else (list(field_value) if isinstance(field_value, list) else [])
        )


class ScriptedUpstream:
    def __init__(self, port: int = 0) -> None:
        self.script: list[Step] = []
        self.requests: list[dict[str, Any]] = []
        self.default = Step(content="Hello from the scripted upstream.")
        self.respond: Callable[[dict[str, Any]], Step] | None = None
        """When set, answers every request (the script is ignored): for benchmarks."""
        self.record = True
        self.last_tool_call_sent = 0.0
        """``time.monotonic()`` when the last tool call of a stream was sent."""
        self.hung_up: list[float] = []
        """``time.monotonic()`` of every client that left while a ``hang`` step waited."""
        self.waiting = 0
        """Requests of ``hang`` steps whose client is still connected."""
        self.title = Step(content="Iceland in numbers")
        """The answer to the server's title asks, which never take a step of the script."""
        self.verdict: Step | Callable[[dict[str, Any]], Step] = Step(content="PASS")
        """The answer to the server's content reviews (``safety_check`` without a moderation
        endpoint): a step, or a function of the request."""
        self.asides: list[dict[str, Any]] = []
        """The server's own small asks (titles, reviews), kept apart from :attr:`requests`."""
        self._lock = threading.Lock()
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._completions, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/last_tool_call", self._last_tool_call, methods=["GET"]),
            ]
        )
        self._socket = socket.socket()
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socket.bind(("127.0.0.1", port))
        self._server = uvicorn.Server(
            uvicorn.Config(app, log_level="error", lifespan="off", access_log=False)
        )
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}/v1"

    def queue(self, *steps: Step) -> None:
        with self._lock:
            self.script.extend(steps)

    def __enter__(self) -> ScriptedUpstream:
        self._thread.start()
        while not self._server.started:
            time.sleep(0.005)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    async def _last_tool_call(self, request: Request) -> Response:
        return Response(repr(self.last_tool_call_sent), media_type="text/plain")

    async def _models(self, request: Request) -> Response:
        return JSONResponse(
            {
                "object": "list",
                "data": [
                    {"id": "scripted-model", "object": "model", "created": 0, "owned_by": "tests"}
                ],
            }
        )

    async def _completions(self, request: Request) -> Response:
        body = await request.json()
        aside = _aside(body)
        if aside is not None:
            with self._lock:
                self.asides.append(body)
            verdict = self.verdict
            step = (
                self.title
                if aside == TITLE_ASK
                else (verdict(body) if callable(verdict) else verdict)
            )
        elif self.respond is not None:
            step = self.respond(body)
        else:
            with self._lock:
                if self.record:
                    self.requests.append(body)
                step = self.script.pop(0) if self.script else self.default
        if step.hang:
            await self._until_gone(request)
            return Response(status_code=499)
        if step.raw_body is not None:
            return Response(step.raw_body, step.status, step.headers, "application/json")
        if step.status != 200:
            return JSONResponse(
                {"error": {"message": step.error, "type": "invalid_request_error"}},
                status_code=step.status,
                headers=step.headers,
            )
        model = body.get("model", "scripted-model")
        if step.break_after is not None and not body.get("stream"):
            whole = json.dumps(self._completion(step, model)).encode()
            return StreamingResponse(_torn(whole), media_type="application/json")
        if body.get("stream"):
            return StreamingResponse(self._stream(step, model), media_type="text/event-stream")
        if step.hold is not None:
            await asyncio.to_thread(step.hold.wait)
        return JSONResponse(self._completion(step, model))

    async def _until_gone(self, request: Request) -> None:
        with self._lock:
            self.waiting += 1
        try:
            while not await request.is_disconnected():
                await asyncio.sleep(0.01)
        finally:
            with self._lock:
                self.waiting -= 1
                self.hung_up.append(time.monotonic())

    @staticmethod
    def _finish(step: Step) -> str:
        return step.finish_reason or ("tool_calls" if step.calls else "stop")

    def _completion(self, step: Step, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(step.chunks(step.content)),
        }
        reasoning = "".join(step.chunks(step.reasoning))
        if reasoning:
            message["reasoning_content"] = reasoning
        if step.calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{i}_{uuid.uuid4().hex[:8]}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.text},
                }
                for i, c in enumerate(step.calls)
            ]
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": self._finish(step),
                    "logprobs": None,
                }
            ],
            "usage": self._usage(step),
        }

    @staticmethod
    def _usage(step: Step) -> dict[str, Any]:
        prompt, completion = step.usage
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }

    async def _stream(self, step: Step, model: str) -> AsyncIterator[bytes]:
        head = {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }

        def frame(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            return f"data: {json.dumps({**head, 'choices': [choice], **extra})}\n\n".encode()

        if step.hold is not None:
            await asyncio.to_thread(step.hold.wait)
        frames = [frame({"role": "assistant", "content": ""})]
        frames += [frame({"reasoning_content": piece}) for piece in step.chunks(step.reasoning)]
        frames += [frame({"content": piece}) for piece in step.chunks(step.content)]
        for index, call in enumerate(step.calls):
            text = call.text
            half = len(text) // 2
            call_id = f"call_{index}_{uuid.uuid4().hex[:8]}"
            frames.append(
                frame(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": text[:half]},
                            }
                        ]
                    }
                )
            )
            frames.append(
                frame({"tool_calls": [{"index": index, "function": {"arguments": text[half:]}}]})
            )
        frames.append(frame({}, self._finish(step)))
        usage_frame = {**head, "choices": [], "usage": self._usage(step)}
        frames.append(f"data: {json.dumps(usage_frame)}\n\n".encode())
        frames.append(b"data: [DONE]\n\n")
        for number, payload in enumerate(frames):
            if step.break_after is not None and number >= step.break_after:
                raise ConnectionResetError("scripted break")
            yield payload
            if step.pace:
                await asyncio.sleep(step.pace)
            if (
                step.calls
                and payload.startswith(b'data: {"id"')
                and b'"finish_reason": "' in payload
            ):
                self.last_tool_call_sent = time.monotonic()


def _aside(body: dict[str, Any]) -> str | None:
    """The server's own ask this request is (its system message), if it is one."""
    messages = body.get("messages") or [{}]
    first = messages[0].get("content")
    return first if first in (TITLE_ASK, REVIEW_ASK) else None


async def _torn(whole: bytes) -> AsyncIterator[bytes]:
    """Half of a body, then a dropped connection."""
    yield whole[: len(whole) // 2]
    raise ConnectionResetError("scripted break")


# --- Hostile upstreams: a model that never stops calling tools, one that never ends.


class ToolCaller:
    """A :attr:`ScriptedUpstream.respond` that answers every model step with a call of ``tool``
    (a new search each time, tools offered or not); ``bodies`` keeps each step's request. With
    ``gives_up`` it answers in text from that step on (a test of a server that never stops it
    fails instead of hanging)."""

    def __init__(self, tool: str = "web_search", *, gives_up: int | None = None) -> None:
        self.tool = tool
        self.gives_up = gives_up
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    @property
    def calls(self) -> int:
        return len(self.bodies)

    def __call__(self, body: dict[str, Any]) -> Step:
        with self._lock:
            self.bodies.append(body)
            number = len(self.bodies)
        if self.gives_up is not None and number >= self.gives_up:
            return Step(content="Giving up.")
        return Step(calls=[Call(self.tool, {"queries": [f"query {number}"]})])


class TricklingUpstream(ScriptedUpstream):
    """An upstream that never finishes: a streamed completion sends one token (or, with
    ``comments``, one SSE comment) every ``pace`` seconds; a non-streamed one sends a space
    (valid leading JSON whitespace) every ``pace`` seconds. With ``lasts`` it does finish after
    that many seconds (so a test of a server that never stops it fails instead of hanging).
    ``calls`` counts the requests, ``open`` the answers still being sent, ``closed`` when
    (``time.monotonic()``) each ended."""

    def __init__(
        self, pace: float = 0.2, *, comments: bool = False, lasts: float | None = None
    ) -> None:
        super().__init__()
        self.pace = pace
        self.comments = comments
        self.lasts = lasts
        self.calls = 0
        self.open = 0
        self.closed: list[float] = []

    async def _completions(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            self.calls += 1
        if body.get("stream"):
            return StreamingResponse(self._tracked(self._tokens()), media_type="text/event-stream")
        return StreamingResponse(self._tracked(self._spaces()), media_type="application/json")

    async def _tokens(self) -> AsyncIterator[bytes]:
        head = {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion.chunk"}
        head |= {"created": int(time.time()), "model": "scripted-model"}
        number = 0
        ends = None if self.lasts is None else time.monotonic() + self.lasts
        while ends is None or time.monotonic() < ends:
            if self.comments:
                yield b": keep-alive\n\n"
            else:
                number += 1
                delta = {"content": f"t{number} "}
                choice = {"index": 0, "delta": delta, "finish_reason": None}
                yield f"data: {json.dumps({**head, 'choices': [choice]})}\n\n".encode()
            await asyncio.sleep(self.pace)
        last = {"index": 0, "delta": {}, "finish_reason": "stop"}
        yield f"data: {json.dumps({**head, 'choices': [last]})}\n\ndata: [DONE]\n\n".encode()

    async def _spaces(self) -> AsyncIterator[bytes]:
        ends = None if self.lasts is None else time.monotonic() + self.lasts
        while ends is None or time.monotonic() < ends:
            yield b" "
            await asyncio.sleep(self.pace)
        yield json.dumps(self._completion(Step(content="Finally."), "scripted-model")).encode()

    async def _tracked(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        with self._lock:
            self.open += 1
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            with self._lock:
                self.open -= 1
                self.closed.append(time.monotonic())


class EarlyUsageUpstream(ScriptedUpstream):
    """Reports usage on a first chunk of its own too (the input tokens, no output yet), before
    anything else, as upstreams with running usage (vLLM's ``continuous_usage_stats``) do;
    every report is the step's total so far, and the last one is the whole step's."""

    async def _stream(self, step: Step, model: str) -> AsyncIterator[bytes]:
        prompt, _ = step.usage
        usage = {"prompt_tokens": prompt, "completion_tokens": 0, "total_tokens": prompt}
        early = {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [],
            "usage": usage,
        }
        yield f"data: {json.dumps(early)}\n\n".encode()
        async for payload in super()._stream(step, model):
            yield payload
