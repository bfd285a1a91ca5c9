"""Does the API server hold under concurrency, and let go of work its clients abandon?

Four processes, all on 127.0.0.1: a scripted OpenAI-compatible upstream that takes ``--latency``
ms before answering each model step (first a ``web_search`` call for the user's question, then a
short answer citing 【1】); an Exa-shaped search provider that answers after ``--latency`` ms;
the real server, ``python -m webreach serve`` (one uvicorn worker, cache off so every search
reaches the provider); and this load generator (aiohttp). Both fakes are asyncio servers, so
hundreds of their requests overlap and they are never the bottleneck.

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
  (ends properly, its search answered, no slower than 3x the same request before).

Targets are printed beside the figures with PASS/FAIL; the exit status is 0 either way.

    python bench/load.py [--concurrency 200] [--latency 200] [--protocols chat,responses,messages]
    python bench/load.py --abandon [60]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

HOST = "127.0.0.1"
PROTOCOLS = ("chat", "responses", "messages")
QUESTION = "What is the population of Iceland?"
MARKER = "abandon"
HOLD_SECONDS = 60.0
EXA_KEY = "bench-exa-key"
UPSTREAM_KEY = "bench-upstream-key"
ANSWER = ["Iceland has about ", "390,000 people", "【1】."]

# Targets of issue 8.
MAX_RATIO = 3.0
MAX_RSS_MIB = 200.0
FD_SLACK = 25
MAX_IDLE_CPU = 0.05
"""Not one of the issue's targets: an idle server should not burn CPU after the clients left."""
SETTLE_SECONDS = 10.0
ABANDON_GRACE = 2.0
REACH_SECONDS = 10.0


# --- the fakes' bookkeeping -------------------------------------------------------------------


@dataclass
class Gauge:
    """Requests served by a fake: in flight now, the peak, the total, and held ones."""

    active: int = 0
    peak: int = 0
    total: int = 0
    held: int = 0
    held_total: int = 0
    released_by_disconnect: int = 0
    served_ms: list[float] = field(default_factory=list)
    """How long each answered request took inside the fake, since the last reset."""

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        self.active += 1
        self.total += 1
        self.peak = max(self.peak, self.active)
        began = time.perf_counter()
        try:
            yield
        finally:
            self.active -= 1
            self.served_ms.append((time.perf_counter() - began) * 1000)

    def reset(self) -> None:
        self.peak = self.active
        self.served_ms = []


def stats_routes(gauge: Gauge) -> list[web.RouteDef]:
    async def stats(_: web.Request) -> web.Response:
        return web.json_response(gauge.__dict__)

    async def reset(_: web.Request) -> web.Response:
        gauge.reset()
        return web.json_response(gauge.__dict__)

    return [web.get("/stats", stats), web.post("/stats/reset", reset)]


def serve_app(app: web.Application, port: int) -> None:
    web.run_app(
        app, host=HOST, port=port, print=None, access_log=None, backlog=4096, shutdown_timeout=0.5
    )


# --- role: the scripted upstream ----------------------------------------------------------------


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def upstream_step(body: dict[str, Any]) -> tuple[list[str], str | None]:
    """The answer pieces, or the search query when this step should call ``web_search``."""
    messages = body.get("messages", [])
    tools = {t.get("function", {}).get("name") for t in body.get("tools", [])}
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    searched = any(m.get("role") == "tool" for m in messages[last_user + 1 :])
    if "web_search" in tools and not searched and last_user >= 0:
        return [], text_of(messages[last_user].get("content")).strip()
    return ANSWER, None


def completion_chunks(model: str, pieces: list[str], query: str | None) -> list[dict[str, Any]]:
    head = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": piece}) for piece in pieces]
    if query is not None:
        arguments = json.dumps({"queries": [query]})
        call = {"index": 0, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "function"}
        call["function"] = {"name": "web_search", "arguments": arguments}
        chunks.append(chunk({"tool_calls": [call]}))
    chunks.append(chunk({}, "tool_calls" if query is not None else "stop"))
    usage = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
    chunks.append({**head, "choices": [], "usage": usage})
    return chunks


