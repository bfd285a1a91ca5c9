"""The abandon mode of ``bench/load.py``: streamed searches whose clients hang up once their
search has reached the provider. Does webreach close its provider connections, and does the
next search still work?
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
from load_client import QUESTION, Outcome, fake_stats, new_session, one_request
from load_fakes import MARKER
from load_report import MAX_RATIO, error_summary, idle_cpu, target
from load_rig import PROC_HEADER, ProcSample, Rig

ABANDON_GRACE = 2.0
REACH_SECONDS = 10.0


@dataclass
class Abandoned:
    """What one abandon run saw."""

    clients: list[Outcome]
    in_flight: int
    """Held searches at the provider when the clients hung up."""
    provider: dict[str, int]
    """The provider's counters ``ABANDON_GRACE`` seconds after the hang-up."""
    provider_before: dict[str, int]
    before: Outcome
    after: Outcome
    baseline: ProcSample
    hung_up: ProcSample
    calm: ProcSample
    """A second after the hang-up, once the server has had time to clean up."""
    settled: ProcSample


async def until_held(
    session: aiohttp.ClientSession, provider: str, count: int, clients: list[Any]
) -> int:
    """Wait until the provider holds ``count`` searches (so every client leaves mid-search),
    or ``REACH_SECONDS`` pass, or every client has finished; return how many it holds."""
    deadline = time.monotonic() + REACH_SECONDS
    held = 0
    while time.monotonic() < deadline and not all(c.done() for c in clients):
        held = (await fake_stats(session, provider))["held"]
        if held >= count:
            break
        await asyncio.sleep(0.05)
    return int(held)


async def abandon_clients(rig: Rig, session: aiohttp.ClientSession) -> tuple[list[Outcome], int]:
    """Start the marked searches; hang them all up once the provider holds them."""
    count = rig.args.abandon
    protocols = [rig.protocols[i % len(rig.protocols)] for i in range(count)]
    hang_up = asyncio.Event()
    clients = [
        asyncio.ensure_future(
            one_request(session, rig.webreach, p, f"{MARKER} {i}: {QUESTION}", hang_up)
        )
        for i, p in enumerate(protocols)
    ]
    try:
        in_flight = await until_held(session, rig.provider, count, clients)
    finally:
        hang_up.set()
    return list(await asyncio.gather(*clients)), in_flight


async def abandon_mode(rig: Rig) -> None:
    async with new_session(rig.args.timeout) as session:
        before = await one_request(session, rig.webreach, rig.protocols[0])
    await asyncio.sleep(0.5)
    baseline = ProcSample.of(rig.server_pid)
    async with new_session(rig.args.timeout) as session:
        provider_before = await fake_stats(session, rig.provider, reset=True)
        clients, in_flight = await abandon_clients(rig, session)
    hung_up = ProcSample.of(rig.server_pid)
    await asyncio.sleep(1.0)
    calm = ProcSample.of(rig.server_pid)
    await asyncio.sleep(ABANDON_GRACE - 1.0)
    async with new_session(rig.args.timeout) as session:
        provider = await fake_stats(session, rig.provider)
        settled = ProcSample.of(rig.server_pid)
        after = await one_request(session, rig.webreach, rig.protocols[0])
    run = Abandoned(
        clients=clients,
        in_flight=in_flight,
        provider=provider,
        provider_before=provider_before,
        before=before,
        after=after,
        baseline=baseline,
        hung_up=hung_up,
        calm=calm,
        settled=settled,
    )
    report_abandon(rig, run)


def outcome_text(outcome: Outcome) -> str:
    if outcome.kind is not None:
        return f"{outcome.kind}: {outcome.error}"
    search = "its search FAILED" if outcome.search_failed else "search answered"
    return f"ended properly in {(outcome.total or 0) * 1000:.0f} ms, {search}"


def normal(outcome: Outcome, reference: Outcome) -> bool:
    """Ended properly, its search answered, and no slower than ``MAX_RATIO`` x ``reference``."""
    if outcome.kind is not None or outcome.search_failed or outcome.total is None:
        return False
    return reference.total is None or outcome.total <= MAX_RATIO * reference.total


def report_abandon(rig: Rig, run: Abandoned) -> None:
    print(
        f"{rig.args.abandon} streamed searches ({', '.join(rig.protocols)} round-robin) that "
        "hang up once their search has started and reached the provider:"
    )
    hung_up = sum(o.searched and o.kind is None for o in run.clients)
    print(f"  clients that saw their search start, then hung up: {hung_up} of {len(run.clients)}")
    for line in error_summary(run.clients):
        print(line)
    print(f"  searches held at the provider when the clients hung up: {run.in_flight}")
    released = (
        run.provider["released_by_disconnect"] - run.provider_before["released_by_disconnect"]
    )
    print(f"  released by webreach closing its provider connection: {released}")
    busy = run.provider["held"]
    print(f"  provider connections left busy {ABANDON_GRACE:g} s later: {busy}")
    print(f"  one normal search before: {outcome_text(run.before)}")
    print(f"  one normal search after:  {outcome_text(run.after)}")
    print(PROC_HEADER)
    print(run.baseline.row("before"))
    print(run.hung_up.row("at the hang-up"))
    print(run.settled.row(f"{ABANDON_GRACE:g} s after"))
    print()
    print("targets:")
    target(busy == 0, "abandon: 0 provider connections left busy", f"{busy} busy")
    target(
        normal(run.after, run.before),
        f"abandon: next search completes normally (≤ {MAX_RATIO:g}x before)",
        outcome_text(run.after),
    )
    idle_cpu(run.calm, run.settled, ABANDON_GRACE - 1.0)
