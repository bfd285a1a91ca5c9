"""Do hostile pages, slow clients, slow upstreams and slow providers stay inside their bounds?

The real server, ``python -m webreach serve`` (one uvicorn worker, cache off), in front of three
fakes that this script runs on 127.0.0.1: a page server, a Chat Completions upstream and an
Exa-shaped search provider. Each time-bound case is measured beside a plain request of the same
kind, in the same run:

* **Render stall**: ``GET /healthz`` every 10 ms while ``POST /v1/fetch`` reads a page of
  ``--depth`` nested ``<div>`` (then, for comparison, while it reads a flat page of the same size).
  Target: ``/healthz`` p99 ≤ 250 ms.
* **Slow headers / slow body**: connections that send their headers, or their body, one byte a
  second; the time until the server answers 408 or closes, against its deadline.
* **Turn deadline**: an upstream that streams one token every 0.25 s forever; the time until the
  client sees the protocol's error (streamed) or a 504 (not streamed), against
  ``WEBREACH_TURN_TIMEOUT``.
* **Search deadline**: a provider that sends its body one byte every 0.2 s; the time until
  ``POST /v1/search`` answers, against ``WEBREACH_SEARCH_TIMEOUT``.

    python bench/hostile.py [--depth 40000] [--turn 3] [--search 1] [--header 2] [--body 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load_rig import child_env, free_port, spawn, stop, wait_listening

HOST = "127.0.0.1"
UPSTREAM_KEY = "bench-upstream-key"
EXA_KEY = "bench-exa-key"
DRIP = "drip"
"""A question or query that starts with this is answered a little at a time, forever."""


# --- the fakes ----------------------------------------------------------------------------------


def deep_page(depth: int) -> str:
    return (
        "<html><head><title>Deep</title></head><body>"
        + "<div>" * depth
        + "<p>The bottom of a very deep page.</p>"
        + "</div>" * depth
        + "</body></html>"
    )


def flat_page(size: int) -> str:
    paragraph = (
        "<p>Iceland is a Nordic island country between the North Atlantic and Arctic Oceans, "
        "on the Mid-Atlantic Ridge. It is culturally and geologically part of Europe.</p>\n"
    )
    body = paragraph * max(1, size // len(paragraph))
    return f"<html><head><title>Flat</title></head><body><article>{body}</article></body></html>"


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    item = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "bench-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(item)}\n\n".encode()


def question_of(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


async def upstream(request: web.Request) -> web.StreamResponse:
    body = await request.json()
    drip = question_of(body).startswith(DRIP)
    if drip and not body.get("stream"):
        # A whole answer that never completes: JSON whitespace, a byte every 0.25 s.
        held = web.StreamResponse(headers={"content-type": "application/json"})
        await held.prepare(request)
        while True:
            await asyncio.sleep(0.25)
            await held.write(b" ")
    if not body.get("stream"):
        return web.json_response(
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion",
                "created": 0,
                "model": "bench-model",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "Plain answer."},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
            }
        )
    response = web.StreamResponse(headers={"content-type": "text/event-stream"})
    await response.prepare(request)
    await response.write(chunk({"role": "assistant", "content": ""}))
    if drip:
        while True:
            await asyncio.sleep(0.25)
            await response.write(chunk({"content": "more "}))
    await response.write(chunk({"content": "Plain answer."}))
    await response.write(chunk({}, "stop"))
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


async def provider(request: web.Request) -> web.StreamResponse:
    query = str((await request.json()).get("query", ""))
    payload = json.dumps(
        {
            "results": [
                {"url": f"https://example.com/{rank}", "title": f"Result {rank}", "text": "Text."}
                for rank in range(1, 4)
            ]
        }
    ).encode()
    if not query.startswith(DRIP):
        return web.Response(body=payload, content_type="application/json")
    response = web.StreamResponse(headers={"content-type": "application/json"})
    response.content_length = len(payload)
    await response.prepare(request)
    for byte in payload:
        await response.write(bytes([byte]))
        await asyncio.sleep(0.2)
    return response


@contextlib.asynccontextmanager
async def fakes(depth: int) -> AsyncIterator[int]:
    deep = deep_page(depth)
    flat = flat_page(len(deep))

    async def page(request: web.Request) -> web.Response:
        text = deep if request.match_info["name"] == "deep" else flat
        return web.Response(text=text, content_type="text/html")

    app = web.Application()
    app.add_routes(
        [
            web.get("/pages/{name}", page),
            web.post("/v1/chat/completions", upstream),
            web.post("/search", provider),
        ]
    )
    runner = web.AppRunner(app, handler_cancellation=True)
    await runner.setup()
    port = free_port()
    site = web.TCPSite(runner, HOST, port)
    await site.start()
    try:
        yield port
    finally:
        await runner.cleanup()


# --- measuring ----------------------------------------------------------------------------------


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def healthz_while(
    session: aiohttp.ClientSession, base: str, work: Callable[[], Awaitable[list[float]]]
) -> tuple[list[float], list[float]]:
    """``/healthz`` latencies (ms), polled every 10 ms while ``work`` runs, and its own times."""
    latencies: list[float] = []
    done = asyncio.Event()

    async def poll() -> None:
        while not done.is_set():
            started = time.perf_counter()
            async with session.get(f"{base}/healthz") as response:
                await response.read()
            latencies.append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(0.01)

    poller = asyncio.create_task(poll())
    try:
        times = await work()
    finally:
        done.set()
        await poller
    return latencies, times


async def fetch_pages(
    session: aiohttp.ClientSession, base: str, url: str, count: int
) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        async with session.post(f"{base}/v1/fetch", json={"url": url}) as response:
            body = await response.json()
            if response.status != 200:
                raise RuntimeError(f"/v1/fetch {url}: HTTP {response.status} {body}")
        times.append(time.perf_counter() - started)
    return times


async def slow_send(port: int, head: bytes, dribble: bytes, deadline: float) -> tuple[float, str]:
    """Send ``head`` at once, then ``dribble`` a byte a second; seconds until the server answers
    or closes, and the first line of what it answered."""
    reader, writer = await asyncio.open_connection(HOST, port)
    started = time.perf_counter()
    writer.write(head)

    async def drip() -> None:
        for byte in dribble:
            await asyncio.sleep(1.0)
            writer.write(bytes([byte]))
            await writer.drain()

    dripping = asyncio.create_task(drip())
    answer, gave_up = b"", deadline + 20
    try:
        answer = await asyncio.wait_for(reader.read(65536), timeout=gave_up)
    except ConnectionError:
        pass
    except TimeoutError:
        answer = f"still open after {gave_up:g} s".encode()
    elapsed = time.perf_counter() - started
    dripping.cancel()
    with contextlib.suppress(asyncio.CancelledError, ConnectionError):
        await dripping
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()
    first = answer.split(b"\r\n", 1)[0].decode(errors="replace") or "closed, no answer"
    return elapsed, first


async def timed_chat(
    session: aiohttp.ClientSession, base: str, question: str, stream: bool, web_search: bool
) -> tuple[float, str]:
    body: dict[str, Any] = {
        "model": "bench-model",
        "messages": [{"role": "user", "content": question}],
        "stream": stream,
    }
    if web_search:
        body["tools"] = [{"type": "deepseek_web_search"}]
    started = time.perf_counter()
    async with session.post(f"{base}/v1/chat/completions", json=body) as response:
        text = (await response.read()).decode(errors="replace")
        status = response.status
    elapsed = time.perf_counter() - started
    outcome = f"HTTP {status}"
    if stream:
        events = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
        last = events[-1] if events else ""
        outcome += ", error event" if '"error"' in last else f", ended with {last[:40]!r}"
    return elapsed, outcome


async def timed_search(session: aiohttp.ClientSession, base: str, query: str) -> tuple[float, str]:
    started = time.perf_counter()
    async with session.post(f"{base}/v1/search", json={"query": query}) as response:
        body = await response.json()
    elapsed = time.perf_counter() - started
    results = body.get("results") or body.get("searches") or body
    failed = "error" in json.dumps(results)
    return elapsed, f"HTTP {response.status}" + (", search failed" if failed else "")


# --- the run ------------------------------------------------------------------------------------


def row(case: str, outcome: str, plain: str, hostile: str, bound: str, verdict: str) -> None:
    print(f"  {case:<31} {outcome:<24} {plain:>9} {hostile:>9} {bound:>9} {verdict:>10}")


async def run(args: argparse.Namespace, workdir: Path) -> None:
    async with fakes(args.depth) as fake_port:
        fake = f"http://{HOST}:{fake_port}"
        port = free_port()
        env = child_env(
            {
                "WEBREACH_UPSTREAM_BASE_URL": f"{fake}/v1",
                "WEBREACH_UPSTREAM_API_KEY": UPSTREAM_KEY,
                "WEBREACH_SEARCH_PROVIDER": "exa",
                "EXA_API_KEY": EXA_KEY,
                "EXA_BASE_URL": fake,
                "WEBREACH_CACHE_TTL": "0",
                "WEBREACH_FETCH_ALLOW": HOST,
                "WEBREACH_SIGNING_KEY": "bench-signing-key-0123456789abcdef",
                "WEBREACH_TURN_TIMEOUT": str(args.turn),
                "WEBREACH_SEARCH_TIMEOUT": str(args.search),
                "WEBREACH_SERVER_HEADER_TIMEOUT": str(args.header),
                "WEBREACH_SERVER_BODY_TIMEOUT": str(args.body),
            }
        )
        log = workdir / "server.log"
        command = [sys.executable, "-m", "webreach", "serve", "--host", HOST, "--port", str(port)]
        server = spawn(command, env, log)
        try:
            await asyncio.to_thread(wait_listening, port, server, log)
            await measure(args, fake, port)
        finally:
            stop([server])


async def measure(args: argparse.Namespace, fake: str, port: int) -> None:
    base = f"http://{HOST}:{port}"
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        size = len(deep_page(args.depth))
        print(f"render stall: /healthz every 10 ms while /v1/fetch reads a {size // 1024} KB page")
        print(f"  {'page':<28} {'fetch p50':>10} {'healthz p50':>12} {'p99':>9} {'max':>9}")
        stalls = {}
        for name in ("flat", "deep"):
            url = f"{fake}/pages/{name}"
            await fetch_pages(session, base, url, 1)  # warm-up

            async def work(url: str = url) -> list[float]:
                return await fetch_pages(session, base, url, args.fetches)

            latencies, times = await healthz_while(session, base, work)
            label = f"{name} ({args.depth:,} deep)" if name == "deep" else f"{name} (same size)"
            p99 = quantile(latencies, 0.99)
            stalls[name] = p99
            print(
                f"  {label:<28} {statistics.median(times) * 1000:>8.0f} ms"
                f" {statistics.median(latencies):>9.1f} ms {p99:>6.1f} ms"
                f" {max(latencies):>6.1f} ms"
            )
        verdict = "ok" if stalls["deep"] <= 250 else "OVER"
        stall = stalls["deep"]
        print(f"  /healthz p99 while the deep page renders: {stall:.0f} ms (≤ 250: {verdict})")
        print()

        print("deadlines: the time a hostile case took, beside a plain request of its kind")
        row("case", "what the client got", "plain", "hostile", "deadline", "overshoot")
        started = time.perf_counter()
        async with session.get(f"{base}/healthz") as response:
            await response.read()
        plain_http = time.perf_counter() - started

        head = b"POST /v1/chat/completions HTTP/1.1\r\n"
        rest = (
            f"Host: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            "Content-Length: 2\r\n\r\n{}"
        ).encode()
        headers = await asyncio.gather(
            *(slow_send(port, head, rest, args.header) for _ in range(args.connections))
        )
        worst, answered = max(headers)
        row(
            f"slow headers (x{args.connections})",
            answered.removeprefix("HTTP/1.1 ")[:24],
            f"{plain_http * 1000:.1f} ms",
            f"{worst:.2f} s",
            f"{args.header:g} s",
            f"{(worst - args.header) * 1000:+.0f} ms",
        )

        payload = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
        ).encode()
        bodies = await asyncio.gather(
            *(slow_send(port, head, payload.encode(), args.body) for _ in range(args.connections))
        )
        worst, answered = max(bodies)
        plain_chat, _ = await timed_chat(session, base, "hello", False, False)
        row(
            f"slow body (x{args.connections})",
            answered.removeprefix("HTTP/1.1 ")[:24],
            f"{plain_chat * 1000:.1f} ms",
            f"{worst:.2f} s",
            f"{args.body:g} s",
            f"{(worst - args.body) * 1000:+.0f} ms",
        )

        for stream, tools, label in (
            (True, False, "turn, relay, streamed"),
            (False, False, "turn, relay, not streamed"),
            (True, True, "turn, web search, streamed"),
            (False, True, "turn, web search, not streamed"),
        ):
            plain, _ = await timed_chat(session, base, "hello", stream, tools)
            hostile, outcome = await timed_chat(session, base, f"{DRIP} on", stream, tools)
            row(
                label,
                outcome[:24],
                f"{plain * 1000:.1f} ms",
                f"{hostile:.2f} s",
                f"{args.turn:g} s",
                f"{(hostile - args.turn) * 1000:+.0f} ms",
            )

        plain, _ = await timed_search(session, base, "iceland")
        hostile, outcome = await timed_search(session, base, f"{DRIP} iceland")
        row(
            "search (/v1/search)",
            outcome[:24],
            f"{plain * 1000:.1f} ms",
            f"{hostile:.2f} s",
            f"{args.search:g} s",
            f"{(hostile - args.search) * 1000:+.0f} ms",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=40_000, help="nesting of the deep page")
    parser.add_argument("--fetches", type=int, default=10, help="reads of each page")
    parser.add_argument("--turn", type=float, default=3.0, help="WEBREACH_TURN_TIMEOUT")
    parser.add_argument("--search", type=float, default=1.0, help="WEBREACH_SEARCH_TIMEOUT")
    parser.add_argument("--header", type=float, default=2.0, help="WEBREACH_SERVER_HEADER_TIMEOUT")
    parser.add_argument("--body", type=float, default=3.0, help="WEBREACH_SERVER_BODY_TIMEOUT")
    parser.add_argument("--connections", type=int, default=5, help="slow connections at once")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="webreach-hostile-") as workdir:
        asyncio.run(run(args, Path(workdir)))


if __name__ == "__main__":
    main()
