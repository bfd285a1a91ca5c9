"""What do N concurrent page fetches cost, through webreach and through each HTTP stack?

A page server in its own process serves a 12 KB HTML page on 40 ports of 127.0.0.1 (40 hosts:
the pages a wave of searches reads are mostly on different hosts); a second set of 40 ports
refuses every connection, and a third accepts and resets each one at once. In each of these
three variants, N = 1, 50 and 200 fetches run concurrently, in waves, through:

* ``webreach``: the real path, ``WebToolkit`` calling ``web_fetch`` on a runtime built from the
  shipped defaults, with ``WEBREACH_FETCH_ALLOW=127.0.0.1`` (so it includes the cache, the
  guard, the pinned dial and rendering the page);
* ``httpx 0.28``, ``httpx2`` and ``aiohttp``: a bare client of each, with the fetcher's pool
  limits (100 connections, 20 idle), each GET read to its end; and ``httpx/aio``, an httpx 0.28
  client on aiohttp's pool through ``httpx-aiohttp`` (what the search providers use).

Every stack runs in a fresh child process per variant, so CPU and peak RSS are its own. The
table gives p50/p99 latency, CPU per fetch, peak RSS, and the ratios to the same stack at N = 1
and to ``httpx 0.28`` (the stack under webreach's fetcher until 2026-12) at the same N. A
linear pool keeps CPU per fetch flat as N grows; latency grows with N however cheap each
fetch is, since the N fetches share one core.

    python bench/fetch_pool.py [--sizes 1,50,200] [--stacks webreach,httpx,httpx2,aiohttp]
                               [--variants served,refused,reset] [--hosts 40]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import socket
import statistics
import struct
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

HOST = "127.0.0.1"
HOSTS = 40
"""Distinct origins (ports): a wave of 200 fetches is about 40 searches reading 5 pages each,
and the pages of different searches are mostly on different hosts."""
STACKS = ("webreach", "httpx", "httpx2", "httpx-aiohttp", "aiohttp")
TODAY = "httpx"
LABELS = {
    "webreach": "webreach",
    "httpx": "httpx 0.28",
    "httpx2": "httpx2",
    "httpx-aiohttp": "httpx/aio",
    "aiohttp": "aiohttp",
}
VARIANTS = ("served", "refused", "reset")
TITLES = {
    "served": "pages served (12 KB of HTML each)",
    "refused": "pages unreachable: every connection refused",
    "reset": "pages unreachable: every connection accepted, then reset",
}
LIMIT_CONNECTIONS = 100
LIMIT_IDLE = 20
TIMEOUT = 30.0
PAGE = (
    "<!doctype html><html><head><title>A page</title></head><body><nav><a href='/'>Home</a>"
    "</nav><article><h1>A page</h1>"
    + "".join(f"<p>Paragraph {n}: " + "words that say something " * 20 + "</p>" for n in range(24))
    + "</article></body></html>"
).encode()


def waves_for(size: int) -> int:
    """About 600 fetches at N = 200 (what the pool was profiled at), fewer where it is cheap."""
    return 40 if size == 1 else max(2, 600 // size)


# --- the page server (its own process) ------------------------------------------------------


def serve(hosts: int) -> None:
    from aiohttp import web

    async def page(_: web.Request) -> web.Response:
        return web.Response(body=PAGE, content_type="text/html", charset="utf-8")

    async def reset(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()

    async def main() -> None:
        app = web.Application()
        app.router.add_get("/{tail:.*}", page)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        for _ in range(hosts):
            await web.TCPSite(runner, HOST, 0, backlog=1024).start()
        served = [address[1] for address in runner.addresses]
        resets = []
        for _ in range(hosts):
            server = await asyncio.start_server(reset, HOST, 0, backlog=1024)
            resets.append(server.sockets[0].getsockname()[1])
        print(json.dumps({"served": served, "reset": resets}), flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


@contextlib.contextmanager
def page_server(hosts: int) -> Iterator[dict[str, list[int]]]:
    child = subprocess.Popen(
        [sys.executable, __file__, "serve", str(hosts)],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    refusing = []
    try:
        assert child.stdout is not None
        ports: dict[str, list[int]] = json.loads(child.stdout.readline())
        for _ in range(hosts):  # bound and never listening: the kernel refuses each connection
            sock = socket.socket()
            sock.bind((HOST, 0))
            refusing.append(sock)
        ports["refused"] = [s.getsockname()[1] for s in refusing]
        yield ports
    finally:
        for sock in refusing:
            sock.close()
        child.kill()
        child.wait()


# --- the stacks (one per child process) -----------------------------------------------------

Fetch = Callable[[str], Awaitable[bool]]
"""GET one URL and read it all; True when a page came back."""


@contextlib.asynccontextmanager
async def webreach_stack() -> Any:
    from webreach.config import build_runtime, load_settings
    from webreach.tools import ToolOptions, WebToolkit

    runtime = build_runtime(load_settings())
    async with runtime:
        toolkit = WebToolkit(runtime, ToolOptions())

        async def fetch(url: str) -> bool:
            text = await toolkit.execute("web_fetch", {"url": url})
            return "Paragraph 23" in text

        yield fetch


@contextlib.asynccontextmanager
async def _httpx_shaped(module: Any, transport: Any = None) -> Any:
    """A client of httpx's interface (httpx itself or httpx2), on its own pool or ``transport``."""
    options: dict[str, Any] = {"timeout": TIMEOUT, "trust_env": False}
    if transport is None:
        options["limits"] = module.Limits(
            max_connections=LIMIT_CONNECTIONS, max_keepalive_connections=LIMIT_IDLE
        )
    async with module.AsyncClient(transport=transport, **options) as client:

        async def fetch(url: str) -> bool:
            try:
                response = await client.get(url)
            except module.HTTPError:
                return False
            return len(response.content) == len(PAGE)

        yield fetch