def completion(model: str, pieces: list[str], query: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "".join(pieces)}
    if query is not None:
        arguments = json.dumps({"queries": [query]})
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": "web_search", "arguments": arguments},
            }
        ]
    finish = "tool_calls" if query is not None else "stop"
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }


def run_upstream(port: int, latency: float) -> None:
    gauge = Gauge()

    async def completions(request: web.Request) -> web.StreamResponse:
        with gauge.serving():
            body = await request.json()
            pieces, query = upstream_step(body)
            model = str(body.get("model", "bench-model"))
            await asyncio.sleep(latency)
            if not body.get("stream"):
                return web.json_response(completion(model, pieces, query))
            response = web.StreamResponse(headers={"content-type": "text/event-stream"})
            await response.prepare(request)
            for item in completion_chunks(model, pieces, query):
                await response.write(f"data: {json.dumps(item)}\n\n".encode())
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
            return response

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.add_routes([web.post("/v1/chat/completions", completions), *stats_routes(gauge)])
    serve_app(app, port)


# --- role: the Exa-shaped provider --------------------------------------------------------------


def exa_results(query: str) -> dict[str, Any]:
    slug = "-".join(query.lower().split())[:40] or "q"
    return {
        "results": [
            {
                "url": f"https://example.com/{slug}/{rank}",
                "title": f"Result {rank} for {query[:40]}",
                "highlights": [f"Iceland had about 390,000 inhabitants in 2024 (source {rank})."],
                "publishedDate": "2024-06-01T00:00:00.000Z",
            }
            for rank in range(1, 6)
        ]
    }


def client_gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def hold(request: web.Request, gauge: Gauge) -> None:
    """Keep the request open until webreach hangs up or ``HOLD_SECONDS`` pass."""
    gauge.held += 1
    gauge.held_total += 1
    try:
        for _ in range(int(HOLD_SECONDS / 0.02)):
            if client_gone(request):
                gauge.released_by_disconnect += 1
                return
            await asyncio.sleep(0.02)
    finally:
        gauge.held -= 1


def run_provider(port: int, latency: float) -> None:
    gauge = Gauge()

    async def search(request: web.Request) -> web.Response:
        with gauge.serving():
            if request.headers.get("x-api-key") != EXA_KEY:
                return web.json_response({"error": "bad key"}, status=401)
            query = str((await request.json()).get("query", ""))
            if query.lower().startswith(MARKER):
                await hold(request, gauge)
            else:
                await asyncio.sleep(latency)
            return web.json_response(exa_results(query))

    app = web.Application()
    app.add_routes([web.post("/search", search), *stats_routes(gauge)])
    serve_app(app, port)


# --- the client ---------------------------------------------------------------------------------


def request_for(protocol: str, question: str) -> tuple[str, dict[str, Any]]:
    user = [{"role": "user", "content": question}]
    if protocol == "chat":
        tools: list[dict[str, Any]] = [{"type": "deepseek_web_search"}]
        return "/v1/chat/completions", {"model": "m", "messages": user, "tools": tools}
    if protocol == "responses":
        return "/v1/responses", {"model": "m", "input": question, "tools": [{"type": "web_search"}]}
    tools = [{"type": "web_search_20250305", "name": "web_search"}]
    body = {"model": "m", "max_tokens": 512, "messages": user, "tools": tools}
    return "/v1/messages", body


@dataclass
class Outcome:
    protocol: str
    status: int = 0
    first_byte: float | None = None
    first_event: float | None = None
    total: float | None = None
    error: str | None = None
    kind: str | None = None
    """``http``, ``connection``, ``in-stream`` or ``unfinished`` when the request failed."""
    searched: bool = False
    search_failed: bool = False
    """A search inside the stream came back as an error (the request itself may succeed)."""
    timing: dict[str, float] = field(default_factory=dict)

    def fail(self, kind: str, error: str) -> Outcome:
        self.kind, self.error = kind, error
        return self


def parse_timing(header: str) -> dict[str, float]:
    timing = {}
    for part in header.split(","):
        name, _, rest = part.strip().partition(";dur=")
        with contextlib.suppress(ValueError):
            timing[name] = float(rest)
    return timing


