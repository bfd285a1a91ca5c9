"""Does rendering pages in a process pool pay, and above which page size?

Renders a wave of real pages concurrently, side by side in one run: today's path (each page in
a thread, ``asyncio.to_thread``, all under one GIL) against a ``ProcessPoolExecutor`` with the
``forkserver`` context, one worker per core the run may use. Each core count runs in a child
process pinned with ``os.sched_setaffinity`` (its pool's workers inherit the pinning), so one
machine shows 1 core, 2 cores and as many as it has.

Per size band and path: throughput (pages/s), p50 and p99 of each page's latency (submitted with
the wave until its Markdown is back). Per core count: the pool's start-up (to a first render,
the renderer imported), the IPC a page costs (round trip less the worker's own render time), and
one small page alone, rendered inline, in a thread and in the pool. ``cores`` is the renders' CPU
over the wave's wall time (how many cores the path used), ``lag`` the event loop's worst delay
during a wave (what a stream on the same loop waits), ``own ms`` the CPU the owning process spent
per page: with the pool, its copying, which bounds what more cores can give.

    python bench/render_pool.py [--cores 1,2] [--wave 16] [--repeat 3]

Pages: the Readability test pages (``../shared/corpus/pages/*/source.html``), read at run time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "pages"
BASE_URL = "http://fakehost/test/page.html"
# Size bands of source HTML, in characters.
BANDS: tuple[tuple[str, int, int], ...] = (
    ("<20K", 0, 20_000),
    ("20-60K", 20_000, 60_000),
    ("60-150K", 60_000, 150_000),
    ("150-400K", 150_000, 400_000),
    (">400K", 400_000, 1 << 40),
)


def load_pages() -> list[str]:
    return [
        path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(CORPUS.glob("*/source.html"))
    ]


def render_timed(html: str) -> tuple[str, float, float]:
    """The page's Markdown, the seconds the worker spent on it and the CPU seconds it used."""
    from webreach.tools.render import render_html

    started, cpu = time.perf_counter(), time.thread_time()
    markdown = render_html(html, base_url=BASE_URL)
    return markdown, time.perf_counter() - started, time.thread_time() - cpu


def spin(seconds: float) -> float:
    """Busy for ``seconds``; the share of them this process had a core."""
    started, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - started < seconds:
        pass
    return (time.process_time() - cpu) / (time.perf_counter() - started)


def warm() -> None:
    """Imports the renderer in a worker, as its first page would."""
    import webreach.tools.render  # noqa: F401


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


