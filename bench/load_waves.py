"""The load mode of ``bench/load.py``: for each variant (``low``; ``medium`` with the sources'
pages unreachable; ``medium`` with them served; ``medium`` with a 1 s turn deadline, above one
request alone and below the wave's turns), one request at a time and then the wave of concurrent
streams against a server of its own; then the variants side by side, with targets.

At ``medium`` a search reads five pages for passages within the passage deadline
(``WEBREACH_SEARCH_PAGE_TIMEOUT``, 3 s). Unreachable pages fail at once (nothing listens on
their port), so that wave should cost about what ``low`` does. Served pages must be rendered:
that wave is CPU-bound, and its reference is the CPU webreach's renderer takes for the five
pages (measured in this process) plus a ``low`` turn's CPU (measured in the ``low`` wave), and
that total over the cores is the least time the wave can take.
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from load_client import Outcome, fake_stats, new_session, one_request
from load_pages import Reads, passage_reads, render_cpu
from load_report import MAX_RATIO, error_summary, fake_line, idle_cpu, median, pct, spread, target
from load_rig import PROC_HEADER, ProcSample, Rig
from load_timeline import timeline_lines

MAX_RSS_MIB = 200.0
"""The server process's peak RSS, at most."""
MAX_TOTAL_MIB = 320.0
"""The server's peak RSS plus what its worker processes (page readers, render workers) hold
after the wave (their PSS), at most: the readers keep the pages they read, which the server
process alone held before them."""
FD_SLACK = 25
SETTLE_SECONDS = 15.0
"""How long after the wave the server's FDs are counted again. Its clients' idle keep-alive
connections expire after 5 s, but aiohttp closes them at its next clean-up, which runs once per
expiry rounded up to the second: a connection can idle for up to about 11 s, and at 10 s the
upstream's 130-150 idle sockets were still open in half the runs, closed by 12 s."""
MAX_CPU_RATIO = 1.3
"""Served pages: CPU per turn, and p50 against the CPU-bound least time, at most this x."""
TIMING_KEYS = ("webreach", "upstream", "web")
_CUT_TURN = re.compile(r"POST \S+ \d+ ([\d.]+)ms .*turn timed out after")
"""The access log's line of a request the turn deadline cut, with how long the server held it."""
MAX_TURN_LATE_MS = 1000.0
"""Turns cut by their deadline, all in the same second: the server ends each at most this long
after it (cutting a turn closes its upstream stream and its searches, a few ms of CPU each)."""


@dataclass
class Wave:
    """What one variant's wave saw."""

    rig: Rig
    single: float
    """p50 total of one request alone, ms."""
    outcomes: list[Outcome]
    wall: float
    baseline: ProcSample
    after: ProcSample
    settled: ProcSample
    reads: list[Reads]
    held: list[float]
    """How long the server held each request the turn deadline cut, s (its access log)."""
    rig_cpu: float = 0.0
    """CPU the rest of the rig spent during the wave (the fakes, the page server and this load
    generator), s: on a machine this small it shares the server's cores."""

    @property
    def ok(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.kind is None]

    @property
    def totals(self) -> list[float]:
        return [o.total for o in self.ok if o.total is not None]

    @property
    def errors(self) -> int:
        """Failed requests and searches; a turn cut at a variant's own turn deadline (and the
        search it cut short) is not one."""
        kept = [o for o in self.outcomes if not self.cut(o)]
        return sum(o.kind is not None for o in kept) + sum(o.search_failed for o in kept)

    def cut(self, outcome: Outcome) -> bool:
        return self.rig.variant.turn_timeout is not None and outcome.timed_out

    @property
    def late(self) -> list[float]:
        """How long after its turn deadline each cut turn's error reached the client, s."""
        deadline = self.rig.variant.turn_timeout or 0.0
        return [o.ended - deadline for o in self.outcomes if self.cut(o) and o.ended is not None]

    @property
    def cpu(self) -> float:
        return self.after.cpu_seconds - self.baseline.cpu_seconds

    @property
    def cpu_per_turn(self) -> float:
        return self.cpu / len(self.outcomes)

    @property
    def ratio(self) -> float:
        return pct(self.totals, 0.5) / self.single if self.totals else float("inf")


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


