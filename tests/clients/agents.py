"""The coding agents (Claude Code, Codex CLI) run for real against ``webreach serve``.

A world for one test: the scripted upstream model (it answers by the request's content), a
replay server speaking Exa's API as the search provider, ``webreach serve`` as a subprocess, and
a recording proxy in front of it that keeps every exchange (so a test can prove no request was
refused, and an xfail can name the server's exact 400). The agents run headless in isolated
home directories, with a dead proxy for anything but 127.0.0.1, so nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from cli_helpers import clean_env
from replay_server import Recorded, ReplayServer, Reply
from scripted_upstream import Call, ScriptedUpstream, Step

__all__ = [
    "CITED_URL",
    "FINAL_ANSWER",
    "FOLLOW_UP",
    "FOLLOW_UP_ANSWER",
    "PLAIN_ANSWER",
    "QUERY",
    "QUESTION",
    "SEARCH_ANSWER",
    "SEARCH_FAILED",
    "SERVER_KEY",
    "AgentRun",
    "DeadEnd",
    "Exchange",
    "World",
    "agent_binary",
    "run_agent",
    "sandbox_env",
    "world",
]

HERE = Path(__file__).resolve().parent
MODULES = HERE / "node_modules"

QUESTION = "How many people live in Iceland? Search the web for it."
QUERY = "iceland population"
CITED_URL = "https://iceland-population.example/1"
"""The first source Exa returns for :data:`QUERY`: what 【1】 cites."""
SEARCH_ANSWER = "About 390,000 people."
"""What the upstream answers from the search results (citing 【1】, removed by the server)."""
FINAL_ANSWER = "About 390,000 people live in Iceland."
"""Claude Code's final answer, after its WebSearch tool returned."""
FOLLOW_UP = "And what is its capital?"
FOLLOW_UP_ANSWER = "Reykjavík."
SEARCH_FAILED = "The search found nothing."
"""Claude Code's final answer when its WebSearch tool brought back no source."""
PLAIN_ANSWER = "OK."
"""Anything else an agent asks (titles, quota checks, summaries)."""
SERVER_KEY = "agents-test-inbound-key"
"""webreach's inbound key (``WEBREACH_SERVER_API_KEYS``): the agents send it as their API key."""


# --- the agents' binaries --------------------------------------------------------------------

BINARIES = {
    # The native binary of the platform package (the wrapper's postinstall hard-links it over
    # bin/claude.exe; the platform package holds it even with --ignore-scripts).
    "claude": MODULES / "@anthropic-ai" / "claude-code-linux-x64" / "claude",
    "codex": MODULES
    / "@openai"
    / "codex-linux-x64"
    / "vendor"
    / "x86_64-unknown-linux-musl"
    / "bin"
    / "codex",
}
_install_lock = threading.Lock()


def agent_binary(name: str) -> Path:
    """The agent's executable from tests/clients (``npm ci`` there once when it is missing)."""
    if sys.platform != "linux" or os.uname().machine not in ("x86_64", "amd64"):
        pytest.skip(f"the agent tests pin the linux-x64 binaries; this is {sys.platform}")
    binary = BINARIES[name]
    with _install_lock:
        if not binary.exists():
            npm = shutil.which("npm")
            if npm is None:
                pytest.skip(f"{binary} is missing and npm is not installed")
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=HERE,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            if done.returncode != 0 or not binary.exists():
                pytest.fail(f"npm ci in tests/clients did not install {binary}: {done.stderr}")
    return binary


# --- the recording proxy ---------------------------------------------------------------------