def sse_frames(buffer: bytearray) -> Iterator[tuple[str, str]]:
    """Pop complete frames off ``buffer``: (event name, data) pairs; comments are skipped."""
    while True:
        end = buffer.find(b"\n\n")
        if end < 0:
            return
        raw = bytes(buffer[:end]).decode("utf-8", "replace")
        del buffer[: end + 2]
        event, data = "", []
        for line in raw.split("\n"):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())
        if event or data:
            yield event, "\n".join(data)


def classify_chat(data: str) -> str | None:
    if data == "[DONE]":
        return "done"
    item = json.loads(data)
    if "error" in item:
        return "error"
    for choice in item.get("choices") or []:
        progress = choice.get("server_tool_event") or {}
        if progress.get("type") == "call_started":
            return "start"
        if progress.get("type") == "call_completed":
            failed = (progress.get("call") or {}).get("status") == "failed"
            return "search-failed" if failed else None
    return None


def classify_responses(event: str, data: str) -> str | None:
    item = json.loads(data)
    kind = event or item.get("type", "")
    if kind in ("response.failed", "error"):
        return "error"
    if kind == "response.completed":
        return "done"
    if kind in ("response.web_search_call.in_progress", "response.web_search_call.searching"):
        return "start"
    done = item.get("item") or {}
    failed = done.get("type") == "web_search_call" and done.get("status") == "failed"
    return "search-failed" if kind == "response.output_item.done" and failed else None


def classify_messages(event: str, data: str) -> str | None:
    if event == "error":
        return "error"
    if event == "message_stop":
        return "done"
    if event != "content_block_start":
        return None
    block = json.loads(data).get("content_block", {})
    if block.get("type") == "server_tool_use":
        return "start"
    content = block.get("content")
    failed = isinstance(content, dict) and str(content.get("type", "")).endswith("_error")
    return "search-failed" if block.get("type") == "web_search_tool_result" and failed else None


def classify(protocol: str, event: str, data: str) -> str | None:
    """``error``, ``done``, ``start`` (a search began) or ``search-failed`` (it came back as an
    error) for the frames that matter, else None."""
    if protocol == "chat":
        return classify_chat(data)
    if protocol == "responses":
        return classify_responses(event, data)
    return classify_messages(event, data)


async def read_stream(
    response: aiohttp.ClientResponse,
    outcome: Outcome,
    began: float,
    abandon: asyncio.Event | None,
) -> Outcome:
    buffer = bytearray()
    async for chunk in response.content.iter_any():
        buffer += chunk.replace(b"\r\n", b"\n")
        for event, data in sse_frames(buffer):
            if outcome.first_event is None:
                outcome.first_event = time.perf_counter() - began
            verdict = classify(outcome.protocol, event, data)
            if verdict == "error":
                return outcome.fail("in-stream", data[:200])
            if verdict == "search-failed":
                outcome.search_failed = True
            if verdict == "start":
                outcome.searched = True
                if abandon is not None:
                    await abandon.wait()
                    response.close()
                    return outcome
            if verdict == "done":
                outcome.total = time.perf_counter() - began
                return outcome
    return outcome.fail("unfinished", "the stream ended without its closing event")


async def one_request(
    session: aiohttp.ClientSession,
    base: str,
    protocol: str,
    question: str = QUESTION,
    abandon: asyncio.Event | None = None,
) -> Outcome:
    """One streamed web-search request, read to its end; or, given ``abandon``, read to the
    search start, then dropped when ``abandon`` is set."""
    path, body = request_for(protocol, question)
    outcome = Outcome(protocol)
    began = time.perf_counter()
    try:
        async with session.post(base + path, json={**body, "stream": True}) as response:
            outcome.status = response.status
            outcome.first_byte = time.perf_counter() - began
            outcome.timing = parse_timing(response.headers.get("server-timing", ""))
            if response.status != 200:
                text = (await response.text())[:200]
                return outcome.fail("http", f"HTTP {response.status}: {text}")
            return await read_stream(response, outcome, began, abandon)
    except (aiohttp.ClientError, TimeoutError, ValueError) as error:
        return outcome.fail("connection", f"{type(error).__name__}: {error}")


