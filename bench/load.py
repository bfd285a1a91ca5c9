"""Does the API server hold under concurrency, and let go of work its clients abandon?

Four or five processes, all on 127.0.0.1, started by ``load_rig.py``: a scripted OpenAI-compatible
upstream that takes ``--latency`` ms before answering each model step (first a ``web_search``
call for the user's question, then a short answer citing 【1】); an Exa-shaped search provider
that answers after ``--latency`` ms; the real server, ``python -m webreach serve`` (one uvicorn
worker, cache off so every search reaches the provider); and this load generator (aiohttp,
``load_client.py``). Both fakes (``load_fakes.py``) are asyncio servers, so hundreds of their
requests overlap and they are never the bottleneck.

* Load mode (default): for each variant of the server (``--variants``, each with processes of
  its own, ``load_waves.py``): ``low``; the server's default ``medium``, whose searches read five
  pages for passages, with the sources' pages on a hundred ports nothing listens on (every read
  fails at once); ``medium`` with them served on 127.0.0.1 (``load_pages.py``: real pages of the
  corpus's median size); and ``medium`` with pages unreachable and a 1 s turn deadline
  (``WEBREACH_TURN_TIMEOUT``), above one request alone and below the wave's turns, which all
  meet it, to see how late past it their clients hear so. One streamed web-search request at a time
  (the median of a few per protocol), then ``--concurrency`` of them at once, protocols round-robin.
  Every client reads its whole SSE stream. Reported: errors (HTTP status, connection, in-stream
  errors, streams that did not end properly), p50/p99 of first byte, first event and total time, p50
  total against one request alone, ``Server-Timing`` p50, the server's CPU, peak RSS and open FDs
  before, right after and 15 s after the load (past its clients' keep-alive clean-up), and from its
  debug log how long each search's page reads took, how far past the passage deadline they ended,
  and when the turns reached each phase (first model step, page reads, second step, end:
  ``load_timeline.py``); then the variants side by side.
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
                         [--variants low,unreachable,served]
    python bench/load.py --abandon [60]
    python bench/load.py --leave-early [20]
    python bench/load.py --big-body
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the load_*.py modules beside this

from load_abandon import abandon_mode
from load_bigbody import big_body, report_big_body
from load_client import PROTOCOLS
from load_leave import leave_early, report_leave_early
from load_rig import VARIANTS, Rig, Variant, server_log_summary, start_rig, stop
from load_waves import Wave, side_by_side, wave

LEAVE_EARLY = 20
T = TypeVar("T")


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
    parser.add_argument(
        "--variants",
        type=variant_list,
        default=list(VARIANTS.values()),
        help=f"comma list of the load's server variants ({', '.join(VARIANTS)})",
    )
    parser.add_argument("--repeat", type=int, default=3, help="lone requests per protocol")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    return parser.parse_args()


def interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


async def measure(rig: Rig) -> None:
    """The abandon mode followed by the two others, or those chosen."""
    args = rig.args
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


def variant_list(text: str) -> list[Variant]:
    chosen = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [v for v in chosen if v not in VARIANTS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(VARIANTS)}")
    return [VARIANTS[v] for v in chosen]


def run_rig(
    args: argparse.Namespace, workdir: Path, variant: Variant, work: Callable[[Rig], Awaitable[T]]
) -> T | None:
    """Start the processes for ``variant``, run ``work`` against them, stop them; None when a
    child died (said on stderr with the server log's tail)."""
    children: list[subprocess.Popen[bytes]] = []
    try:
        rig = start_rig(args, workdir / variant.name, children, variant)
        size = variant.context_size or "the default (medium)"
        pages = (
            "served on 127.0.0.1 (100 origins)"
            if variant.served
            else "on 100 ports nothing listens on"
        )
        print(
            f"== {variant.label}: webreach serve (pid {rig.server_pid}, one uvicorn worker) at "
            f"{rig.webreach}; context size {size}, the sources' pages {pages}; upstream "
            f"{args.latency:.0f} ms per model step, Exa provider {args.latency:.0f} ms per "
            "search; cache off; debug log; everything on 127.0.0.1"
        )
        print()
        outcome = asyncio.run(work(rig))
        summary = server_log_summary(rig.log)
        if summary:
            print()
            print("server log (distinct errors):")
            for line in summary:
                print(line)
        print()
        return outcome
    except (RuntimeError, OSError) as error:  # a child that died: say so, still exit 0
        print(f"\nbenchmark aborted: {type(error).__name__}: {error}", file=sys.stderr)
        server_log = workdir / variant.name / "server.log"
        if server_log.exists():
            print(server_log.read_text(errors="replace")[-3000:], file=sys.stderr)
        return None
    finally:
        stop(children)


def main() -> None:
    args = parse_args()
    signal.signal(signal.SIGTERM, interrupt)
    workdir = Path(tempfile.mkdtemp(prefix="webreach-load-"))  # no webreach.toml is read here
    try:
        if args.abandon or args.leave_early or args.big_body:
            run_rig(args, workdir, VARIANTS["unreachable"], measure)
            return
        waves: list[Wave] = []
        for variant in args.variants:
            done = run_rig(args, workdir, variant, wave)
            if done is not None:
                waves.append(done)
        if waves:
            print("== side by side")
            side_by_side(waves)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