def rig_cpu(rig: Rig) -> float:
    """CPU seconds so far of the rig's other processes and of this one (the load generator)."""
    return time.process_time() + sum(ProcSample.of(pid).cpu_seconds for pid in rig.others)


async def wave(rig: Rig) -> Wave:
    """One request alone, then the wave; what the server's log and /proc say of it."""
    args = rig.args
    single = report_alone(rig, await alone(rig))
    await asyncio.sleep(0.5)
    log_start = rig.log.stat().st_size
    baseline = ProcSample.of(rig.server_pid)
    rig_before = rig_cpu(rig)
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
    rig_after = rig_cpu(rig)
    await asyncio.sleep(SETTLE_SECONDS)
    settled = ProcSample.of(rig.server_pid)
    done = Wave(rig, single, outcomes, wall, baseline, after, settled, [], [])
    done.rig_cpu = rig_after - rig_before
    done.reads = passage_reads(rig.log, log_start)
    done.held = cut_turns_held(rig.log, log_start)

    print()
    print(f"{args.concurrency} concurrent streams ({', '.join(rig.protocols)} round-robin):")
    for line in error_summary(outcomes):
        print(line)
    ok = done.ok
    print(spread("first byte", [o.first_byte for o in ok if o.first_byte is not None]))
    print(spread("first event", [o.first_event for o in ok if o.first_event is not None]))
    print(spread("total", done.totals) + f"   (wall {wall:.1f} s for all)")
    cpu = done.cpu
    print(
        f"  server CPU (its worker processes too): {cpu:.2f} s in {wall:.2f} s"
        f" ({cpu / wall:.0%} of one core)"
    )
    print(f"  p50 total / one request alone: {done.ratio:.2f}x")
    timing = [(k, [o.timing[k] for o in ok if k in o.timing]) for k in TIMING_KEYS]
    print(
        "  Server-Timing p50 (sent with the headers, so the first model step only): "
        + ", ".join(f"{k} {statistics.median(v):.1f} ms" for k, v in timing if v)
    )
    print(fake_line("upstream", "model steps", up_before, up_after))
    print(fake_line("provider", "searches", prov_before, prov_after))
    print(f"  streams that showed their search: {sum(o.searched for o in outcomes)}")
    if done.reads:
        print(reads_line(done.reads))
    for line in timeline_lines(rig.log, log_start):
        print(line)
    if rig.variant.turn_timeout is not None:
        print(deadline_line(done))
    print(PROC_HEADER)
    for label, sample in (
        ("before", baseline),
        ("right after", after),
        (f"{SETTLE_SECONDS:.0f} s later", settled),
    ):
        print(sample.row(label))
    idle_cpu(after, settled, SETTLE_SECONDS)
    return done


def reads_line(reads: list[Reads]) -> str:
    """The searches' page reads: how many pages arrived, how long, how late past the deadline."""
    seconds = [r.seconds for r in reads]
    late = [r.late for r in reads]
    return (
        f"  page reads ({len(reads)} searches, deadline {reads[0].deadline:g} s): "
        f"{sum(r.read for r in reads)} of {sum(r.pages for r in reads)} pages read; "
        f"took p50 {pct(seconds, 0.5):.0f} ms, max {pct(seconds, 1.0):.0f} ms; "
        f"past the deadline: {sum(x > 0 for x in late)} searches, max {pct(late, 1.0):.0f} ms"
    )


def cut_turns_held(log: Path, skip: int) -> list[float]:
    with log.open("rb") as file:
        file.seek(skip)
        text = file.read().decode(errors="replace")
    return [float(m[1]) / 1000 for line in text.splitlines() if (m := _CUT_TURN.search(line))]


