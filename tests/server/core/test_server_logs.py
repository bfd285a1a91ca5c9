"""``webreach serve``'s log, read as an operator reads it: the process's stderr.

Each test runs the real command on 127.0.0.1 in front of a scripted upstream, with Exa as its
search provider (a local replay, or a ``.invalid`` host that cannot resolve), and reads the
lines it wrote: one access line per request (a stream's when it ends, 499 when its client
left), a warning per failed search or fetch naming the provider and the cause, the upstream's
failure named as it is, and no key or signed URL anywhere.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from cli_helpers import clean_env, run_cli
from replay_server import Recorded, ReplayServer, Reply
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import openai_client
from webreach.seam import WebError
from webreach.server.core.turn.operator_log import cause_of, scrub_urls

UPSTREAM_KEY = "sk-upstream-secret-7731"
EXA_KEY = "exa-secret-5519"
USER = [{"role": "user", "content": "How many people live in Iceland?"}]
SEARCH = [{"type": "deepseek_web_search"}]
ACCESS_KEYS = {
    "time",
    "level",
    "event",
    "id",
    "message",
    "method",
    "path",
    "status",
    "duration_ms",
    "protocol",
    "stream",
    "searches",
    "fetches",
    "web_errors",
    "client",
    "key",
    "user",
    "note",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def exa_results(recorded: Recorded) -> Reply:
    query = str(recorded.json().get("query", ""))
    slug = "-".join(query.lower().split())
    results = [
        {"id": f"https://{slug}.example/{n}", "url": f"https://{slug}.example/{n}", "title": query}
        for n in (1, 2)
    ]
    return Reply(json={"requestId": "replayed", "results": results})


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    log: Path
    base: str

    def text(self) -> str:
        return self.log.read_text()

    def lines(self) -> list[str]:
        return self.text().splitlines()

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.lines()]

    def wait_line(self, *needles: str) -> str:
        """The first line holding every needle, once the server wrote it (an access line is
        written after the client has its answer)."""
        deadline = time.monotonic() + 60
        while True:
            found = [line for line in self.lines() if all(n in line for n in needles)]
            if found:
                return found[0]
            if self.process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"no line with {needles} in:\n{self.text()}")
            time.sleep(0.02)

    def chat(self) -> openai.OpenAI:
        return openai_client(self.base + "/v1", "unused")


@contextmanager
def serving(tmp_path: Path, env: dict[str, str], *args: str) -> Iterator[Served]:
    port = free_port()
    log = tmp_path / f"serve-{port}.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "webreach", "serve", "--port", str(port), *args],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    served = Served(process, log, f"http://127.0.0.1:{port}")
    try:
        served.wait_line("serving on")
        yield served
    finally:
        process.terminate()
        process.wait(timeout=20)
    assert UPSTREAM_KEY not in served.text()
    assert EXA_KEY not in served.text()


def server_env(upstream: str, exa: str, **extra: str) -> dict[str, str]:
    return clean_env(
        WEBREACH_UPSTREAM_BASE_URL=upstream,
        WEBREACH_UPSTREAM_API_KEY=UPSTREAM_KEY,
        WEBREACH_SEARCH_PROVIDER="exa",
        EXA_API_KEY=EXA_KEY,
        EXA_BASE_URL=exa,
        WEBREACH_SIGNING_KEY="log-test-signing-key-of-32-bytes-or-more",
        WEBREACH_CACHE_TTL="0",
        WEBREACH_CONFIG="",
        **extra,
    )


def search_then_answer() -> tuple[Step, Step]:
    return (
        Step(calls=[Call("web_search", {"queries": ["iceland population"]})]),
        Step(content="About 390,000 people【1】."),
    )


def field(line: str, name: str) -> str:
    return line.split(f" {name}=", 1)[1].split(" ", 1)[0].rstrip("]")


@dataclass
class World:
    upstream: ScriptedUpstream
    exa: ReplayServer
    served: Served


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """One server for the text-format tests: a scripted upstream and Exa's replay."""
    with ScriptedUpstream() as upstream, ReplayServer() as exa:
        exa.route("POST", "/search", exa_results)
        env = server_env(upstream.url, exa.url)
        with serving(tmp_path_factory.mktemp("logs"), env) as served:
            yield World(upstream, exa, served)


