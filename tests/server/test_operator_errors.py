"""Errors with their cause, as an operator and a client meet them.

An upstream that answers an HTTP error with a page or plain text (a proxy's 501, 502) is named by
its status and the start of what it said, in the client's error and the log (which alone names
its address); a host that does not resolve, a short signing key, ``webreach mcp --http`` on a busy
port or an open address, and ``mcp --print-config`` without the extra are each one line and an
exit code. Commands run as processes; the server's answers come through the official SDKs.
"""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from cli_helpers import clean_env, run_cli
from client_sockets import STARTUP_PATIENCE
from scripted_upstream import ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from test_packaging import _without
from test_server_logs import UPSTREAM_KEY, serving
from test_server_logs import server_env as logged_server_env
from web_requests import BODIES, VARIANTS
from webreach.install_hint import install_command
from webreach.server.app import ServerSettings

KEY = "sk-upstream-secret-8841"
SIGNING = "operator-errors-signing-key-0123456789"
FILLER = "lorem ipsum dolor sit amet " * 12
PAGE = (
    b"<!DOCTYPE html><html><head><title>501 Not Implemented</title>"
    b"<style>body { color: red }</style><script>var leaked = 1;</script></head>"
    b"<body><h1>Not Implemented</h1><p>The proxy does not implement this method; "
    b"it was called with "
    + KEY.encode()
    + b".</p><p>"
    + FILLER.encode()
    + b"</p><p>PAST-THE-CUT</p></body></html>"
)
PAGE_SAYS = "upstream answered HTTP 501: 501 Not Implemented Not Implemented The proxy does not"
PLAIN = b"Bad Gateway: the proxy could not reach the model server\r\n\x1b[31mretry later\n"
PLAIN_SAYS = (
    "upstream answered HTTP 502: Bad Gateway: the proxy could not reach the model server "
    "[31mretry later"  # the terminal escape's control character is gone, its text stays
)
FAILURES = {
    # The upstream's 501 is its failure: the client gets a 502 saying what the upstream answered.
    "html 501": (Step(status=501, raw_body=PAGE, headers={"content-type": "text/html"}), 502),
    # An HTML page a proxy mislabels as JSON is still read as a page.
    "html 501 as json": (Step(status=501, raw_body=PAGE), 502),
    "plain 502": (Step(status=502, raw_body=PLAIN, headers={"content-type": "text/plain"}), 502),
}


@pytest.fixture
def server_config(upstream: ScriptedUpstream) -> ServerSettings:
    return ServerSettings(upstream_base_url=upstream.url, upstream_api_key=KEY, signing_key=SIGNING)


@pytest.fixture
def server_keepalive() -> float:
    """Longer than any request here takes on a loaded machine: a whole answer still waiting at
    the first keep-alive has begun its 200, and these tests read the errors sent before it."""
    return 60.0


def _ask(base: str, variant: str, stream: bool) -> None:
    """The request of ``variant`` through its official SDK; raises the SDK's status error."""
    body: dict[str, Any] = {k: v for k, v in BODIES[variant].items() if k != "model"}
    if variant == "messages":
        claude = anthropic_client(base.removesuffix("/v1"), "x")
        made: Any = claude.messages.create(model="m", stream=stream, **body)
    else:
        client = openai_client(base, "x")
        if variant == "responses":
            made = client.responses.create(model="m", stream=stream, **body)
        else:
            made = client.chat.completions.create(model="m", stream=stream, **body)
    if stream:
        list(made)


def _said(error: openai.APIStatusError | anthropic.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return str(inner.get("message"))
    return str(error)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("failure", list(FAILURES))
def test_a_non_json_upstream_error_names_its_status_and_words(
    upstream: ScriptedUpstream,
    webreach_url: str,
    caplog: pytest.LogCaptureFixture,
    failure: str,
    variant: str,
    stream: bool,
) -> None:
    step, status = FAILURES[failure]
    upstream.queue(step)
    caplog.set_level(logging.INFO, logger="webreach")
    with pytest.raises((openai.APIStatusError, anthropic.APIStatusError)) as caught:
        _ask(webreach_url, variant, stream)
    error = caught.value
    assert isinstance(error, openai.APIStatusError | anthropic.APIStatusError)
    assert error.status_code == status
    said = _said(error)
    expected = PLAIN_SAYS if step.status == 502 else PAGE_SAYS
    assert said.startswith(expected), said
    where = upstream.url.split("//", 1)[1].split("/", 1)[0]
    assert where not in said  # the upstream's address is the operator's, not the client's
    words = said.split(": ", 1)[1]
    assert len(words) <= 201  # 200 characters and an ellipsis
    assert "PAST-THE-CUT" not in said
    assert KEY not in said and "<" not in said and "leaked" not in said and "\x1b" not in said
    if step.status == 501:
        assert "called with ***." in said
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("upstream failed")]
    assert len(lines) == 1, lines
    assert lines[0] == f"upstream failed: upstream {where} answered HTTP {step.status}: {words}"


