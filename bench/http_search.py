"""How much does ``POST /v1/search`` add to the search provider's own time?

Three processes on this machine: an Exa-shaped replay server (the provider), the real
``webreach serve`` in front of it (one uvicorn worker, the real Exa provider, cache off so every
request reaches the provider), and this client. The same search goes to the provider directly
and through webreach, alternating request by request in one run, so both see the same machine:

* added latency, p50 and p90, one request at a time, for ``/v1/search`` and Open WebUI's
  ``/openwebui/search``;
* the server's own ``Server-Timing: webreach;dur`` (its time apart from the provider's).

    python bench/http_search.py [--requests 500]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

KEY = "bench-key"
TARGET_MS = 2.0
OWN: list[float] = []
"""The server's own milliseconds per measured request, from its ``Server-Timing`` header."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_provider() -> None:
    """Role: the provider. Exa's documented answer shape, eight results, no delay; prints its
    URL, then serves until terminated.

    Its connections get ``TCP_NODELAY``, as production HTTP servers' do: ``http.server`` writes
    the status line and headers, then the body, and without it the body waits for the client's
    delayed ACK, a 40 ms stall that httpx-based clients (webreach's among them) hit and that
    no real provider has.
    """
    import replay_server
    from replay_server import ReplayServer, Reply

    accept = replay_server._QuietServer.get_request

    def get_request(self: Any) -> Any:
        connection, address = accept(self)
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address

    replay_server._QuietServer.get_request = get_request  # type: ignore[method-assign]

    results = [
        {
            "url": f"https://example.com/{rank}",
            "title": f"Result {rank}",
            "publishedDate": "2025-01-02T00:00:00.000Z",
            "highlights": [f"A highlight of result {rank}, a sentence or two long."],
        }
        for rank in range(8)
    ]
    with ReplayServer() as server:
        server.route("POST", "/search", Reply(json={"results": results}))
        print(server.url, flush=True)
        while True:
            time.sleep(3600)


def webreach_environment(provider: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBREACH_", "EXA_"))}
    env.update(
        WEBREACH_CONFIG="",
        WEBREACH_SEARCH_PROVIDER="exa",
        EXA_API_KEY="exa-bench-key",
        EXA_BASE_URL=provider,
        WEBREACH_CACHE_TTL="0",  # every request must reach the provider
        WEBREACH_UPSTREAM_BASE_URL="http://127.0.0.1:9/v1",  # not called by /v1/search
        WEBREACH_SERVER_API_KEYS=KEY,
        WEBREACH_SIGNING_KEY="bench-signing-key-0123456789abcdef",
    )
    return env


async def one(session: Any, url: str, body: dict[str, Any], headers: dict[str, str]) -> float:
    """Wall time of one request read to the end; the server's own time is kept aside."""
    started = time.perf_counter()
    async with session.post(url, json=body, headers=headers) as response:
        payload = await response.read()
        if response.status != 200:
            raise RuntimeError(f"{url}: HTTP {response.status}: {payload[:300]!r}")
        timing = response.headers.get("server-timing", "")
    wall = time.perf_counter() - started
    for part in timing.split(","):
        name, _, value = part.strip().partition(";dur=")
        if name == "webreach":
            OWN.append(float(value))
    return wall


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def measure(requests: int, provider: str, webreach: str) -> dict[str, list[float]]:
    import aiohttp

    cases: dict[str, tuple[str, dict[str, str], Any]] = {
        "provider directly": (
            provider + "/search",
            {"x-api-key": "exa-bench-key"},
            lambda n: {"query": f"query {n}", "type": "auto", "numResults": 8},
        ),
        "/v1/search": (
            webreach + "/v1/search",
            {"Authorization": f"Bearer {KEY}"},
            lambda n: {"query": f"query {n}"},
        ),
        "/openwebui/search": (
            webreach + "/openwebui/search",
            {"Authorization": f"Bearer {KEY}"},
            lambda n: {"query": f"query {n}", "count": 8},
        ),
    }
    walls: dict[str, list[float]] = {name: [] for name in cases}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=4)) as session:
        for n in range(-50, requests):  # the first 50 rounds warm everything up
            if n == 0:
                OWN.clear()
            for name, (url, headers, body) in cases.items():
                wall = await one(session, url, body(n), headers)
                if n >= 0:
                    walls[name].append(wall)
    return walls


def report(walls: dict[str, list[float]], requests: int) -> None:
    direct = walls["provider directly"]
    print(f"{requests} sequential requests per case, alternating; provider = Exa-shaped replay")
    print(f"{'path':<20} {'p50':>8} {'p90':>8} {'added p50':>10} {'added p90':>10}")
    for name, values in walls.items():
        added = "" if values is direct else f"{pct(values, 0.5) - pct(direct, 0.5):>+8.2f}ms"
        added90 = "" if values is direct else f"{pct(values, 0.9) - pct(direct, 0.9):>+8.2f}ms"
        print(
            f"{name:<20} {pct(values, 0.5):>6.2f}ms {pct(values, 0.9):>6.2f}ms "
            f"{added:>10} {added90:>10}"
        )
    own = statistics.median(OWN)
    print(f"server's own time (Server-Timing webreach;dur), median: {own:.2f} ms")
    added = pct(walls["/v1/search"], 0.5) - pct(direct, 0.5)
    verdict = "meets" if added <= TARGET_MS else "MISSES"
    print(f"/v1/search adds {added:.2f} ms p50 per request ({verdict} the {TARGET_MS:g} ms target)")


def wait_listening(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500, help="sequential requests per case")
    parser.add_argument("--provider", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.provider:
        run_provider()
        return

    role = subprocess.Popen(
        [sys.executable, __file__, "--provider"], stdout=subprocess.PIPE, text=True
    )
    assert role.stdout is not None
    provider = role.stdout.readline().strip()
    web_port = free_port()
    webreach = f"http://127.0.0.1:{web_port}"
    children = [
        role,
        subprocess.Popen(
            [sys.executable, "-m", "webreach", "serve", "--port", str(web_port)],
            env=webreach_environment(provider),
            stderr=subprocess.DEVNULL,
        ),
    ]
    try:
        wait_listening(web_port)
        report(asyncio.run(measure(args.requests, provider, webreach)), args.requests)
    finally:
        for child in children:
            child.terminate()
        for child in children:
            child.wait(timeout=10)


if __name__ == "__main__":
    main()
