"""The big-body measurement of ``bench/load.py``: one 64 MiB Chat Completions body sent to the
server running with default settings (a 32 MiB body limit, no inbound keys).

First with ``Content-Length`` (refused before a byte is read), then chunked
(refused at the chunk that crosses the limit). Each by a client that reads while it sends, so it
sees a 413 sent before the body is done; then (extra) by httpx, the ``openai`` SDK's transport,
which sends the whole body before reading. For each: the answer (413 in the Chat error shape,
or a connection error), and the server's RSS (VmRSS) and peak RSS (VmHWM, reset before each
send through ``/proc/<pid>/clear_refs``) before and after.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from load_fakes import HOST
from load_report import target
from load_rig import ProcSample, Rig

BIG = 64 * 1024 * 1024
LIMIT = 33554432
"""``WEBREACH_SERVER_MAX_BODY_BYTES``'s default; the rig leaves it unset."""
PATH = "/v1/chat/completions"
MAX_GROWTH_MB = 100.0
CHUNK = 1 << 20
TIMEOUT = 60.0
MIB = 1024 * 1024


def body_chunks() -> Iterator[bytes]:
    """A valid Chat Completions body of exactly ``BIG`` bytes: one long user message."""
    prefix = b'{"model":"m","messages":[{"role":"user","content":"'
    suffix = b'"}]}'
    filler = BIG - len(prefix) - len(suffix)
    block = b"x" * CHUNK
    yield prefix
    for _ in range(filler // CHUNK):
        yield block
    yield block[: filler % CHUNK]
    yield suffix


@dataclass
class BigSend:
    """One big body sent, and what came of it."""

    framing: str
    """``Content-Length`` or ``chunked``."""
    client: str
    status: int | None = None
    answer: Any = None
    error: str | None = None
    """The connection error the client got instead of an answer."""
    seconds: float = 0.0
    sent_by_answer: int = 0
    """Body bytes sent when the answer arrived (the reading client only)."""
    sent: int = 0
    write_error: str | None = None
    before: ProcSample | None = None
    after: ProcSample | None = None

    def chat_error(self) -> bool:
        """The body is the Chat error shape: ``{"error": {"message": …, "type": …}}``."""
        error = self.answer.get("error") if isinstance(self.answer, dict) else None
        return isinstance(error, dict) and all(
            isinstance(error.get(key), str) for key in ("message", "type")
        )

    def growth_mb(self) -> tuple[float, float]:
        """Growth of RSS and of peak RSS, in MB."""
        if self.before is None or self.after is None:
            return float("nan"), float("nan")
        rss = (self.after.rss_kib - self.before.rss_kib) * 1024 / 1e6
        return rss, (self.after.peak_rss_kib - self.before.peak_rss_kib) * 1024 / 1e6


def head(port: int, chunked: bool) -> bytes:
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {BIG}"
    return (
        f"POST {PATH} HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
        f"{framing}\r\n\r\n"
    ).encode()


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, Any]:
    status = int((await reader.readline()).split()[1])
    headers = {}
    while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    length = headers.get("content-length")
    raw = await reader.readexactly(int(length)) if length else await reader.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw[:200].decode("utf-8", "replace")


async def send_reading(port: int, run: BigSend) -> None:
    """Send while reading, as a client that can see a 413 before its body is done."""
    chunked = run.framing == "chunked"
    reader, writer = await asyncio.open_connection(HOST, port)

    async def write() -> None:
        try:
            writer.write(head(port, chunked))
            for chunk in body_chunks():
                writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
                await writer.drain()
                run.sent += len(chunk)
            if chunked:
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except OSError as error:
            run.write_error = f"{type(error).__name__}: {error}"

    began = time.perf_counter()
    writing = asyncio.ensure_future(write())
    try:
        run.status, run.answer = await asyncio.wait_for(read_answer(reader), TIMEOUT)
    except (OSError, ValueError, IndexError, TimeoutError, asyncio.IncompleteReadError) as error:
        run.error = f"{type(error).__name__}: {error}"
    run.seconds = time.perf_counter() - began
    run.sent_by_answer = run.sent
    await asyncio.sleep(0.2)  # time for the write side to fail, if it is going to
    writing.cancel()
    writer.close()
    await asyncio.gather(writing, writer.wait_closed(), return_exceptions=True)


