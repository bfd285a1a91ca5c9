"""``webreach serve`` as a process: it fronts the upstream and guards its bind address."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from cli_helpers import clean_env, run_cli
from client_sockets import STARTUP_PATIENCE
from scripted_moderation import ScriptedModeration
from scripted_upstream import ScriptedUpstream, Step
from sdk_clients import openai_client


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_serving(env: dict[str, str], port: int) -> subprocess.Popen[str]:
    """``webreach serve`` on ``port``, once it accepts connections."""
    process = subprocess.Popen(
        [sys.executable, "-m", "webreach", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + STARTUP_PATIENCE
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return process
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    _, err = process.communicate(timeout=20)
    pytest.fail(f"webreach serve did not start: {err}")


@pytest.fixture
def served(upstream: ScriptedUpstream) -> Iterator[str]:
    port = free_port()
    env = clean_env(
        WEBREACH_UPSTREAM_BASE_URL=upstream.url,
        WEBREACH_UPSTREAM_API_KEY="upstream-secret",
        WEBREACH_SERVER_API_KEYS="inbound-one, inbound-two",
    )
    process = start_serving(env, port)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        _, err = process.communicate(timeout=20)
        assert "upstream-secret" not in err
        assert "inbound-one" not in err
        assert "WEBREACH_SIGNING_KEY is not set" in err


def test_serves_the_upstream_with_inbound_keys(upstream: ScriptedUpstream, served: str) -> None:
    client = openai_client(served, "inbound-two")
    reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == "Hello from the scripted upstream."
    with pytest.raises(openai.AuthenticationError):
        openai_client(served, "wrong").models.list()


def test_refuses_a_public_bind_without_inbound_keys(upstream: ScriptedUpstream) -> None:
    done = run_cli(
        "serve", "--host", "0.0.0.0", env=clean_env(WEBREACH_UPSTREAM_BASE_URL=upstream.url)
    )
    assert done.returncode == 2
    assert "WEBREACH_SERVER_API_KEYS" in done.stderr


def test_needs_an_upstream() -> None:
    done = run_cli("serve", env=clean_env())
    assert done.returncode == 2
    assert "WEBREACH_UPSTREAM_BASE_URL" in done.stderr


@pytest.mark.parametrize("form", ["text", "json"])
def test_a_configured_provider_without_its_key_is_a_warning_at_start(
    upstream: ScriptedUpstream, form: str
) -> None:
    """The start-up warnings are log lines in the log's format: JSON lines stay JSON."""
    port = free_port()
    env = clean_env(WEBREACH_UPSTREAM_BASE_URL=upstream.url, WEBREACH_SEARCH_PROVIDER="exa")
    process = subprocess.Popen(
        [sys.executable, "-m", "webreach", "serve", "--port", str(port), "--log-format", form],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + STARTUP_PATIENCE
        while time.monotonic() < deadline and process.poll() is None:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
    finally:
        process.terminate()
        _, err = process.communicate(timeout=20)
    warned = (
        "WEBREACH_SEARCH_PROVIDER=exa: exa is not configured; set EXA_API_KEY; "
        "every search will fail until then"
    )
    lines = [line for line in err.splitlines() if line.strip()]
    if form == "text":
        assert any(" WARNING " + warned in line for line in lines), err
        assert any("WEBREACH_SIGNING_KEY is not set" in line for line in lines)
        return
    records = [json.loads(line) for line in lines]  # every line is JSON
    messages = {r["message"]: r["level"] for r in records}
    assert messages[warned] == "warning"
    assert any("WEBREACH_SIGNING_KEY is not set" in m for m in messages)
    assert any(r["event"] == "listening" for r in records)


def test_an_unknown_provider_id_stops_it_before_it_serves(upstream: ScriptedUpstream) -> None:
    env = clean_env(WEBREACH_UPSTREAM_BASE_URL=upstream.url, WEBREACH_FETCH_PROVIDER="curl")
    done = run_cli("serve", "--port", str(free_port()), env=env)
    assert done.returncode == 2
    said = "WEBREACH_FETCH_PROVIDER=curl: there is no fetch provider 'curl'"
    assert f"{said} (valid: auto, browser, http)" in done.stderr


def test_the_moderation_and_continuation_settings_reach_the_server(
    upstream: ScriptedUpstream,
) -> None:
    """``safety_check`` reviews with the configured moderation endpoint; a deepseek upstream
    continues a reply with ``prefix``."""
    moderation = ScriptedModeration()
    port = free_port()
    with moderation.running() as moderation_url:
        env = clean_env(
            WEBREACH_UPSTREAM_BASE_URL=upstream.url,
            WEBREACH_UPSTREAM_DIALECT="deepseek",
            WEBREACH_MODERATION_BASE_URL=moderation_url,
            WEBREACH_MODERATION_API_KEY="moderation-secret",
            WEBREACH_MODERATION_MODEL="text-moderation-test",
        )
        process = start_serving(env, port)
        try:
            upstream.queue(Step(content=" and the leaves let go."))
            client = openai_client(f"http://127.0.0.1:{port}/beta")
            partial: Any = [
                {"role": "user", "content": "A poem about autumn."},
                {"role": "assistant", "content": "The autumn wind rises,", "prefix": True},
            ]
            reply = client.chat.completions.create(
                model="m", messages=partial, extra_body={"safety_check": {"level": "high"}}
            )
        finally:
            process.terminate()
            _, err = process.communicate(timeout=20)
    assert reply.choices[0].message.content == " and the leaves let go."
    assert upstream.requests[0]["messages"][-1]["prefix"] is True
    assert moderation.keys == ["Bearer moderation-secret"] * 2  # the input, then the answer
    assert moderation.requests[0]["model"] == "text-moderation-test"
    assert "moderation-secret" not in err


def test_help_names_what_it_needs_and_its_defaults() -> None:
    done = run_cli("serve", "--help", env=clean_env())
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "Needs WEBREACH_UPSTREAM_BASE_URL" in text
    assert "--host ADDRESS Address to bind [127.0.0.1]." in text
    assert "--port PORT Port to bind [8080]." in text
    assert "It searches with DuckDuckGo (no key) unless WEBREACH_SEARCH_PROVIDER" in text
    assert "WEBREACH_PLAYGROUND=false" in text


@pytest.mark.parametrize(("setting", "status"), [(None, 200), ("false", 404)])
def test_the_playground_is_at_the_root_on_loopback_unless_turned_off(
    upstream: ScriptedUpstream, setting: str | None, status: int
) -> None:
    import httpx

    port = free_port()
    extra = {"WEBREACH_PLAYGROUND": setting} if setting else {}
    env = clean_env(WEBREACH_UPSTREAM_BASE_URL=upstream.url, **extra)
    process = start_serving(env, port)
    try:
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=30)
    finally:
        process.terminate()
        _, err = process.communicate(timeout=20)
    assert page.status_code == status
    if status == 200:
        assert "webreach playground" in page.text
        assert "default-src 'none'" in page.headers["content-security-policy"]
    assert (f"playground at http://127.0.0.1:{port}/" in err) is (status == 200)