def new_session(timeout: float) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    return aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=timeout), trust_env=False
    )


# --- the server process -------------------------------------------------------------------------


@dataclass
class ProcSample:
    """The server process's memory, open file descriptors and CPU time so far, from /proc."""

    peak_rss_kib: int
    rss_kib: int
    fds: int
    cpu_seconds: float

    @classmethod
    def of(cls, pid: int) -> ProcSample:
        status = Path(f"/proc/{pid}/status").read_text()
        values = {
            line.split(":")[0]: int(line.split()[1])
            for line in status.splitlines()
            if line.startswith(("VmHWM", "VmRSS"))
        }
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        stat = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        ticks = int(stat[11]) + int(stat[12])  # utime + stime, fields 14 and 15
        cpu = ticks / os.sysconf("SC_CLK_TCK")
        return cls(values.get("VmHWM", 0), values.get("VmRSS", 0), fds, cpu)

    def row(self, label: str) -> str:
        return (
            f"  {label:<14} {self.peak_rss_kib / 1024:>9.1f} MiB {self.rss_kib / 1024:>9.1f} MiB"
            f" {self.fds:>8} {self.cpu_seconds:>9.2f} s"
        )


PROC_HEADER = f"  {'server':<14} {'peak RSS':>13} {'RSS':>13} {'open FDs':>8} {'CPU time':>11}"


# --- reporting ----------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else float("nan")


def median(values: list[float]) -> float:
    return pct(values, 0.5)


def target(ok: bool, text: str, figure: str) -> None:
    print(f"  {'PASS' if ok else 'FAIL'}  {text:<56} {figure}")


def idle_cpu(start: ProcSample, end: ProcSample, seconds: float) -> None:
    share = (end.cpu_seconds - start.cpu_seconds) / seconds
    target(
        share <= MAX_IDLE_CPU,
        f"(extra) idle afterwards: CPU ≤ {MAX_IDLE_CPU:.0%} of one core",
        f"{share:.0%} over {seconds:g} s",
    )


def spread(label: str, values: list[float]) -> str:
    if not values:
        return f"  {label:<12} n/a"
    return f"  {label:<12} p50 {pct(values, 0.5):>8.0f} ms   p99 {pct(values, 0.99):>8.0f} ms"


def error_summary(outcomes: list[Outcome]) -> list[str]:
    kinds = Counter(o.kind for o in outcomes if o.kind)
    lines = [
        "  errors: "
        + str(sum(kinds.values()))
        + " ("
        + ", ".join(f"{k} {kinds.get(k, 0)}" for k in ("http", "connection", "in-stream"))
        + f", unfinished {kinds.get('unfinished', 0)})"
        + f"; searches that came back failed: {sum(o.search_failed for o in outcomes)}"
    ]
    samples = Counter(f"{o.protocol}: {o.kind}: {o.error}" for o in outcomes if o.kind)
    lines += [f"    {n}x {text}" for text, n in samples.most_common(5)]
    return lines


def fake_line(name: str, unit: str, before: dict[str, Any], after: dict[str, Any]) -> str:
    """What a fake served during the load, and how long it took inside (its own latency)."""
    served = [ms / 1000 for ms in after["served_ms"]]
    return (
        f"  {name}: {after['total'] - before['total']} {unit}, peak {after['peak']} in flight, "
        f"each served in p50 {pct(served, 0.5):.0f} ms, max {pct(served, 1.0):.0f} ms"
    )


async def fake_stats(session: aiohttp.ClientSession, base: str, reset: bool = False) -> Any:
    if reset:
        async with session.post(base + "/stats/reset") as response:
            return await response.json()
    async with session.get(base + "/stats") as response:
        return await response.json()


# --- the two modes ------------------------------------------------------------------------------


@dataclass
class Rig:
    webreach: str
    upstream: str
    provider: str
    server_pid: int
    log: Path
    args: argparse.Namespace

    @property
    def protocols(self) -> list[str]:
        return list(self.args.protocols)


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