@dataclass
class Exchange:
    """One request through the proxy and webreach's answer."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int = 0
    answer: bytes = b""
    """The response body as webreach sent it (a stream's events included)."""

    @property
    def refused(self) -> bool:
        return self.status >= 400

    def describe(self) -> str:
        """The request line and status, with webreach's error when it refused the request."""
        line = f"{self.method} {self.path} → {self.status}"
        return f"{line}: {self.answer[:600].decode(errors='replace')}" if self.refused else line


_HOP_BY_HOP = {
    "connection",
    "content-length",
    "host",
    "keep-alive",
    "transfer-encoding",
    "upgrade",
    "proxy-connection",
}


class RecordingProxy:
    """Relays everything to ``target`` byte for byte (streams stay streams), and records it."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        app = Starlette(
            routes=[
                Route(
                    "/{path:path}",
                    self._relay,
                    methods=["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"],
                )
            ],
            lifespan=self._lifespan,
        )
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._server = uvicorn.Server(
            uvicorn.Config(app, log_level="error", lifespan="on", access_log=False)
        )
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._client: httpx.AsyncClient | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}"

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            assert time.monotonic() < deadline, "the recording proxy did not start"
            time.sleep(0.005)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    @asynccontextmanager
    async def _lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        """The relay's client lives and closes on the server's loop: left to the collector after
        the loop ended, its pooled connections stayed open."""
        timeout = httpx.Timeout(120, connect=5)
        async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
            self._client = client
            yield

    async def _relay(self, request: Request) -> Response:
        assert self._client is not None
        raw = await request.body()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        exchange = Exchange(
            request.method, path, {k.lower(): v for k, v in request.headers.items()}, body
        )
        with self._lock:
            self.exchanges.append(exchange)
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP]
        upstream = await self._client.send(
            self._client.build_request(
                request.method, self.target + path, headers=headers, content=raw
            ),
            stream=True,
        )
        exchange.status = upstream.status_code

        async def relay() -> Any:
            async for chunk in upstream.aiter_raw():
                exchange.answer += chunk
                yield chunk

        return StreamingResponse(
            relay(),
            status_code=upstream.status_code,
            headers={k: v for k, v in upstream.headers.items() if k.lower() not in _HOP_BY_HOP},
            background=BackgroundTask(upstream.aclose),
        )


# --- the scripted model ----------------------------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _called(messages: list[dict[str, Any]], call_id: str) -> str:
    """The name of the function an assistant message called with ``call_id``."""
    for message in reversed(messages):
        for call in message.get("tool_calls") or []:
            if call.get("id") == call_id:
                return str(call["function"]["name"])
    return ""


def answer(body: dict[str, Any]) -> Step:
    """The upstream model's side of both agents' conversations, decided by the request.

    - the server gave it ``web_search`` (an agent's web search reached webreach) and nothing was
      searched yet: search for :data:`QUERY`; with the results: answer citing 【1】;
    - Claude Code's own ``WebSearch`` tool in its main loop: call it; with its result: answer
      (:data:`FINAL_ANSWER` when the cited source is in the result, else :data:`SEARCH_FAILED`);
    - the follow-up question: answer it without searching;
    - anything else (titles, quota checks, summaries): a short plain answer.
    """
    messages: list[dict[str, Any]] = body.get("messages") or []
    tools = {
        tool.get("function", {}).get("name")
        for tool in body.get("tools") or []
        if isinstance(tool, dict)
    }
    # Agents put system messages anywhere (Claude Code's reminders after the user's turn).
    spoken = [m for m in messages if m.get("role") != "system"]
    last = spoken[-1] if spoken else {}
    if last.get("role") == "tool":
        name = _called(messages, str(last.get("tool_call_id")))
        if name == "web_search":
            return Step(content=["About 390,000 people", "【1】", "."])
        if name == "WebSearch":
            # The final answer only when the search's sources reached the model.
            found = CITED_URL in _text(last.get("content"))
            return Step(content=FINAL_ANSWER if found else SEARCH_FAILED)
        return Step(content=PLAIN_ANSWER)
    asked = _text(last.get("content")) if last.get("role") == "user" else ""
    if FOLLOW_UP in asked:
        return Step(content=FOLLOW_UP_ANSWER)
    if "web_search" in tools:
        return Step(calls=[Call("web_search", {"queries": [QUERY]})])
    if "WebSearch" in tools and "Iceland" in asked:
        return Step(calls=[Call("WebSearch", {"query": QUERY})])
    return Step(content=PLAIN_ANSWER)


# --- Exa ----------------------------------------------------------------------------------------


def exa_results(recorded: Recorded) -> Reply:
    """Three sources on the query's own host, shaped like Exa's ``POST /search`` answer."""
    query = str(recorded.json().get("query", ""))
    slug = "-".join(query.lower().split())
    return Reply(
        json={
            "requestId": "replayed",
            "resolvedSearchType": "neural",
            "results": [
                {
                    "id": f"https://{slug}.example/{n}",
                    "url": f"https://{slug}.example/{n}",
                    "title": f"{query} — result {n}",
                    "publishedDate": "2025-01-15T00:00:00.000Z",
                    "highlights": [f"About {query}."],
                }
                for n in (1, 2, 3)
            ],
        }
    )


class DeadEnd:
    """The proxy the agents are given for anything but 127.0.0.1: it notes where a request
    wanted to go and refuses it at once (403, connection closed), so nothing leaves the
    machine and nothing waits for a timeout."""

    def __init__(self) -> None:
        self.attempts: list[str] = []
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(16)
        self._socket.settimeout(0.1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}"

    def __enter__(self) -> DeadEnd:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._socket.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except OSError:
                continue
            with connection, suppress(OSError):
                connection.settimeout(1)
                head = connection.recv(4096).split(b"\r\n", 1)[0]
                self.attempts.append(head.decode(errors="replace"))
                connection.sendall(
                    b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )


# --- the world ---------------------------------------------------------------------------------


@dataclass
class World:
    upstream: ScriptedUpstream
    exa: ReplayServer
    proxy: RecordingProxy
    dead_end: DeadEnd
    requests: list[dict[str, Any]] = field(default_factory=list)
    """Every request the upstream model received, in order."""

    @property
    def url(self) -> str:
        """Where the agents are pointed: the recording proxy in front of webreach."""
        return self.proxy.url

    @property
    def searched(self) -> list[str]:
        """The queries Exa received."""
        return [r.json()["query"] for r in self.exa.requests if r.path == "/search"]

    @property
    def refused(self) -> list[Exchange]:
        return [e for e in self.proxy.exchanges if e.refused]

    def assert_nothing_refused(self) -> None:
        """No response of webreach had a status of 400 or more (the report names each)."""
        if self.refused:
            pytest.fail("webreach refused a request:\n" + self.report())

    def report(self) -> str:
        """Every exchange (and every attempt to leave the machine), for assertion messages."""
        lines = [e.describe() for e in self.proxy.exchanges] or ["no requests reached webreach"]
        lines += [f"refused on the way out: {attempt}" for attempt in self.dead_end.attempts]
        return "\n".join(lines)

    def sent(self, path: str) -> list[dict[str, Any]]:
        """The JSON bodies the agents sent to ``path`` (query string ignored)."""
        return [
            e.body
            for e in self.proxy.exchanges
            if e.path.split("?")[0] == path and isinstance(e.body, dict)
        ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _webreach(env: dict[str, str], log: Path) -> Iterator[str]:
    port = _free_port()
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "webreach", "serve", "--port", str(port)],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(base + "/healthz", timeout=1, trust_env=False)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"webreach serve did not start: {log.read_text()}")
                time.sleep(0.05)
        yield base
    finally:
        _kill_group(process)


@contextmanager
def world(tmp_path: Path, **settings: str) -> Iterator[World]:
    """The scripted upstream, Exa's replay, ``webreach serve``, the proxy; all on 127.0.0.1."""
    with ScriptedUpstream() as upstream, ReplayServer() as exa:
        exa.route("POST", "/search", exa_results)
        requests: list[dict[str, Any]] = []

        def respond(body: dict[str, Any]) -> Step:
            requests.append(body)
            return answer(body)

        upstream.respond = respond
        env = clean_env(
            WEBREACH_UPSTREAM_BASE_URL=upstream.url,
            WEBREACH_UPSTREAM_API_KEY="upstream-key",
            WEBREACH_SEARCH_PROVIDER="exa",
            EXA_API_KEY="exa-test-key",
            EXA_BASE_URL=exa.url,
            WEBREACH_SIGNING_KEY="agents-test-signing-key-of-32-bytes-or-more",
            WEBREACH_SERVER_API_KEYS=SERVER_KEY,
            WEBREACH_CACHE_TTL="0",
            WEBREACH_CONFIG="",
            XDG_CACHE_HOME=str(tmp_path / "webreach-cache"),
            PYTHONPATH=os.pathsep.join(sys.path),
            **settings,
        )
        with (
            _webreach(env, tmp_path / "webreach.log") as base,
            RecordingProxy(base) as proxy,
            DeadEnd() as dead_end,
        ):
            yield World(upstream, exa, proxy, dead_end, requests)


# --- running an agent ----------------------------------------------------------------------------


def sandbox_env(tmp_path: Path, world: World, **extra: str) -> dict[str, str]:
    """A minimal environment: isolated home and XDG directories, every proxy a dead end."""
    home = tmp_path / "home"
    for sub in ("", ".config", ".cache", ".local/share", ".local/state"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    dead = world.dead_end.url
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "USER": "tester",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "TMPDIR": str(tmp_path),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "HTTP_PROXY": dead,
        "HTTPS_PROXY": dead,
        "ALL_PROXY": dead,
        "http_proxy": dead,
        "https_proxy": dead,
        "all_proxy": dead,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    env.update(extra)
    return env


@dataclass
class AgentRun:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str

    def events(self) -> list[dict[str, Any]]:
        """The JSON objects of stdout, one a line (lines that are not JSON are skipped)."""
        found = []
        for line in self.stdout.splitlines():
            with suppress(ValueError):
                value = json.loads(line)
                if isinstance(value, dict):
                    found.append(value)
        return found

    def describe(self) -> str:
        return (
            f"$ {' '.join(self.argv)}\nexit {self.returncode}\n"
            f"stdout: {self.stdout[-4000:]}\nstderr: {self.stderr[-4000:]}"
        )


def _kill_group(process: subprocess.Popen[Any]) -> None:
    if process.poll() is None:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)
    else:
        # The leader is gone; anything it left in its group goes too.
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def run_agent(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 50) -> AgentRun:
    """Run an agent in its own process group, stdin closed; the group dies on any exit."""
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        stdout, stderr = process.communicate()
        pytest.fail(
            f"{argv[0]} did not finish in {timeout} s\nstdout: {stdout[-4000:]}\n"
            f"stderr: {stderr[-4000:]}"
        )
    finally:
        _kill_group(process)
    return AgentRun(argv, process.returncode, stdout, stderr)
