"""How much does a multi-query ``web_search`` cost compared with one query?

A local Exa-shaped replay server answers every search after a fixed latency (400 ms by
default). The real ``webreach search`` command runs as a whole process with 1, 2 and 4
queries; the same queries also run one after another through the same tool in one process,
the way tools that loop over queries do. Everything is measured side by side in one run.

    python bench/search_fanout.py [--latency 0.4] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from replay_server import ReplayServer, Reply  # noqa: E402

QUERIES = ["python 3.13", "asyncio taskgroup", "httpx transports", "pydantic settings"]


def exa_reply(latency: float) -> Reply:
    results = [
        {"url": f"https://example.com/{rank}", "title": f"Result {rank}", "highlights": ["…"]}
        for rank in range(8)
    ]
    return Reply(json={"results": results}, delay=latency)


def environment(server: ReplayServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBREACH_", "EXA_"))}
    env.update(
        WEBREACH_SEARCH_PROVIDER="exa",
        EXA_API_KEY="bench-key",
        EXA_BASE_URL=server.url,
        WEBREACH_CONFIG="",
        WEBREACH_CACHE_TTL="0",  # every run must reach the provider
        # The replayed sources' pages are not served: this measures the searches themselves
        # (bench/search_substance.py measures reading pages).
        WEBREACH_SEARCH_CONTEXT_SIZE="low",
    )
    return env


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def sequential_child(queries: list[str]) -> None:
    """Run each query as its own tool call, one after another (what looping tools do)."""
    from webreach.config import build_runtime, load_settings
    from webreach.tools import web_search_tool

    async def main() -> None:
        settings = load_settings()
        async with build_runtime(settings) as runtime:
            tool = web_search_tool(runtime, settings.tool_options())
            for query in queries:
                await tool.execute({"queries": [query]})

    asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.4, help="provider latency, seconds")
    parser.add_argument("--repeat", type=int, default=5, help="runs per case (median reported)")
    parser.add_argument("--sequential-child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sequential_child:
        sequential_child(args.sequential_child)
        return

    with ReplayServer() as server:
        server.route("POST", "/search", exa_reply(args.latency))
        env = environment(server)
        cli = [sys.executable, "-m", "webreach", "search"]
        rows = []
        for count in (1, 2, 4):
            queries = QUERIES[:count]
            fanout = statistics.median(timed([*cli, *queries], env) for _ in range(args.repeat))
            loop = [sys.executable, __file__, "--sequential-child", *queries]
            sequential = statistics.median(timed(loop, env) for _ in range(args.repeat))
            rows.append((count, fanout, sequential))

    one = rows[0][1]
    print(
        f"provider latency {args.latency * 1000:.0f} ms, median of {args.repeat} whole-process runs"
    )
    print(
        f"{'queries':>7}  {'webreach':>9}  {'vs 1 query':>10}  {'one-by-one':>10}  {'speed-up':>8}"
    )
    for count, fanout, sequential in rows:
        print(
            f"{count:>7}  {fanout * 1000:>7.0f}ms  {fanout / one:>9.2f}x"
            f"  {sequential * 1000:>8.0f}ms  {sequential / fanout:>7.2f}x"
        )
    four = rows[-1][1] / one
    verdict = "meets" if four <= 1.25 else "MISSES"
    print(f"4 queries cost {four:.2f}x one query ({verdict} the 1.25x target)")


if __name__ == "__main__":
    main()