def test_each_request_has_an_access_line(world: World) -> None:
    world.upstream.queue(*search_then_answer())
    world.served.chat().chat.completions.create(model="m", messages=USER, tools=SEARCH)
    line = world.served.wait_line(" INFO POST /v1/chat/completions 200 ")
    for part in ("protocol=chat", "stream=false", "searches=1", "fetches=0", "web_errors=0"):
        assert part in line
    assert "client=127.0.0.1" in line
    httpx.get(world.served.base + "/healthz")
    assert "protocol=health" in world.served.wait_line("GET /healthz 200")


def test_a_proxys_request_id_names_the_lines_and_comes_back(world: World) -> None:
    """A plain ``X-Request-Id`` (nginx's ``$request_id``, say) joins the two logs; anything
    else is replaced by a fresh id, never written into the log as given."""
    given = httpx.get(world.served.base + "/healthz", headers={"X-Request-Id": "edge-7f3a.1"})
    assert given.headers["x-request-id"] == "edge-7f3a.1"
    assert "id=edge-7f3a.1" in world.served.wait_line("GET /healthz 200", "edge-7f3a.1")
    odd = httpx.get(world.served.base + "/healthz", headers={"X-Request-Id": "a b\tc"})
    fresh = odd.headers["x-request-id"]
    assert fresh != "a b\tc" and fresh.isalnum()
    assert "a b" not in world.served.wait_line("GET /healthz 200", f"id={fresh}")


def test_a_failed_search_is_a_warning_naming_provider_and_cause(world: World) -> None:
    world.exa.route("POST", "/search", Reply(401, json={"error": "invalid API key"}))
    try:
        world.upstream.queue(*search_then_answer())
        reply = world.served.chat().chat.completions.create(model="m", messages=USER, tools=SEARCH)
    finally:
        world.exa.route("POST", "/search", exa_results)
    assert reply.choices[0].message.content  # the answer still comes, uncited
    warning = world.served.wait_line(" WARNING search failed: ")
    assert "exa: authorization failed (HTTP 401); check the API key" in warning
    for part in ("provider=exa", "cause=http_401", "status=401", "code=WEB_PROVIDER_ERROR"):
        assert part in warning
    request = field(warning, "id")
    access = world.served.wait_line("POST /v1/chat/completions 200", f"id={request}")
    assert "web_errors=1" in access


def test_a_stream_is_logged_when_it_ends(world: World) -> None:
    world.upstream.queue(*search_then_answer())
    client = world.served.chat()
    events = list(
        client.responses.create(
            model="m", input="Iceland?", tools=[{"type": "web_search"}], stream=True
        )
    )
    assert events[-1].type == "response.completed"
    line = world.served.wait_line("POST /v1/responses 200")
    for part in ("protocol=responses", "stream=true", "searches=1", "web_errors=0"):
        assert part in line


def test_a_client_that_leaves_mid_stream_is_a_499(world: World) -> None:
    gate = threading.Event()
    world.upstream.queue(Step(content="Slowly.", hold=gate))
    body = {"model": "m", "max_tokens": 64, "messages": USER, "stream": True}
    try:
        with httpx.stream("POST", world.served.base + "/v1/messages", json=body) as response:
            assert response.status_code == 200
            next(response.iter_lines())  # the stream has started; now hang up
        line = world.served.wait_line("POST /v1/messages 499")
    finally:
        gate.set()
    assert 'note="client left mid-response"' in line
    assert "stream=true" in line


def test_a_failed_fetch_names_the_cause_and_never_the_query(world: World) -> None:
    link = "https://page.invalid/report?sig=SIGNED-7781&token=abc"
    world.upstream.queue(
        Step(calls=[Call("read_link", {"url": link})]), Step(content="It could not be read.")
    )
    world.served.chat().chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": f"Summarise {link}"}],
        tools=[{"type": "deepseek_read_url"}],
    )
    warning = world.served.wait_line(" WARNING fetch failed: ")
    for part in ("provider=http", "cause=dns", "url=https://page.invalid/report?…"):
        assert part in warning
    access = world.served.wait_line("POST /v1/chat/completions", f"id={field(warning, 'id')}")
    assert "fetches=1" in access
    assert "web_errors=1" in access
    assert "SIGNED-7781" not in world.served.text()