def test_a_json_error_without_a_message_is_shown_as_its_text(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(Step(status=404, raw_body=b'{"detail": "Not Found"}'))
    with pytest.raises(openai.NotFoundError) as caught:
        _ask(webreach_url, "chat", False)
    assert _said(caught.value) == (
        "the upstream has no /chat/completions: does WEBREACH_UPSTREAM_BASE_URL end in /v1? "
        '(upstream answered HTTP 404: {"detail": "Not Found"})'
    )


def test_a_json_error_with_a_message_still_passes_as_the_upstream_wrote_it(
    upstream: ScriptedUpstream, webreach_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="webreach")
    for variant in ("relay", "chat"):
        upstream.queue(Step(status=400, error=f"bad model for {KEY}"))
        with pytest.raises(openai.BadRequestError) as caught:
            _ask(webreach_url, variant, False)
        assert _said(caught.value) == "bad model for ***"
    where = upstream.url.split("//", 1)[1].split("/", 1)[0]
    logged = [
        r.getMessage()
        for r in caplog.records
        if r.name == "webreach.server" and getattr(r, "event", "") not in ("ready", "not_ready")
    ]
    assert logged == [f"upstream failed: upstream {where} answered HTTP 400: bad model for ***"] * 2


def test_the_served_log_names_the_upstream_and_what_it_said(tmp_path: Path) -> None:
    """``webreach serve`` as a process: the warning line names the status, the upstream's
    address and its words; the key never appears."""
    with ScriptedUpstream() as upstream:
        env = logged_server_env(upstream.url, "http://127.0.0.1:9")
        with serving(tmp_path, env) as served:
            page = PAGE.replace(KEY.encode(), UPSTREAM_KEY.encode())
            upstream.queue(Step(status=501, raw_body=page, headers={"content-type": "text/html"}))
            with pytest.raises(openai.APIStatusError) as caught:
                served.chat().chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "hi"}], stream=True
                )
            assert caught.value.status_code == 502
            where = upstream.url.split("//", 1)[1].split("/", 1)[0]
            line = served.wait_line(" WARNING upstream failed: ")
    assert f"upstream failed: upstream {where} answered HTTP 501: 501 Not Implemented" in line
    assert "called with ***." in line
    assert "cause=http_501" in line
    assert UPSTREAM_KEY not in served.text()


# --- the command line: one line, an exit code -------------------------------------------------


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def _serve_env(**extra: str) -> dict[str, str]:
    given = {
        "WEBREACH_UPSTREAM_BASE_URL": "http://127.0.0.1:9/v1",
        "WEBREACH_SIGNING_KEY": SIGNING,
        "WEBREACH_CONFIG": "",
    }
    return clean_env(**{**given, **extra})


def test_serve_on_a_host_that_does_not_resolve_names_the_host() -> None:
    done = run_cli("serve", "--host", "nosuchhost.invalid", "--port", "8", env=_serve_env())
    assert done.returncode == 1
    line = _one_line(done)
    assert line.startswith(
        "webreach: CANNOT_LISTEN: cannot listen on nosuchhost.invalid:8: "
        "the host nosuchhost.invalid cannot be resolved ("
    )
    assert "API_KEYS" not in line


@pytest.mark.parametrize("command", ["serve", "search", "config"])
def test_a_short_signing_key_is_refused_without_being_shown(command: str) -> None:
    args = [command, "iceland"] if command == "search" else [command]
    done = run_cli(*args, env=_serve_env(WEBREACH_SIGNING_KEY="short-canary-7"))
    assert done.returncode == 2
    assert "short-canary-7" not in done.stderr + done.stdout
    assert _one_line(done) == (
        "webreach: INVALID_SETTING: WEBREACH_SIGNING_KEY: is too short: a signing key needs at "
        'least 32 bytes; make one with: python -c "import secrets; '
        'print(secrets.token_urlsafe(32))"'
    )


