"""The leave-early measurement of ``bench/load.py``: clients that hang up while webreach still
waits for the upstream's first byte. Does webreach close its upstream request, and how soon?

N clients (protocols round-robin, streamed and not, plus the plain Chat relay without web tools)
each send a request whose question starts with ``hang``; the fake upstream answers those with
nothing at all, not even headers, and notes when webreach closes the connection. Each client
hangs up (closes its socket) once the upstream reports that it holds its request, and no sooner
than ``LEAVE_AFTER`` after sending. Both sides take their time from CLOCK_MONOTONIC, which every
process on the machine shares, so the two moments can be subtracted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import aiohttp
from load_client import QUESTION, new_session, request_for
from load_fakes import HANG, HOST
from load_report import pct, target
from load_rig import Rig

LEAVE_AFTER = 0.3
"""Seconds between sending the request and hanging up, at least."""
CLOSE_WITHIN = 1.0
"""Target: webreach closes its upstream request within this long after its client left."""
GRACE = 2.0
"""Seconds after the last hang-up when requests still held at the upstream are counted."""
REACH_SECONDS = 10.0
"""How long a client waits for the upstream to hold its request before it hangs up anyway."""


@dataclass
class Leaver:
    """One client that leaves early, and what it saw."""

    tag: str
    protocol: str
    """``chat``, ``responses``, ``messages``, or ``relay`` (Chat without web tools)."""
    stream: bool
    sent: float | None = None
    closed: float | None = None
    """When the client closed its socket (``time.monotonic()``)."""
    answered: str | None = None
    """The status line webreach sent before the hang-up, if it answered that early."""
    error: str | None = None

    @property
    def variant(self) -> str:
        return f"{self.protocol} {'stream' if self.stream else 'whole'}"


def request_of(protocol: str, stream: bool, question: str) -> tuple[str, bytes]:
    if protocol == "relay":
        user = [{"role": "user", "content": question}]
        path, body = "/v1/chat/completions", {"model": "m", "messages": user}
    else:
        path, body = request_for(protocol, question)
    return path, json.dumps({**body, "stream": stream}).encode()


def http_request(path: str, payload: bytes, port: int) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    )
    return head.encode() + payload


async def held_then(held: asyncio.Event) -> None:
    """Return once ``LEAVE_AFTER`` has passed and the upstream holds the request (or gave up)."""
    await asyncio.sleep(LEAVE_AFTER)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(held.wait(), REACH_SECONDS)


async def leave(port: int, leaver: Leaver, held: asyncio.Event) -> None:
    """Send the request, wait, close the socket; note the moment of closing."""
    path, payload = request_of(leaver.protocol, leaver.stream, f"{leaver.tag}: {QUESTION}")
    try:
        reader, writer = await asyncio.open_connection(HOST, port)
        writer.write(http_request(path, payload, port))
        await writer.drain()
    except OSError as error:
        leaver.error = f"{type(error).__name__}: {error}"
        return
    leaver.sent = time.monotonic()
    answer = asyncio.ensure_future(reader.readline())
    ready = asyncio.ensure_future(held_then(held))
    await asyncio.wait({answer, ready}, return_when=asyncio.FIRST_COMPLETED)
    leaver.closed = time.monotonic()
    writer.close()
    if answer.done() and answer.exception() is None:
        leaver.answered = answer.result().decode("latin-1").strip() or "(closed by webreach)"
    for task in (answer, ready):
        task.cancel()
    with contextlib.suppress(OSError, asyncio.CancelledError):
        await asyncio.gather(answer, ready, writer.wait_closed(), return_exceptions=True)


async def hangs(session: aiohttp.ClientSession, upstream: str) -> list[dict[str, Any]]:
    async with session.get(upstream + "/hangs") as response:
        return list(await response.json())


async def watch(
    session: aiohttp.ClientSession, upstream: str, events: dict[str, asyncio.Event]
) -> None:
    """Tell each client when the upstream holds its request, until all are held."""
    deadline = time.monotonic() + REACH_SECONDS + LEAVE_AFTER
    while time.monotonic() < deadline and not all(e.is_set() for e in events.values()):
        for hung in await hangs(session, upstream):
            if hung["tag"] in events and hung["closed"] is None:
                events[hung["tag"]].set()
        await asyncio.sleep(0.02)


@dataclass
class LeftEarly:
    clients: list[Leaver]
    upstream: list[dict[str, Any]]
    """The upstream's record of these clients' requests, ``GRACE`` seconds after the hang-up."""

    def delays(self, variant: str | None = None) -> list[float]:
        """Seconds from a client's hang-up to webreach closing its upstream request."""
        mine = {c.tag: c for c in self.clients if variant in (None, c.variant)}
        return [
            hung["closed"] - closed
            for hung in self.upstream
            if hung["tag"] in mine and hung["closed"] is not None
            if (closed := mine[hung["tag"]].closed) is not None
        ]

    def reached(self, variant: str | None = None) -> list[dict[str, Any]]:
        tags = {c.tag for c in self.clients if variant in (None, c.variant)}
        return [hung for hung in self.upstream if hung["tag"] in tags]


