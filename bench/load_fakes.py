"""The two fakes that ``bench/load.py`` puts around ``webreach serve``, each run as its own process.

* ``upstream``: a scripted OpenAI-compatible Chat Completions upstream that takes ``--seconds``
  before answering each model step: first a ``web_search`` call for the user's question, then a
  short answer citing 【1】. A question that starts with ``hang`` gets no answer at all, not even
  headers, until webreach closes the connection; ``GET /hangs`` tells when each one arrived and
  when it was closed.
* ``provider``: an Exa-shaped search provider that answers after ``--seconds``; a query that
  starts with ``abandon`` is held until webreach closes the connection (or 60 s pass). Its five
  sources are ``/page/1`` to ``/page/5``, each on the next of the ``--pages`` origins (the page
  server of ``load_pages.py`` on as many ports, or ports nothing listens on).

Both are asyncio servers, so hundreds of their requests overlap and they are never the
bottleneck. Both serve ``GET /stats`` and ``POST /stats/reset`` (a :class:`Gauge`).

    python bench/load_fakes.py upstream --port 8001 --seconds 0.2
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

HOST = "127.0.0.1"
MARKER = "abandon"
"""A search query that starts with this is held by the provider (the abandon mode)."""
HANG = "hang"
"""A user question that starts with this is never answered by the upstream (leave-early mode)."""
HOLD_SECONDS = 60.0
EXA_KEY = "bench-exa-key"
UPSTREAM_KEY = "bench-upstream-key"
ANSWER = ["Iceland has about ", "390,000 people", "【1】."]


# --- the fakes' bookkeeping -------------------------------------------------------------------


@dataclass
class Gauge:
    """Requests served by a fake: in flight now, the peak, the total, and held ones."""

    active: int = 0
    peak: int = 0
    total: int = 0
    held: int = 0
    held_total: int = 0
    released_by_disconnect: int = 0
    served_ms: list[float] = field(default_factory=list)
    """How long each answered request took inside the fake, since the last reset."""

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        self.active += 1
        self.total += 1
        self.peak = max(self.peak, self.active)
        began = time.perf_counter()
        try:
            yield
        finally:
            self.active -= 1
            self.served_ms.append((time.perf_counter() - began) * 1000)

    def reset(self) -> None:
        self.peak = self.active
        self.served_ms = []


def stats_routes(gauge: Gauge) -> list[web.RouteDef]:
    async def stats(_: web.Request) -> web.Response:
        return web.json_response(gauge.__dict__)

    async def reset(_: web.Request) -> web.Response:
        gauge.reset()
        return web.json_response(gauge.__dict__)

    return [web.get("/stats", stats), web.post("/stats/reset", reset)]


def serve_app(app: web.Application, port: int, handler_cancellation: bool = False) -> None:
    web.run_app(
        app,
        host=HOST,
        port=port,
        print=None,
        access_log=None,
        backlog=4096,
        shutdown_timeout=0.5,
        handler_cancellation=handler_cancellation,
    )


# --- role: the scripted upstream ----------------------------------------------------------------


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def last_user(messages: list[dict[str, Any]]) -> int:
    return max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)


def question_of(body: dict[str, Any]) -> str:
    """The text of the last user message."""
    messages = body.get("messages", [])
    index = last_user(messages)
    return text_of(messages[index].get("content")).strip() if index >= 0 else ""


def upstream_step(body: dict[str, Any]) -> tuple[list[str], str | None]:
    """The answer pieces, or the search query when this step should call ``web_search``."""
    messages = body.get("messages", [])
    tools = {t.get("function", {}).get("name") for t in body.get("tools", [])}
    user = last_user(messages)
    searched = any(m.get("role") == "tool" for m in messages[user + 1 :])
    if "web_search" in tools and not searched and user >= 0:
        return [], question_of(body)
    return ANSWER, None


def completion_chunks(model: str, pieces: list[str], query: str | None) -> list[dict[str, Any]]:
    head = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": piece}) for piece in pieces]
    if query is not None:
        arguments = json.dumps({"queries": [query]})
        call = {"index": 0, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "function"}
        call["function"] = {"name": "web_search", "arguments": arguments}
        chunks.append(chunk({"tool_calls": [call]}))
    chunks.append(chunk({}, "tool_calls" if query is not None else "stop"))
    usage = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
    chunks.append({**head, "choices": [], "usage": usage})
    return chunks


def completion(model: str, pieces: list[str], query: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "".join(pieces)}
    if query is not None:
        arguments = json.dumps({"queries": [query]})
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": "web_search", "arguments": arguments},
            }
        ]
    finish = "tool_calls" if query is not None else "stop"
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }


@dataclass
class Hung:
    """One request the upstream never answered: its question's tag (``hang 7``), when it
    arrived and when webreach closed it, in ``time.monotonic()`` seconds (CLOCK_MONOTONIC,
    the same clock in every process on Linux)."""

    tag: str
    arrived: float
    closed: float | None = None


async def never_answer(request: web.Request, hung: Hung, gauge: Gauge) -> web.Response:
    """Send nothing, not even headers, until webreach closes the connection; note when.

    The app runs with handler cancellation, so a lost connection cancels this at once; polling
    the transport is only the fallback. After ``HOLD_SECONDS`` the upstream gives up with 504.
    """
    gauge.held += 1
    gauge.held_total += 1
    try:
        for _ in range(int(HOLD_SECONDS / 0.01)):
            if client_gone(request):
                hung.closed = time.monotonic()
                gauge.released_by_disconnect += 1
                return web.Response(status=499)  # nobody reads it
            await asyncio.sleep(0.01)
    except asyncio.CancelledError:
        hung.closed = time.monotonic()
        gauge.released_by_disconnect += 1
        raise
    finally:
        gauge.held -= 1
    return web.json_response({"error": {"message": "held too long"}}, status=504)


def run_upstream(port: int, latency: float) -> None:
    gauge = Gauge()
    hangs: list[Hung] = []

    async def completions(request: web.Request) -> web.StreamResponse:
        with gauge.serving():
            body = await request.json()
            question = question_of(body)
            if question.lower().startswith(HANG):
                hung = Hung(question.partition(":")[0], time.monotonic())
                hangs.append(hung)
                return await never_answer(request, hung, gauge)
            pieces, query = upstream_step(body)
            model = str(body.get("model", "bench-model"))
            await asyncio.sleep(latency)
            if not body.get("stream"):
                return web.json_response(completion(model, pieces, query))
            response = web.StreamResponse(headers={"content-type": "text/event-stream"})
            await response.prepare(request)
            for item in completion_chunks(model, pieces, query):
                await response.write(f"data: {json.dumps(item)}\n\n".encode())
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
            return response

    async def hang_list(_: web.Request) -> web.Response:
        return web.json_response([hung.__dict__ for hung in hangs])

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.add_routes(
        [
            web.post("/v1/chat/completions", completions),
            web.get("/hangs", hang_list),
            *stats_routes(gauge),
        ]
    )
    serve_app(app, port, handler_cancellation=True)


# --- role: the Exa-shaped provider --------------------------------------------------------------


def exa_results(query: str, origins: list[str], search: int = 0) -> dict[str, Any]:
    """Five results, each on the next of ``origins`` in turn (search ``search``'s pages start
    where the previous search's ended), as a search's sources are on sites of their own."""
    return {
        "results": [
            {
                "url": f"{origins[(search * 5 + rank) % len(origins)]}/page/{rank}",
                "title": f"Result {rank} for {query[:40]}",
                "highlights": [f"Iceland had about 390,000 inhabitants in 2024 (source {rank})."],
                "publishedDate": "2024-06-01T00:00:00.000Z",
            }
            for rank in range(1, 6)
        ]
    }


def client_gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def hold(request: web.Request, gauge: Gauge) -> None:
    """Keep the request open until webreach hangs up or ``HOLD_SECONDS`` pass."""
    gauge.held += 1
    gauge.held_total += 1
    try:
        for _ in range(int(HOLD_SECONDS / 0.02)):
            if client_gone(request):
                gauge.released_by_disconnect += 1
                return
            await asyncio.sleep(0.02)
    finally:
        gauge.held -= 1


def run_provider(port: int, latency: float, origins: list[str]) -> None:
    gauge = Gauge()
    searches = itertools.count()

    async def search(request: web.Request) -> web.Response:
        with gauge.serving():
            if request.headers.get("x-api-key") != EXA_KEY:
                return web.json_response({"error": "bad key"}, status=401)
            query = str((await request.json()).get("query", ""))
            if query.lower().startswith(MARKER):
                await hold(request, gauge)
            else:
                await asyncio.sleep(latency)
            return web.json_response(exa_results(query, origins, next(searches)))

    app = web.Application()
    app.add_routes([web.post("/search", search), *stats_routes(gauge)])
    serve_app(app, port)


def main() -> None:
    parser = argparse.ArgumentParser(description="A fake of bench/load.py.")
    parser.add_argument("role", choices=("provider", "upstream"))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--seconds", type=float, required=True, help="latency of each answer")
    parser.add_argument(
        "--pages", default="https://example.com", help="the sources' origins, comma-separated"
    )
    args = parser.parse_args()
    if args.role == "upstream":
        run_upstream(args.port, args.seconds)
    else:
        run_provider(args.port, args.seconds, [o.rstrip("/") for o in args.pages.split(",")])


if __name__ == "__main__":
    main()