def test_the_signing_key_is_counted_in_bytes_and_empty_is_unset() -> None:
    for enough in ("k" * 32, "é" * 16, ""):
        ServerSettings(signing_key=enough)
    for short in ("k" * 31, "é" * 15):
        with pytest.raises(ValueError, match="at least 32 bytes") as caught:
            ServerSettings(signing_key=short)
        assert short not in str(caught.value)


def test_the_command_that_makes_a_key_makes_one_that_is_accepted() -> None:
    made = subprocess.run(
        [sys.executable, "-c", "import secrets; print(secrets.token_urlsafe(32))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert ServerSettings(signing_key=made).signing_key is not None


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield int(taken.getsockname()[1])


def test_mcp_http_on_a_busy_port_is_one_line_and_exit_1(busy_port: int) -> None:
    done = run_cli("mcp", "--http", "--port", str(busy_port), env=_serve_env())
    assert done.returncode == 1
    assert _one_line(done) == (
        f"webreach: CANNOT_LISTEN: cannot listen on 127.0.0.1:{busy_port}: the address is "
        "already in use (is another server running on that port?)"
    )


def test_mcp_http_on_a_host_that_does_not_resolve_names_the_host() -> None:
    done = run_cli("mcp", "--http", "--host", "nosuchhost.invalid", env=_serve_env())
    assert done.returncode == 1
    assert "the host nosuchhost.invalid cannot be resolved" in _one_line(done)


def test_mcp_http_off_loopback_needs_inbound_keys_as_serve_does() -> None:
    mcp = run_cli("mcp", "--http", "--host", "0.0.0.0", "--port", "9", env=_serve_env())
    serve = run_cli("serve", "--host", "0.0.0.0", "--port", "9", env=_serve_env())
    assert (mcp.returncode, serve.returncode) == (2, 2)
    assert (
        _one_line(mcp)
        == _one_line(serve)
        == (
            "webreach: INVALID_SETTING: refusing to serve on 0.0.0.0 without "
            "WEBREACH_SERVER_API_KEYS; set inbound keys or bind to a loopback address"
        )
    )


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def test_mcp_http_checks_the_inbound_keys_as_bearer_tokens(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    log = tmp_path / "mcp.log"
    env = _serve_env(WEBREACH_SERVER_API_KEYS="mcp-key-one, mcp-key-two")
    with log.open("w") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "webreach", "mcp", "--http", "--port", str(port)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        _wait_for(log, process, f"MCP server on {url}")

        def post(**headers: str) -> httpx.Response:
            return httpx.post(url, json=INITIALIZE, headers={**MCP_HEADERS, **headers}, timeout=20)

        assert post().status_code == 401
        refused = post(Authorization="Bearer wrong")
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer")
        assert "bearer token" in refused.json()["error"]
        for key in ("mcp-key-one", "mcp-key-two"):
            answered = post(Authorization=f"Bearer {key}")
            assert answered.status_code == 200, answered.text
            assert "webreach" in answered.text
    finally:
        process.terminate()
        process.wait(timeout=20)
    assert "mcp-key" not in log.read_text()


def _wait_for(log: Path, process: subprocess.Popen[bytes], needle: str) -> None:
    import time

    deadline = time.monotonic() + STARTUP_PATIENCE
    while needle not in log.read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"no {needle!r} in:\n{log.read_text()}")
        time.sleep(0.05)


def test_mcp_print_config_without_the_extra_names_it(tmp_path: Path) -> None:
    env = _without(tmp_path, ["mcp"], clean_env(WEBREACH_CONFIG=""))
    done = run_cli("mcp", "--print-config", env=env)
    assert done.returncode == 2
    assert done.stdout == ""
    line = _one_line(done)
    assert line.startswith("webreach: MISSING_EXTRA: `webreach mcp` needs the mcp extra")
    assert line.endswith(install_command("mcp"))


def test_mcp_print_config_with_the_extra_still_prints_json() -> None:
    done = run_cli("mcp", "--print-config", env=clean_env(WEBREACH_CONFIG=""))
    assert done.returncode == 0, done.stderr
    assert "mcpServers" in json.loads(done.stdout)


def test_a_huge_error_page_is_cut_quickly_and_no_key_survives_in_part() -> None:
    from webreach.server.core.upstream.failures import excerpt
    from webreach.server.core.upstream.secrets import Redactor

    key = "k-" + "x" * 60
    redactor = Redactor([key])
    page = "<html><body>" + "word " * 39 + key + " more" * 300_000 + "</body></html>"
    shown = excerpt(page, "text/html", redactor)
    assert shown.startswith("word word") and shown.endswith("…")
    assert len(shown) == 201
    assert "k-xxx" not in shown and "***" in shown