def deadline_line(done: Wave) -> str:
    """The turns the turn deadline cut, and how late past it they ended: for the server (from
    the request's arrival in the app to its end) and for the client (from its sending, so with
    the time the request waited to be read and parsed)."""
    deadline = done.rig.variant.turn_timeout or 0.0
    late, held = done.late, [s - deadline for s in done.held]
    return (
        f"  turn deadline ({deadline:g} s): {len(late)} of {len(done.outcomes)} turns cut; "
        f"past the deadline, the server ended them p50 {pct(held, 0.5):.0f} ms, max "
        f"{pct(held, 1.0):.0f} ms after they arrived; their clients heard so p50 "
        f"{pct(late, 0.5):.0f} ms, max {pct(late, 1.0):.0f} ms after sending them"
    )


def turn_overshoot(w: Wave, client: bool) -> str:
    if w.rig.variant.turn_timeout is None:
        return "-"
    late = w.late if client else [s - w.rig.variant.turn_timeout for s in w.held]
    return f"{len(late)}, {pct(late, 0.5):.0f} / {pct(late, 1.0):.0f} ms" if late else "0"


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def side_by_side(waves: list[Wave]) -> None:
    """The variants in columns, then the targets."""
    width = 27
    print(f"{'':<34}" + "".join(f"{w.rig.variant.label:>{width}}" for w in waves))

    def row(label: str, cell: object) -> None:
        cells = [cell(w) if callable(cell) else cell for w in waves]
        print(f"  {label:<32}" + "".join(f"{c:>{width}}" for c in cells))

    row("one request alone", lambda w: f"{w.single:.0f} ms")
    row("p50 / p99 total", lambda w: f"{pct(w.totals, 0.5):.0f} / {pct(w.totals, 0.99):.0f} ms")
    row("p50 / one request alone", lambda w: f"{w.ratio:.2f}x")
    row("errors (incl. failed searches)", lambda w: str(w.errors))
    row("server CPU, wave / per turn", lambda w: f"{w.cpu:.1f} s / {w.cpu_per_turn * 1e3:.0f} ms")
    row("the rig's other CPU, wave", lambda w: f"{w.rig_cpu:.1f} s")
    row("peak RSS", lambda w: f"{w.after.peak_rss_kib / 1024:.0f} MiB")
    row("worker processes' PSS", lambda w: f"{w.after.workers_pss_kib / 1024:.0f} MiB")
    row(
        f"open FDs before/after/{SETTLE_SECONDS:.0f} s",
        lambda w: f"{w.baseline.fds}/{w.after.fds}/{w.settled.fds}",
    )
    row("pages read", lambda w: pages_read(w.reads))
    row("page reads p50 / max", lambda w: reads_spread(w.reads))
    row("past passage deadline: n, max", lambda w: overshoot(w.reads))
    row("then ranking p50 / max", lambda w: ranking_spread(w.reads))
    row("past turn deadline, server", lambda w: turn_overshoot(w, client=False))
    row("past turn deadline, client", lambda w: turn_overshoot(w, client=True))

    print()
    print("targets:")
    low = next((w for w in waves if w.rig.variant.name == "low"), None)
    for w in waves:
        name = w.rig.variant.label
        target(w.errors == 0, f"{name}: 0 errors", str(w.errors))
        if w.rig.variant.turn_timeout is not None:
            turn_deadline(w)
        elif not w.rig.variant.served:
            limit = f"{name}: p50 ≤ {MAX_RATIO:g}x one request"
            target(w.ratio <= MAX_RATIO, limit, f"{w.ratio:.2f}x")
        peak = w.after.peak_rss_kib / 1024
        target(peak <= MAX_RSS_MIB, f"{name}: peak RSS ≤ {MAX_RSS_MIB:g} MiB", f"{peak:.1f} MiB")
        total = peak + w.after.workers_pss_kib / 1024
        limit = f"{name}: peak RSS + workers' PSS ≤ {MAX_TOTAL_MIB:g} MiB"
        target(total <= MAX_TOTAL_MIB, limit, f"{total:.1f} MiB")
        drift = w.settled.fds - w.baseline.fds
        target(
            abs(drift) <= FD_SLACK,
            f"{name}: FDs within {FD_SLACK} of baseline {SETTLE_SECONDS:.0f} s later",
            f"{w.baseline.fds} -> {w.settled.fds} ({drift:+d})",
        )
        if w.rig.variant.served and low is not None:
            cpu_bound(w, low)