def test_json_lines_and_a_dns_failure_of_the_search_provider(tmp_path: Path) -> None:
    """``WEBREACH_LOG_FORMAT=json``: every line one object; a DNS failure is ``dns``, where a
    bad key was ``http_401``."""
    with ScriptedUpstream() as upstream:
        env = server_env(upstream.url, "http://exa.invalid", WEBREACH_LOG_FORMAT="json")
        with serving(tmp_path, env) as served:
            failed = httpx.post(served.base + "/v1/search", json={"queries": ["iceland"]})
            assert failed.status_code == 502
            served.wait_line('"event": "access"')
            records = served.records()
    warning = next(r for r in records if r["event"] == "search_failed")
    assert warning["level"] == "warning"
    assert (warning["provider"], warning["cause"]) == ("exa", "dns")
    assert "exa: request failed (DNS lookup failed for exa.invalid)" in warning["message"]
    access = next(r for r in records if r["event"] == "access")
    assert set(access) == ACCESS_KEYS
    assert access["id"] == warning["id"]
    assert (access["status"], access["protocol"], access["searches"]) == (502, "search", 1)
    assert access["web_errors"] == 1
    assert records[0]["event"] == "listening"


def test_a_refused_upstream_is_named_and_warning_hides_access_lines(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    env = server_env(f"http://127.0.0.1:{port}/v1", "http://127.0.0.1:9")
    with serving(tmp_path, env, "--log-level", "warning") as served:
        with pytest.raises(openai.InternalServerError) as caught:
            served.chat().chat.completions.create(model="m", messages=USER, tools=SEARCH)
        assert "upstream unreachable: connection refused" in str(caught.value)
        assert "ConnectTimeout" not in str(caught.value)
        line = served.wait_line(" WARNING upstream failed: ")
    assert f"upstream unreachable: connection refused by 127.0.0.1:{port}" in line
    assert "cause=refused" in line
    assert " INFO " not in served.text().split("serving on", 1)[1]


def test_an_unresolvable_upstream_is_a_dns_failure(tmp_path: Path) -> None:
    env = server_env("http://upstream.invalid/v1", "http://127.0.0.1:9")
    with serving(tmp_path, env, "--log-format", "json") as served:
        body = {"model": "m", "messages": USER, "tools": SEARCH, "stream": True}
        failed = httpx.post(served.base + "/v1/chat/completions", json=body)
        assert failed.status_code == 502
        assert failed.json()["error"]["message"] == "upstream unreachable: DNS lookup failed"
        served.wait_line('"event": "access"')
        records = served.records()
    warning = next(r for r in records if r["event"] == "upstream_failed")
    assert warning["cause"] == "dns"
    assert (
        warning["message"]
        == "upstream failed: upstream unreachable: DNS lookup failed for upstream.invalid"
    )
    access = next(r for r in records if r["event"] == "access")
    assert (access["status"], access["stream"]) == (502, True)


def test_a_busy_port_is_one_line_and_exit_1() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = server_env("http://127.0.0.1:9/v1", "http://127.0.0.1:9")
        done = run_cli("serve", "--port", str(port), env=env)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"webreach: CANNOT_LISTEN: cannot listen on 127.0.0.1:{port}: the address is already "
        "in use (is another server running on that port?)"
    ]


def test_log_flags_and_settings_are_checked() -> None:
    env = server_env("http://127.0.0.1:9/v1", "http://127.0.0.1:9")
    assert run_cli("serve", "--log-level", "loud", env=env).returncode == 2
    bad = run_cli("serve", env={**env, "WEBREACH_LOG_FORMAT": "xml"})
    assert bad.returncode == 2
    assert "WEBREACH_LOG_FORMAT" in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (
            WebError("WEB_PROVIDER_ERROR", "exa: authorization failed (HTTP 401)", status=401),
            "http_401",
        ),
        (
            WebError("WEB_PROVIDER_ERROR", "exa: request failed (DNS lookup failed for a.invalid)"),
            "dns",
        ),
        (
            WebError("WEB_PROVIDER_ERROR", "exa: request failed (connection refused by h:1)"),
            "refused",
        ),
        (
            WebError("WEB_PROVIDER_ERROR", "exa: request failed (TLS handshake with h failed)"),
            "tls",
        ),
        (WebError("WEB_PROVIDER_ERROR", "exa: the request timed out"), "timeout"),
        (WebError("WEB_FETCH_TIMEOUT", "fetching took longer than 30 s"), "timeout"),
        (WebError("WEB_BLOCKED_URL", "10.0.0.1 is a private address"), "blocked_url"),
        (WebError("WEB_PROVIDER_UNAVAILABLE", "no search provider"), "provider_unavailable"),
    ],
)
def test_causes_are_one_word(error: WebError, cause: str) -> None:
    assert cause_of(error) == cause


def test_urls_lose_their_query_and_fragment() -> None:
    text = "fetching https://a.example/x?X-Amz-Signature=s3cr3t#frag took too long (http://b/y)"
    assert scrub_urls(text) == "fetching https://a.example/x?… took too long (http://b/y)"