async def leave_early(rig: Rig, count: int) -> LeftEarly:
    variants = [(p, s) for s in (True, False) for p in [*rig.protocols, "relay"]]
    clients = [Leaver(f"{HANG} {i}", *variants[i % len(variants)]) for i in range(count)]
    events = {c.tag: asyncio.Event() for c in clients}
    async with new_session(rig.args.timeout) as session:
        began = time.monotonic()
        watcher = asyncio.ensure_future(watch(session, rig.upstream, events))
        await asyncio.gather(*(leave(rig.port, c, events[c.tag]) for c in clients))
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
        last = max((c.closed for c in clients if c.closed is not None), default=time.monotonic())
        await asyncio.sleep(max(0.0, last + GRACE - time.monotonic()))
        record = [h for h in await hangs(session, rig.upstream) if h["arrived"] >= began]
    return LeftEarly(clients, record)


def ms(seconds: list[float], q: float) -> str:
    return f"{pct(seconds, q):.1f} ms" if seconds else "n/a"


def report_leave_early(run: LeftEarly) -> None:
    count = len(run.clients)
    print(
        f"{count} clients that leave early (hang up {LEAVE_AFTER * 1000:.0f} ms after sending, "
        "once the upstream holds their request), while the upstream has sent nothing:"
    )
    print(
        f"  {'variant':<18} {'clients':>7} {'reached upstream':>16} {'closed by webreach':>18}"
        f"   close after the hang-up p50 / max"
    )
    for variant in dict.fromkeys(c.variant for c in run.clients):
        mine = [c for c in run.clients if c.variant == variant]
        mine_reached = run.reached(variant)
        mine_closed = sum(h["closed"] is not None for h in mine_reached)
        delays = run.delays(variant)
        print(
            f"  {variant:<18} {len(mine):>7} {len(mine_reached):>16} {mine_closed:>18}"
            f"   {ms(delays, 0.5)} / {ms(delays, 1.0)}"
        )
    reached = run.reached()
    closed = [h for h in reached if h["closed"] is not None]
    delays = run.delays()
    held = len(reached) - len(closed)
    print(
        f"  upstream requests closed by webreach: {len(closed)} of {len(reached)}; after the "
        f"client hung up: p50 {ms(delays, 0.5)}, max {ms(delays, 1.0)}"
    )
    early = Counter(f"{c.variant}: {c.answered}" for c in run.clients if c.answered)
    for text, n in early.most_common(5):
        print(f"    {n}x answered before the hang-up: {text}")
    failed = Counter(f"{c.variant}: {c.error}" for c in run.clients if c.error)
    for text, n in failed.most_common(5):
        print(f"    {n}x could not send: {text}")
    print(f"  upstream requests still held {GRACE:g} s after the last hang-up: {held}")
    print()
    print("targets:")
    within = bool(reached) and held == 0 and max(delays, default=0.0) <= CLOSE_WITHIN
    target(
        within,
        f"leave early: upstream request closed within {CLOSE_WITHIN:g} s",
        f"{len(closed)} of {len(reached)} closed, max {ms(delays, 1.0)}",
    )
    target(held == 0, f"leave early: 0 upstream requests held {GRACE:g} s later", f"{held} held")