@contextlib.asynccontextmanager
async def httpx_stack() -> Any:
    import httpx

    async with _httpx_shaped(httpx) as fetch:
        yield fetch


@contextlib.asynccontextmanager
async def httpx2_stack() -> Any:
    import httpx2

    async with _httpx_shaped(httpx2) as fetch:
        yield fetch


@contextlib.asynccontextmanager
async def httpx_aiohttp_stack() -> Any:
    import httpx
    from httpx_aiohttp import AiohttpTransport

    limits = httpx.Limits(max_connections=LIMIT_CONNECTIONS, max_keepalive_connections=LIMIT_IDLE)
    transport = AiohttpTransport(limits=limits, trust_env=False)
    async with _httpx_shaped(httpx, transport) as fetch:
        yield fetch


@contextlib.asynccontextmanager
async def aiohttp_stack() -> Any:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=LIMIT_CONNECTIONS)
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def fetch(url: str) -> bool:
            try:
                async with session.get(url) as response:
                    return len(await response.read()) == len(PAGE)
            except (aiohttp.ClientError, OSError):
                return False

        yield fetch


OPENERS = {
    "webreach": webreach_stack,
    "httpx": httpx_stack,
    "httpx2": httpx2_stack,
    "httpx-aiohttp": httpx_aiohttp_stack,
    "aiohttp": aiohttp_stack,
}


@dataclass
class Cell:
    stack: str
    size: int
    fetches: int
    ok: int
    p50: float
    p99: float
    cpu: float
    rss_mb: float


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def run_stack(stack: str, ports: list[int], sizes: list[int]) -> None:
    counter = iter(range(10**9))

    def next_url() -> str:
        n = next(counter)  # a new path each time: the cache never answers for the network
        return f"http://{HOST}:{ports[n % len(ports)]}/page/{n}"

    async with OPENERS[stack]() as fetch:

        async def timed() -> tuple[float, bool]:
            start = time.perf_counter()
            ok = await fetch(next_url())
            return time.perf_counter() - start, ok

        await asyncio.gather(*(timed() for _ in range(len(ports))))  # warm: imports, first dials
        for size in sizes:
            latencies: list[float] = []
            ok = 0
            cpu = time.process_time()
            for _ in range(waves_for(size)):
                for seconds, good in await asyncio.gather(*(timed() for _ in range(size))):
                    latencies.append(seconds)
                    ok += good
            cpu = time.process_time() - cpu
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            cell = Cell(
                stack,
                size,
                len(latencies),
                ok,
                statistics.median(latencies),
                percentile(latencies, 0.99),
                cpu / len(latencies),
                rss,
            )
            print(json.dumps(cell.__dict__), flush=True)


def child_main(stack: str, ports: str, sizes: str) -> None:
    asyncio.run(
        run_stack(stack, [int(p) for p in ports.split(",")], [int(s) for s in sizes.split(",")])
    )


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBREACH_")}
    env.update(WEBREACH_CONFIG="", WEBREACH_FETCH_ALLOW=HOST)
    return env


def measure(stack: str, ports: list[int], sizes: list[int]) -> list[Cell]:
    command = [
        sys.executable,
        __file__,
        "run",
        stack,
        ",".join(map(str, ports)),
        ",".join(map(str, sizes)),
    ]
    done = subprocess.run(command, env=child_env(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{stack} failed:\n{done.stderr}")
    return [Cell(**json.loads(line)) for line in done.stdout.splitlines() if line.startswith("{")]


def ratio(value: float, base: float | None) -> str:
    return f"{value / base:.1f}x" if base else "-"


def table(variant: str, hosts: int, cells: list[Cell]) -> list[str]:
    by = {(c.stack, c.size): c for c in cells}
    lines = [
        f"\n{TITLES[variant]}, {hosts} hosts on {HOST}",
        f"{'stack':<11}{'N':>5}{'fetches':>9}{'ok':>6}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'CPU ms/f':>10}{'RSS MB':>8}{'p50/N=1':>9}{'CPU/N=1':>9}"
        f"{'p50/today':>11}{'CPU/today':>11}",
    ]
    for cell in cells:
        one = by.get((cell.stack, 1))
        today = by.get((TODAY, cell.size))
        lines.append(
            f"{LABELS[cell.stack]:<11}{cell.size:>5}{cell.fetches:>9}{cell.ok:>6}"
            f"{cell.p50 * 1000:>9.1f}{cell.p99 * 1000:>9.1f}{cell.cpu * 1000:>10.2f}"
            f"{cell.rss_mb:>8.0f}"
            f"{ratio(cell.p50, one.p50 if one else None):>9}"
            f"{ratio(cell.cpu, one.cpu if one else None):>9}"
            f"{ratio(cell.p50, today.p50 if today else None):>11}"
            f"{ratio(cell.cpu, today.cpu if today else None):>11}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1,50,200")
    parser.add_argument("--stacks", default=",".join(STACKS))
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--hosts", type=int, default=HOSTS)
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    stacks = args.stacks.split(",")
    variants = args.variants.split(",")
    unknown = sorted(set(stacks) - set(STACKS)) + sorted(set(variants) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown stack or variant: {', '.join(unknown)}")
    started = time.perf_counter()
    print(f"fetch_pool: N = {', '.join(map(str, sizes))}, one child process per stack and variant")
    with page_server(args.hosts) as ports:
        for variant in variants:
            cells = [cell for stack in stacks for cell in measure(stack, ports[variant], sizes)]
            print("\n".join(table(variant, args.hosts, cells)), flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(int(sys.argv[2]))
    elif sys.argv[1:2] == ["run"]:
        child_main(*sys.argv[2:5])
    else:
        main()
