"""What does the API server add on top of the model it fronts?

Three processes on this machine: a scripted OpenAI-compatible upstream, webreach's server in
front of it (one uvicorn worker, an instant local search provider, its access log written to a
file as ``webreach serve`` writes it), and this load generator.
The same requests go directly to the upstream and through webreach, in one run:

* added latency, p50 and p99, one request at a time, for every protocol, streamed and not;
* throughput at 32 concurrent clients, and its ratio to the direct upstream;
* for search rounds (tool call, search, answer): the time from the upstream sending its tool
  call to the client receiving the search-start event;
* what Prometheus metrics cost: a second webreach server without them (``WEBREACH_METRICS=false``)
  answers the same requests, interleaved one for one with the first, so drift hits both alike.

    python bench/server_overhead.py [--requests 300] [--load 2000] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

USER = [{"role": "user", "content": "What is the population of Iceland?"}]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_upstream(port: int) -> None:
    """Role: the scripted upstream. A tool call first when the last message is the user's."""
    from scripted_upstream import Call, ScriptedUpstream, Step

    def respond(body: dict[str, Any]) -> Step:
        last = body["messages"][-1]
        tools = [t["function"]["name"] for t in body.get("tools", [])]
        if "web_search" in tools and last.get("role") == "user":
            return Step(calls=[Call("web_search", {"queries": ["iceland population"]})])
        if last.get("role") == "tool":
            return Step(content=["Iceland has about ", "390,000 people【1】."])
        return Step(content=["Hello ", "from ", "the ", "upstream."])

    server = ScriptedUpstream(port=port)
    server.respond = respond
    server.record = False
    with server:
        while True:
            time.sleep(3600)


def run_webreach(port: int, upstream: str) -> None:
    """Role: webreach's app, one uvicorn worker, with an instant local search provider."""
    import uvicorn

    from server_harness import default_search
    from webreach.seam import WebRuntime
    from webreach.server.app import ServerSettings, create_app
    from webreach.server.logs import configure_logging
    from webreach.tools import ToolOptions

    runtime = WebRuntime()
    runtime.register_search_provider(default_search())
    # Snippets only: the search provider's sources are not served (search_substance.py
    # measures reading pages).
    options = ToolOptions(search_context_size="low")
    # The second server runs without /metrics (on by default, as served).
    metrics = os.environ.get("WEBREACH_METRICS", "true").strip().lower() != "false"
    settings = ServerSettings(upstream_base_url=upstream, metrics=metrics)
    app = create_app(settings, runtime, options)
    # The log as `webreach serve` writes it (an access line per request), into a file.
    log = Path(tempfile.gettempdir()) / f"webreach-bench-server-{port}.log"
    configure_logging("info", "text", stream=log.open("w", buffering=1))
    uvicorn.run(app, host="127.0.0.1", port=port, log_config=None, access_log=False)


def request_for(protocol: str, stream: bool, search: bool) -> tuple[str, dict[str, Any]]:
    if protocol == "chat":
        body: dict[str, Any] = {"model": "m", "messages": USER, "stream": stream}
        if search:
            body["tools"] = [{"type": "deepseek_web_search"}]
        return "/v1/chat/completions", body
    if protocol == "responses":
        body = {"model": "m", "input": USER[0]["content"], "stream": stream}
        if search:
            body["tools"] = [{"type": "web_search"}]
        return "/v1/responses", body
    body = {"model": "m", "max_tokens": 256, "messages": USER, "stream": stream}
    if search:
        body["tools"] = [{"type": "web_search_20250305", "name": "web_search"}]
    return "/v1/messages", body


START_MARKERS = (b"call_started", b"response.output_item.added", b'"server_tool_use"')


async def one(session: Any, url: str, body: dict[str, Any]) -> tuple[float, float | None]:
    """Wall time of one request read to the end, and when a search-start event arrived."""
    started = time.perf_counter()
    seen_start: float | None = None
    async with session.post(url, json=body) as response:
        if response.status != 200:
            raise RuntimeError(f"{url}: HTTP {response.status}: {await response.text()}")
        async for chunk in response.content.iter_any():
            started_call = any(m in chunk for m in START_MARKERS) and (
                b"web_search_call" in chunk or b"server_tool" in chunk
            )
            if seen_start is None and started_call:
                seen_start = time.monotonic()
    return time.perf_counter() - started, seen_start


async def latencies(session: Any, url: str, body: dict[str, Any], count: int) -> list[float]:
    for _ in range(20):
        await one(session, url, body)
    return [(await one(session, url, body))[0] for _ in range(count)]


async def paired(
    session: Any, urls: tuple[str, str], body: dict[str, Any], count: int
) -> tuple[list[float], list[float]]:
    """Latencies of two servers for the same request, taken in turn, one for one."""
    for _ in range(20):
        for url in urls:
            await one(session, url, body)
    first: list[float] = []
    second: list[float] = []
    for number in range(count):
        order = urls if number % 2 == 0 else urls[::-1]
        for url in order:
            (first if url == urls[0] else second).append((await one(session, url, body))[0])
    return first, second


async def throughput(session: Any, url: str, body: dict[str, Any], total: int, width: int) -> float:
    remaining = total

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await one(session, url, body)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(width)))
    return total / (time.perf_counter() - started)