# --- processes ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def wait_listening(port: int, child: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if child.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{child.args!r} exited with {child.returncode}:\n{tail}")
        with socket.socket() as sock:
            if sock.connect_ex((HOST, port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {HOST}:{port}")


def die_with_parent() -> None:
    """In the child: receive SIGTERM if this benchmark dies without cleaning up (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def child_env(extra: dict[str, str]) -> dict[str, str]:
    """The environment without proxies or webreach/provider settings, plus ``extra``."""
    dropped = ("WEBREACH_", "EXA_", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(dropped)}
    env.update(NO_PROXY=f"{HOST},localhost", no_proxy=f"{HOST},localhost", **extra)
    return env


def spawn(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as output:
        return subprocess.Popen(
            command,
            env=env,
            cwd=log.parent,  # a fresh directory: no webreach.toml is read
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches only this script, which stops the children
            preexec_fn=die_with_parent,
        )


def stop(children: list[subprocess.Popen[bytes]]) -> None:
    for child in children:
        if child.poll() is None:
            child.terminate()
    for child in children:
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=10)


def server_log_summary(log: Path) -> list[str]:
    """Distinct error lines in the server's output (the last line of each traceback)."""
    lines = log.read_text(errors="replace").splitlines()
    errors: Counter[str] = Counter()
    for number, line in enumerate(lines):
        if line.startswith("Traceback"):
            tail = next(
                (x for x in lines[number + 1 :] if x and not x.startswith((" ", "Traceback"))),
                "?",
            )
            errors[tail[:160]] += 1
        elif "ERROR" in line or "Exception" in line:
            errors[line[:160]] += 1
    return [f"  {n}x {text}" for text, n in errors.most_common(6)]


def start_rig(args: argparse.Namespace, workdir: Path, children: list[Any]) -> Rig:
    up_port, prov_port, web_port = free_port(), free_port(), free_port()
    latency = str(args.latency / 1000)
    me = [sys.executable, str(Path(__file__).resolve())]
    logs = [workdir / "upstream.log", workdir / "provider.log", workdir / "server.log"]
    for role, port, log in zip(("upstream", "provider"), (up_port, prov_port), logs, strict=False):
        command = [*me, "--role", role, "--port", str(port), "--seconds", latency]
        children.append(spawn(command, child_env({}), log))
    server_env = child_env(
        {
            "WEBREACH_UPSTREAM_BASE_URL": f"http://{HOST}:{up_port}/v1",
            "WEBREACH_UPSTREAM_API_KEY": UPSTREAM_KEY,
            "WEBREACH_SEARCH_PROVIDER": "exa",
            "EXA_API_KEY": EXA_KEY,
            "EXA_BASE_URL": f"http://{HOST}:{prov_port}",
            "WEBREACH_CACHE_TTL": "0",
            "WEBREACH_SIGNING_KEY": "bench-signing-key-0123456789abcdef",
        }
    )
    command = [sys.executable, "-m", "webreach", "serve", "--host", HOST, "--port", str(web_port)]
    server = spawn(command, server_env, logs[2])
    children.append(server)
    for child, port, log in zip(children, (up_port, prov_port, web_port), logs, strict=True):
        wait_listening(port, child, log)
    return Rig(
        webreach=f"http://{HOST}:{web_port}",
        upstream=f"http://{HOST}:{up_port}",
        provider=f"http://{HOST}:{prov_port}",
        server_pid=server.pid,
        log=logs[2],
        args=args,
    )


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
        help="abandon mode with this many clients (default 60) instead of the load",
    )
    parser.add_argument("--latency", type=float, default=200.0, help="upstream/provider ms")
    parser.add_argument(
        "--protocols", type=protocol_list, default=list(PROTOCOLS), help="comma list"
    )
    parser.add_argument("--repeat", type=int, default=3, help="lone requests per protocol")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    parser.add_argument("--role", choices=["upstream", "provider"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, help=argparse.SUPPRESS)
    return parser.parse_args()


def interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main() -> None:
    args = parse_args()
    roles: dict[str, Callable[[int, float], None]] = {
        "upstream": run_upstream,
        "provider": run_provider,
    }
    if args.role:
        roles[args.role](args.port, args.seconds)
        return
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
        asyncio.run(abandon_mode(rig) if args.abandon else load_mode(rig))
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
