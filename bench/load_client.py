"""The load generator's client side of ``bench/load.py``: one streamed web-search request per
protocol over aiohttp, its server-sent events read and classified (started a search, a search
failed, ended properly, failed inside the stream), and the fakes' counters.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp

PROTOCOLS = ("chat", "responses", "messages")
QUESTION = "What is the population of Iceland?"


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
    ended: float | None = None
    """When the stream's closing or error event arrived, s after sending."""

    def fail(self, kind: str, error: str) -> Outcome:
        self.kind, self.error = kind, error
        return self

    @property
    def timed_out(self) -> bool:
        """The stream ended with the turn deadline's error (``WEBREACH_TURN_TIMEOUT``)."""
        return self.kind == "in-stream" and "WEBREACH_TURN_TIMEOUT" in (self.error or "")


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
                outcome.ended = time.perf_counter() - began
                return outcome.fail("in-stream", data[:300])
            if verdict == "search-failed":
                outcome.search_failed = True
            if verdict == "start":
                outcome.searched = True
                if abandon is not None:
                    await abandon.wait()
                    response.close()
                    return outcome
            if verdict == "done":
                outcome.total = outcome.ended = time.perf_counter() - began
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


async def fake_stats(session: aiohttp.ClientSession, base: str, reset: bool = False) -> Any:
    if reset:
        async with session.post(base + "/stats/reset") as response:
            return await response.json()
    async with session.get(base + "/stats") as response:
        return await response.json()