async def paired_throughput(
    session: Any, urls: tuple[str, str], body: dict[str, Any], total: int, width: int
) -> tuple[float, float]:
    """Requests a second of two servers, each loaded in four turns taken alternately."""
    seconds = [0.0, 0.0]
    for turn in range(8):
        which = turn % 2 if turn < 4 else 1 - turn % 2
        started = time.perf_counter()
        await throughput(session, urls[which], body, total // 4, width)
        seconds[which] += time.perf_counter() - started
    return (total // 4 * 4) / seconds[0], (total // 4 * 4) / seconds[1]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def measure(args: argparse.Namespace, upstream: str, webreach: str, plain: str) -> None:
    """``webreach`` serves with metrics, ``plain`` without."""
    import aiohttp

    connector = aiohttp.TCPConnector(limit=args.concurrency * 2)
    async with aiohttp.ClientSession(connector=connector) as session:
        direct = {}
        for stream in (False, True):
            path, body = request_for("chat", stream, False)
            url = upstream.removesuffix("/v1") + path
            direct[stream] = (
                await latencies(session, url, body, args.requests),
                await throughput(session, url, body, args.load, args.concurrency),
            )
        print(
            f"direct upstream: p50 {pct(direct[False][0], 0.5):.2f} ms, "
            f"{direct[False][1]:.0f} req/s (not streamed); "
            f"p50 {pct(direct[True][0], 0.5):.2f} ms, {direct[True][1]:.0f} req/s (streamed)"
        )
        print()
        print(
            f"{'protocol':<10} {'mode':<9} {'added p50':>9} {'added p99':>9} "
            f"{'req/s':>7} {'vs direct':>9} {'metrics p50':>11} {'metrics req/s':>13}"
        )
        for protocol in ("chat", "responses", "messages"):
            for stream in (False, True):
                path, body = request_for(protocol, stream, False)
                urls = (webreach + path, plain + path)
                lat, lat_plain = await paired(session, urls, body, args.requests)
                rps, rps_plain = await paired_throughput(
                    session, urls, body, args.load, args.concurrency
                )
                base, base_rps = direct[stream]
                added50 = pct(lat, 0.5) - pct(base, 0.5)
                added99 = pct(lat, 0.99) - pct(base, 0.99)
                cost50 = pct(lat, 0.5) - pct(lat_plain, 0.5)
                print(
                    f"{protocol:<10} {'stream' if stream else 'json':<9} "
                    f"{added50:>7.2f}ms {added99:>7.2f}ms {rps:>7.0f} {rps / base_rps:>8.2f}x "
                    f"{cost50:>+9.2f}ms {rps / rps_plain:>12.2f}x"
                )
        print("(metrics: with Prometheus metrics vs the same server without them)")
        print()
        print(
            f"{'search round':<20} {'p50':>8} {'p99':>8} {'vs 2 direct calls':>18} "
            f"{'start event after tool call':>28}"
        )
        for protocol in ("chat", "responses", "messages"):
            path, body = request_for(protocol, True, True)
            walls, gaps = [], []
            for _ in range(args.requests // 3):
                wall, seen = await one(session, webreach + path, body)
                walls.append(wall)
                async with session.get(upstream.removesuffix("/v1") + "/last_tool_call") as r:
                    sent = float(await r.text())
                if seen is not None:
                    gaps.append(seen - sent)
            two = 2 * pct(direct[True][0], 0.5)
            gap = (
                f"p50 {statistics.median(gaps) * 1000:.2f} ms, max {max(gaps) * 1000:.2f} ms"
                if gaps
                else "n/a"
            )
            p50, p99 = pct(walls, 0.5), pct(walls, 0.99)
            print(
                f"{protocol + ' (streamed)':<20} {p50:>6.2f}ms {p99:>6.2f}ms "
                f"{p50 - two:>+16.2f}ms {gap:>28}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300, help="sequential requests per case")
    parser.add_argument("--load", type=int, default=2000, help="requests per throughput case")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--role", choices=["upstream", "webreach"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--upstream", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "upstream":
        run_upstream(args.port)
        return
    if args.role == "webreach":
        run_webreach(args.port, args.upstream)
        return

    up_port, web_port, plain_port = free_port(), free_port(), free_port()
    upstream = f"http://127.0.0.1:{up_port}/v1"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]),
    }
    children = [
        subprocess.Popen(
            [sys.executable, __file__, "--role", "upstream", "--port", str(up_port)], env=env
        )
    ]
    for port, metrics in ((web_port, "true"), (plain_port, "false")):
        role = [sys.executable, __file__, "--role", "webreach", "--port", str(port)]
        children.append(
            subprocess.Popen(
                [*role, "--upstream", upstream], env={**env, "WEBREACH_METRICS": metrics}
            )
        )
    try:
        for port in (up_port, web_port, plain_port):
            wait_listening(port)
        asyncio.run(
            measure(
                args, upstream, f"http://127.0.0.1:{web_port}", f"http://127.0.0.1:{plain_port}"
            )
        )
    finally:
        for child in children:
            child.terminate()
        for child in children:
            child.wait(timeout=10)


def wait_listening(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


if __name__ == "__main__":
    main()