async def send_httpx(port: int, run: BigSend) -> None:
    """Send the whole body, then read: what httpx (the ``openai`` SDK's transport) does."""

    async def content() -> AsyncIterator[bytes]:
        for chunk in body_chunks():
            yield chunk
            run.sent += len(chunk)

    headers = {"content-type": "application/json"}
    if run.framing != "chunked":
        headers["content-length"] = str(BIG)
    began = time.perf_counter()
    async with httpx.AsyncClient(timeout=TIMEOUT, trust_env=False) as client:
        try:
            response = await client.post(
                f"http://{HOST}:{port}{PATH}", content=content(), headers=headers
            )
        except httpx.HTTPError as error:
            run.error = f"{type(error).__name__}: {error or '(no message)'}"
            return
        finally:
            run.seconds = time.perf_counter() - began
    run.status = response.status_code
    try:
        run.answer = response.json()
    except ValueError:
        run.answer = response.text[:200]


def reset_peak(pid: int) -> bool:
    """Reset the process's VmHWM to its current RSS (Linux 4.0+, same user)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


async def big_body(rig: Rig) -> tuple[list[BigSend], bool, bool]:
    """Every send, whether the peak could be reset, and whether the server answers afterwards."""
    runs = [
        BigSend("Content-Length", "reading"),
        BigSend("chunked", "reading"),
        BigSend("Content-Length", "httpx"),
        BigSend("chunked", "httpx"),
    ]
    peak_reset = True
    for run in runs:
        await asyncio.sleep(0.5)
        peak_reset = reset_peak(rig.server_pid) and peak_reset
        run.before = ProcSample.of(rig.server_pid)
        await (send_reading if run.client == "reading" else send_httpx)(rig.port, run)
        await asyncio.sleep(0.5)
        run.after = ProcSample.of(rig.server_pid)
    async with httpx.AsyncClient(timeout=10, trust_env=False) as client:
        try:
            alive = (await client.get(rig.webreach + "/healthz")).status_code == 200
        except httpx.HTTPError:
            alive = False
    return runs, peak_reset, alive


def verdict(run: BigSend) -> str:
    if run.status is None:
        return f"no answer, connection error ({run.error})"
    shape = "in the Chat error shape" if run.chat_error() else f"body {str(run.answer)[:80]!r}"
    return f"HTTP {run.status} {shape}"


def outcome(run: BigSend) -> str:
    return f"{verdict(run)}, {run.seconds * 1000:.0f} ms after sending began"


def report_big_body(runs: list[BigSend], peak_reset: bool, alive: bool) -> None:
    print(
        f"one {BIG // MIB} MiB body to {PATH} (server limit {LIMIT:,} bytes, the default; "
        "no inbound keys):"
    )
    for run in runs:
        label = f"{run.framing}, {'reads while sending' if run.client == 'reading' else 'httpx'}"
        extra = "(extra) " if run.client == "httpx" else ""
        print(f"  {extra}{label}: {outcome(run)}")
        if run.client == "reading":
            tail = f"; then {run.write_error}" if run.write_error else ", then all of it"
            print(f"    body sent when the answer came: {run.sent_by_answer / MIB:.1f} MiB{tail}")
        else:
            print(f"    body sent: {run.sent / MIB:.1f} MiB")
        rss, peak = run.growth_mb()
        if run.before is not None and run.after is not None:
            print(
                f"    server RSS {run.before.rss_kib / 1024:.1f} -> {run.after.rss_kib / 1024:.1f}"
                f" MiB ({rss:+.1f} MB), peak RSS {run.before.peak_rss_kib / 1024:.1f} -> "
                f"{run.after.peak_rss_kib / 1024:.1f} MiB ({peak:+.1f} MB)"
            )
    message = next((r.answer["error"]["message"] for r in runs if r.chat_error()), None)
    if message:
        print(f"  message: {message}")
    if not peak_reset:
        print("  (the peak RSS could not be reset: its growth is since the server started)")
    print(f"  the server answers /healthz afterwards: {'yes' if alive else 'NO'}")
    print()
    print("targets:")
    for run in runs[:2]:
        target(
            run.status == 413 and run.chat_error(),
            f"big body ({run.framing}): 413 in the Chat error shape",
            verdict(run)[:60],
        )
        rss, peak = run.growth_mb()
        target(
            max(rss, peak) < MAX_GROWTH_MB,
            f"big body ({run.framing}): RSS and peak growth < {MAX_GROWTH_MB:g} MB",
            f"RSS {rss:+.1f} MB, peak {peak:+.1f} MB",
        )
