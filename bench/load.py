"""Does the API server hold under concurrency, and let go of work its clients abandon?

Four processes, all on 127.0.0.1, started by ``load_rig.py``: a scripted OpenAI-compatible
upstream that takes ``--latency`` ms before answering each model step (first a ``web_search``
call for the user's question, then a short answer citing 【1】); an Exa-shaped search provider
that answers after ``--latency`` ms; the real server, ``python -m webreach serve`` (one uvicorn
worker, cache off so every search reaches the provider); and this load generator (aiohttp,
``load_client.py``). Both fakes (``load_fakes.py``) are asyncio servers, so hundreds of their
requests overlap and they are never the bottleneck.

* Load mode (default): one streamed web-search request at a time (the median of a few per
  protocol), then ``--concurrency`` of them at once, protocols round-robin. Every client reads
  its whole SSE stream. Reported: errors (HTTP status, connection, in-stream errors, streams that
  did not end properly), p50/p99 of first byte, first event and total time, p50 total against one
  request alone, ``Server-Timing`` p50, and the server's peak RSS and open FDs before, right after
  and 10 s after the load.
* Abandon mode (``--abandon [N]``): N streamed searches whose question starts with ``abandon``;
  the provider holds those searches until webreach closes the connection (or 60 s pass). Each
  client disconnects as soon as its stream shows the search started. 2 s later: how many provider
  requests are still held with webreach connected, then whether one normal search still works
  (ends properly, its search answered, no slower than 3x the same request before). Then the
  two measurements below.
* Leave early (``--leave-early [N]``, ``load_leave.py``): N clients, protocols round-robin,
  streamed and not, plus the plain Chat relay, whose question makes the upstream send nothing;
  each hangs up once the upstream holds its request (at least 300 ms after sending). How many
  upstream requests webreach closed, how soon after the hang-up, and how many are still held 2 s
  later.
* Big body (``--big-body``, ``load_bigbody.py``): one 64 MiB Chat body over the default 32 MiB
  limit, with Content-Length and then chunked: is it a 413 in the Chat error shape, and how much
  do the server's RSS and peak RSS grow.

Targets are printed beside the figures with PASS/FAIL; the exit status is 0 either way.

    python bench/load.py [--concurrency 200] [--latency 200] [--protocols chat,responses,messages]
    python bench/load.py --abandon [60]
    python bench/load.py --leave-early [20]
    python bench/load.py --big-body
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the load_*.py modules beside this

from load_abandon import abandon_mode
from load_bigbody import big_body, report_big_body
from load_client import (
    PROTOCOLS,
    Outcome,
    fake_stats,
    new_session,
    one_request,
)
from load_leave import leave_early, report_leave_early
from load_report import (
    MAX_RATIO,
    error_summary,
    fake_line,
    idle_cpu,
    median,
    pct,
    spread,
    target,
)
from load_rig import PROC_HEADER, ProcSample, Rig, server_log_summary, start_rig, stop

# Targets of issue 8.
MAX_RSS_MIB = 200.0
FD_SLACK = 25
SETTLE_SECONDS = 10.0
LEAVE_EARLY = 20


# --- the two modes ------------------------------------------------------------------------------


async def alone(rig: Rig) -> list[Outcome]:
    """Each protocol a few times, one request at a time, after one warm-up each."""
    outcomes = []
    async with new_session(rig.args.timeout) as session:
        for protocol in rig.protocols:
            await one_request(session, rig.webreach, protocol)
        for _ in range(rig.args.repeat):
            for protocol in rig.protocols:
                outcomes.append(await one_request(session, rig.webreach, protocol))
    return outcomes


def report_alone(rig: Rig, outcomes: list[Outcome]) -> float:
    latency = rig.args.latency
    print(f"one request alone (median of {rig.args.repeat} per protocol, after a warm-up):")
    for protocol in rig.protocols:
        mine = [o for o in outcomes if o.protocol == protocol and o.total is not None]
        firsts = [o.first_byte for o in mine if o.first_byte is not None]
        print(
            f"  {protocol:<10} first byte {median(firsts):>6.0f} ms   "
            f"total {median([o.total for o in mine if o.total]):>6.0f} ms"
        )
    single = median([o.total for o in outcomes if o.total is not None])
    print(
        f"  {'all':<10} total {single:.0f} ms "
        f"(floor: 2 model steps + 1 search = {3 * latency:.0f} ms, plus the server's overhead)"
    )
    for line in error_summary(outcomes)[1:]:
        print(line)
    return single


async def load_mode(rig: Rig) -> None:
    args = rig.args
    single = report_alone(rig, await alone(rig))
    await asyncio.sleep(0.5)
    baseline = ProcSample.of(rig.server_pid)
    async with new_session(args.timeout) as session:
        up_before = await fake_stats(session, rig.upstream, reset=True)
        prov_before = await fake_stats(session, rig.provider, reset=True)
        protocols = [rig.protocols[i % len(rig.protocols)] for i in range(args.concurrency)]
        began = time.perf_counter()
        outcomes = await asyncio.gather(*(one_request(session, rig.webreach, p) for p in protocols))
        wall = time.perf_counter() - began
        up_after = await fake_stats(session, rig.upstream)
        prov_after = await fake_stats(session, rig.provider)
    after = ProcSample.of(rig.server_pid)
    await asyncio.sleep(SETTLE_SECONDS)
    settled = ProcSample.of(rig.server_pid)

    print()
    print(f"{args.concurrency} concurrent streams ({', '.join(rig.protocols)} round-robin):")
    errors = error_summary(outcomes)
    for line in errors:
        print(line)
    ok = [o for o in outcomes if o.kind is None]
    print(spread("first byte", [o.first_byte for o in ok if o.first_byte is not None]))
    print(spread("first event", [o.first_event for o in ok if o.first_event is not None]))
    totals = [o.total for o in ok if o.total is not None]
    print(spread("total", totals) + f"   (wall {wall:.1f} s for all)")
    cpu = after.cpu_seconds - baseline.cpu_seconds
    print(f"  server CPU: {cpu:.2f} s in {wall:.2f} s ({cpu / wall:.0%} of one core)")
    ratio = pct(totals, 0.5) / single if totals else float("inf")
    print(f"  p50 total / one request alone: {ratio:.2f}x")
    timing = [(k, [o.timing[k] for o in ok if k in o.timing]) for k in TIMING_KEYS]
    print(
        "  Server-Timing p50 (sent with the headers, so the first model step only): "
        + ", ".join(f"{k} {statistics.median(v):.1f} ms" for k, v in timing if v)
    )
    print(fake_line("upstream", "model steps", up_before, up_after))
    print(fake_line("provider", "searches", prov_before, prov_after))
    print(f"  streams that showed their search: {sum(o.searched for o in outcomes)}")
    print(PROC_HEADER)
    for label, sample in (("before", baseline), ("right after", after), ("10 s later", settled)):
        print(sample.row(label))
    print()
    print("targets:")
    failed = len(outcomes) - len(ok)
    bad_searches = sum(o.search_failed for o in outcomes)
    target(
        failed + bad_searches == 0,
        f"{args.concurrency} concurrent streams: 0 errors",
        f"{failed} errors, {bad_searches} failed searches",
    )
    target(ratio <= MAX_RATIO, f"p50 total ≤ {MAX_RATIO:g}x one request", f"{ratio:.2f}x")
    peak = after.peak_rss_kib / 1024
    target(peak <= MAX_RSS_MIB, f"peak RSS ≤ {MAX_RSS_MIB:g} MiB", f"{peak:.1f} MiB")
    drift = settled.fds - baseline.fds
    target(
        abs(drift) <= FD_SLACK,
        f"open FDs within {FD_SLACK} of baseline 10 s later",
        f"{baseline.fds} -> {settled.fds} ({drift:+d})",
    )
    idle_cpu(after, settled, SETTLE_SECONDS)


TIMING_KEYS = ("webreach", "upstream", "web")


def protocol_list(text: str) -> list[str]:
    chosen = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in chosen if p not in PROTOCOLS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(PROTOCOLS)}")
    return chosen


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=200, help="concurrent streams")
    parser.add_argument(
        "--abandon",
        type=int,
        nargs="?",
        const=60,
        help="abandon mode with this many clients (default 60) instead of the load; "
        "then --leave-early and --big-body",
    )
    parser.add_argument(
        "--leave-early",
        type=int,
        nargs="?",
        const=LEAVE_EARLY,
        help=f"clients that hang up before the upstream answers (default {LEAVE_EARLY})",
    )
    parser.add_argument("--big-body", action="store_true", help="a 64 MiB body over the limit")
    parser.add_argument("--latency", type=float, default=200.0, help="upstream/provider ms")
    parser.add_argument(
        "--protocols", type=protocol_list, default=list(PROTOCOLS), help="comma list"
    )
    parser.add_argument("--repeat", type=int, default=3, help="lone requests per protocol")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    return parser.parse_args()


def interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


async def measure(rig: Rig) -> None:
    """The load, or the abandon mode followed by the two others, or those chosen."""
    args = rig.args
    if not (args.abandon or args.leave_early or args.big_body):
        await load_mode(rig)
        return
    sections: list[Any] = []
    if args.abandon:
        sections.append(abandon_mode(rig))
    if args.abandon or args.leave_early:
        sections.append(leave_early_mode(rig, args.leave_early or LEAVE_EARLY))
    if args.abandon or args.big_body:
        sections.append(big_body_mode(rig))
    for number, section in enumerate(sections):
        if number:
            print()
        await section


async def leave_early_mode(rig: Rig, count: int) -> None:
    report_leave_early(await leave_early(rig, count))


async def big_body_mode(rig: Rig) -> None:
    report_big_body(*await big_body(rig))


def main() -> None:
    args = parse_args()
    signal.signal(signal.SIGTERM, interrupt)
    workdir = Path(tempfile.mkdtemp(prefix="webreach-load-"))  # no webreach.toml is read here
    children: list[subprocess.Popen[bytes]] = []
    try:
        rig = start_rig(args, workdir, children)
        print(
            f"webreach serve (pid {rig.server_pid}, one uvicorn worker) at {rig.webreach}; "
            f"upstream {args.latency:.0f} ms per model step, Exa provider {args.latency:.0f} ms "
            "per search; cache off; everything on 127.0.0.1"
        )
        print()
        asyncio.run(measure(rig))
        summary = server_log_summary(rig.log)
        if summary:
            print()
            print("server log (distinct errors):")
            for line in summary:
                print(line)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
    except (RuntimeError, OSError) as error:  # a child that died: say so, still exit 0
        print(f"\nbenchmark aborted: {type(error).__name__}: {error}", file=sys.stderr)
        server_log = workdir / "server.log"
        if server_log.exists():
            print(server_log.read_text(errors="replace")[-3000:], file=sys.stderr)
    finally:
        stop(children)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