def turn_deadline(w: Wave) -> None:
    """The turn deadline holds under the wave: the server ends the turns it cuts within the
    bound after it (what the client waited before the server read its request is the
    connection limits' and the header timeout's to bound, not the turn's)."""
    deadline = w.rig.variant.turn_timeout or 0.0
    late = [s - deadline for s in w.held]
    worst = pct(late, 1.0) if late else 0.0
    target(
        bool(late) and worst <= MAX_TURN_LATE_MS,
        f"{w.rig.variant.label}: cut turns end ≤ {MAX_TURN_LATE_MS:g} ms past it",
        f"{len(late)} cut, max {worst:.0f} ms",
    )


def cpu_bound(served: Wave, low: Wave) -> None:
    """The served wave against its CPU reference: rendering its pages plus a low turn."""
    rendering = render_cpu()
    per_turn = sum(rendering.values()) + low.cpu_per_turn
    print(
        "  reference: rendering the five pages "
        + " + ".join(f"{name} {s * 1e3:.0f}" for name, s in rendering.items())
        + f" = {sum(rendering.values()) * 1e3:.0f} ms, a low turn {low.cpu_per_turn * 1e3:.0f} ms;"
        + f" {cores()} cores"
    )
    ratio = served.cpu_per_turn / per_turn
    target(
        ratio <= MAX_CPU_RATIO,
        f"served: CPU per turn ≤ {MAX_CPU_RATIO:g}x reference ({per_turn * 1e3:.0f} ms)",
        f"{served.cpu_per_turn * 1e3:.0f} ms ({ratio:.2f}x)",
    )
    read = sum(r.read for r in served.reads) / max(1, len(served.outcomes))
    if read:
        # A wave that reads fewer pages than its turns ask for renders less than the reference:
        # per page it read, the CPU beyond a low turn against the renderer's alone.
        beyond = (served.cpu_per_turn - low.cpu_per_turn) / read
        alone = sum(rendering.values()) / len(rendering)
        print(
            f"  (extra) CPU per page read, beyond a low turn: {beyond * 1e3:.1f} ms against"
            f" {alone * 1e3:.1f} ms to render it alone ({beyond / alone:.2f}x), {read:.1f} pages"
            " read a turn"
        )
    least = per_turn * len(served.outcomes) / cores() * 1000
    p50 = pct(served.totals, 0.5)
    shared = (served.cpu + served.rig_cpu) / cores() * 1000
    print(
        f"  the whole machine's work in the served wave (server {served.cpu:.1f} s + the rest of"
        f" the rig {served.rig_cpu:.1f} s) over {cores()} cores: {shared:.0f} ms, p50"
        f" {p50 / shared:.2f}x that"
    )
    target(
        p50 <= MAX_CPU_RATIO * least,
        f"served: p50 ≤ {MAX_CPU_RATIO:g}x the CPU-bound least ({least:.0f} ms)",
        f"{p50:.0f} ms ({p50 / least:.2f}x)",
    )


def pages_read(reads: list[Reads]) -> str:
    return f"{sum(r.read for r in reads)} of {sum(r.pages for r in reads)}" if reads else "-"


def reads_spread(reads: list[Reads]) -> str:
    if not reads:
        return "-"
    seconds = [r.seconds for r in reads]
    return f"{pct(seconds, 0.5):.0f} / {pct(seconds, 1.0):.0f} ms"


def ranking_spread(reads: list[Reads]) -> str:
    ranking = [r.ranking for r in reads if r.ranking is not None]
    return f"{pct(ranking, 0.5):.0f} / {pct(ranking, 1.0):.0f} ms" if ranking else "-"


def overshoot(reads: list[Reads]) -> str:
    if not reads:
        return "-"
    late = [r.late for r in reads]
    return f"{sum(x > 0 for x in late)}, {pct(late, 1.0):.0f} ms"