class Wave:
    """One wave's wall time, each page's latency, the renders' CPU seconds and the event
    loop's worst lag meanwhile (what a concurrent stream on the same loop waits)."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.latencies: list[float] = []
        self.cpu = 0.0
        self.lag = 0.0
        self.parent_cpu = 0.0


async def wave(pages: Sequence[str], submit: Callable[[str], Any]) -> Wave:
    """All of ``pages`` at once."""
    measured = Wave()
    done = asyncio.Event()

    async def one(html: str) -> float:
        started = time.perf_counter()
        _, _, cpu = await submit(html)
        measured.cpu += cpu
        return time.perf_counter() - started

    async def ticker() -> None:
        while not done.is_set():
            before = time.perf_counter()
            await asyncio.sleep(0.001)
            measured.lag = max(measured.lag, time.perf_counter() - before - 0.001)

    ticking = asyncio.ensure_future(ticker())
    started, parent = time.perf_counter(), time.process_time()
    measured.latencies = list(await asyncio.gather(*(one(html) for html in pages)))
    measured.wall = time.perf_counter() - started
    measured.parent_cpu = time.process_time() - parent
    done.set()
    await ticking
    return measured


def in_pool(pool: Executor) -> Callable[[str], Any]:
    loop = asyncio.get_running_loop()
    return lambda html: loop.run_in_executor(pool, render_timed, html)


def in_thread(html: str) -> Any:
    return asyncio.to_thread(render_timed, html)


def band_pages(pages: Sequence[str], low: int, high: int, count: int) -> list[str]:
    chosen = [html for html in pages if low <= len(html) < high]
    return [chosen[i % len(chosen)] for i in range(count)] if chosen else []


async def child(wave_size: int, repeat: int) -> dict[str, Any]:
    cores = len(os.sched_getaffinity(0))
    pages = load_pages()
    warm()
    context = multiprocessing.get_context("forkserver")
    report: dict[str, Any] = {"cores": cores, "bands": {}}
    with ProcessPoolExecutor(max_workers=cores, mp_context=context) as spinners:
        shares = list(spinners.map(spin, [0.5] * cores))
    report["free_cores"] = sum(shares)

    started = time.perf_counter()
    pool = ProcessPoolExecutor(max_workers=cores, mp_context=context, initializer=warm)
    small = min(pages, key=lambda html: abs(len(html) - 8_000))
    await asyncio.gather(*(in_pool(pool)(small) for _ in range(cores)))
    report["pool_start_s"] = time.perf_counter() - started
    try:
        ipc: dict[str, float] = {}
        for name, low, high in BANDS:
            sample = band_pages(pages, low, high, 4)
            costs = []
            for html in sample:
                t0 = time.perf_counter()
                _, worker, _ = await in_pool(pool)(html)
                costs.append(time.perf_counter() - t0 - worker)
            if costs:
                ipc[name] = statistics.median(costs)
        report["ipc_s"] = ipc

        alone: dict[str, list[float]] = {"inline": [], "thread": [], "pool": []}
        for _ in range(15):
            t0 = time.perf_counter()
            render_timed(small)
            alone["inline"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            await in_thread(small)
            alone["thread"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            await in_pool(pool)(small)
            alone["pool"].append(time.perf_counter() - t0)
        report["small_alone"] = {
            "chars": len(small),
            **{path: statistics.median(times) for path, times in alone.items()},
        }

        for name, low, high in BANDS:
            sample = band_pages(pages, low, high, wave_size)
            if not sample:
                continue
            result: dict[str, Any] = {"mean_chars": statistics.mean(map(len, sample))}
            for path, submit in (("thread", in_thread), ("pool", in_pool(pool))):
                waves = [await wave(sample, submit) for _ in range(repeat)]
                latencies = [latency for each in waves for latency in each.latencies]
                best = min(waves, key=lambda each: each.wall)
                result[path] = {
                    "pages_s": len(sample) / best.wall,
                    "p50": percentile(latencies, 0.5),
                    "p99": percentile(latencies, 0.99),
                    "cores_used": best.cpu / best.wall,
                    "lag": statistics.median(each.lag for each in waves),
                    "parent_ms": best.parent_cpu / len(sample),
                }
            report["bands"][name] = result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return report


def run_pinned(cpus: Sequence[int], wave_size: int, repeat: int) -> dict[str, Any]:
    command = [
        sys.executable, __file__, "--child", ",".join(map(str, cpus)),
        "--wave", str(wave_size), "--repeat", str(repeat),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout))


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f}"


def print_report(reports: Sequence[dict[str, Any]]) -> None:
    for report in reports:
        small = report["small_alone"]
        print(
            f"\n== {report['cores']} core(s), {report['free_cores']:.2f} of them free: "
            f"pool start-up {ms(report['pool_start_s'])} ms; one {small['chars']:,}-char page "
            f"alone: inline {ms(small['inline'])} ms, thread {ms(small['thread'])} ms, "
            f"pool {ms(small['pool'])} ms"
        )
        paths = "pages/s   p50 ms   p99 ms  cores  lag ms  own ms"
        print(f"{'band':>9} {'chars':>9} {'IPC ms':>7} | thread {paths} | pool {paths} | gain")
        for name, band in report["bands"].items():
            cells = [
                f"{p['pages_s']:>7.1f} {ms(p['p50']):>8} {ms(p['p99']):>8} "
                f"{p['cores_used']:>6.2f} {ms(p['lag']):>7} {ms(p['parent_ms']):>7}"
                for p in (band["thread"], band["pool"])
            ]
            gain = band["pool"]["pages_s"] / band["thread"]["pages_s"]
            print(
                f"{name:>9} {band['mean_chars']:>9,.0f} {ms(report['ipc_s'].get(name, 0)):>7} | "
                f"       {cells[0]} |      {cells[1]} | {gain:>4.2f}x"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    available = sorted(os.sched_getaffinity(0))
    parser.add_argument(
        "--cores", default=",".join(sorted({"1", str(len(available))}, key=int)),
        help="core counts to pin each run to, comma-separated (default: 1 and all)",
    )  # fmt: skip
    parser.add_argument("--wave", type=int, default=16, help="pages rendered at once per band")
    parser.add_argument("--repeat", type=int, default=3, help="waves per band and path")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        os.sched_setaffinity(0, [int(cpu) for cpu in args.child.split(",")])
        print(json.dumps(asyncio.run(child(args.wave, args.repeat))))
        return 0
    if not CORPUS.is_dir():
        print(f"no pages at {CORPUS}", file=sys.stderr)
        return 1
    counts = [int(count) for count in args.cores.split(",")]
    if max(counts) > len(available):
        print(f"only {len(available)} cores to pin to", file=sys.stderr)
        return 1
    reports = [run_pinned(available[:count], args.wave, args.repeat) for count in counts]
    print_report(reports)
    return 0


if __name__ == "__main__":
    sys.exit(main())
