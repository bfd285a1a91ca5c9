"""Hostile and malformed requests get a precise 4xx in the protocol's own error shape.

Never a 500, never a closed connection, never a request sent on to the upstream.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from client_sockets import STARTUP_PATIENCE
from scripted_upstream import ScriptedUpstream
from sdk_clients import openai_client
from server_harness import LiveServer
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

USER = [{"role": "user", "content": "hi"}]
PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "messages": "/v1/messages"}
VALID: dict[str, dict[str, Any]] = {
    "chat": {"model": "m", "messages": USER},
    "chat+web": {"model": "m", "messages": USER, "tools": [{"type": "deepseek_web_search"}]},
    "responses": {"model": "m", "input": "hi"},
    "messages": {"model": "m", "max_tokens": 16, "messages": USER},
}


def error_of(protocol: str, response: httpx.Response) -> str:
    """The message of a protocol-shaped error body (and proof that it has that shape)."""
    body = response.json()
    if protocol == "messages":
        assert body["type"] == "error"
        assert body["error"]["type"] in ("invalid_request_error", "request_too_large")
        return str(body["error"]["message"])
    assert body["error"]["type"] == "invalid_request_error"
    return str(body["error"]["message"])


def protocol_of(variant: str) -> str:
    return variant.split("+")[0]


RAW_BODIES = [
    pytest.param(b"[" * 100_000 + b"]" * 100_000, "nested too deeply", id="nested-100000"),
    pytest.param(b'{"a":' * 150 + b"1" + b"}" * 150, "nested too deeply", id="nested-150"),
    pytest.param(b'{"model": "m", "x": "\\ud800"}', "unpaired UTF-16 surrogate", id="lone-high"),
    pytest.param(b'{"model": "m", "x": "a\\udc00b"}', "unpaired UTF-16 surrogate", id="lone-low"),
    pytest.param(b'{"model": "m", "\\udfff": 1}', "unpaired UTF-16 surrogate", id="lone-in-key"),
    pytest.param(b'{"model": "m", "temperature": NaN}', "NaN is not valid JSON", id="nan"),
    pytest.param(b'{"model": "m", "top_p": -Infinity}', "Infinity is not valid JSON", id="inf"),
    pytest.param(b'{"model": "m", "top_p": 1e999}', "out of range", id="overflow"),
    pytest.param(b'{"model": "m", "n": 1' + b"0" * 5000 + b"}", "not valid JSON", id="huge-int"),
    pytest.param(b'{"model": "m"', "not valid JSON", id="truncated"),
    pytest.param(b"\xff\xfe{}", "not valid JSON", id="not-utf8"),
    pytest.param(b"[1, 2]", "must be a JSON object", id="array"),
    pytest.param(b"", "not valid JSON", id="empty"),
]


@pytest.fixture(scope="module")
def shared() -> Iterator[tuple[str, ScriptedUpstream]]:
    """One server for the module: these requests must never change its state."""
    with ScriptedUpstream() as upstream:
        config = ServerSettings(upstream_base_url=upstream.url, server_max_body_bytes=1 << 20)
        with LiveServer(create_app(config, WebRuntime(), ToolOptions())) as server:
            yield server.url, upstream


@pytest.fixture
def upstream(shared: tuple[str, ScriptedUpstream]) -> ScriptedUpstream:
    shared[1].requests.clear()
    return shared[1]


@pytest.fixture
def live(shared: tuple[str, ScriptedUpstream], upstream: ScriptedUpstream) -> str:
    return shared[0]


@pytest.mark.parametrize("variant", ["chat", "chat+web", "responses", "messages"])
@pytest.mark.parametrize(("raw", "expected"), RAW_BODIES)
def test_bodies_that_are_not_plain_json_objects_are_400(
    live: str, upstream: ScriptedUpstream, variant: str, raw: bytes, expected: str
) -> None:
    response = httpx.post(
        live + PATHS[protocol_of(variant)],
        content=raw,
        headers={"content-type": "application/json"},
        timeout=30,
    )
    assert response.status_code == 400, response.text
    assert expected in error_of(protocol_of(variant), response)
    assert upstream.requests == []


WRONG_FIELDS = [
    ({"stream": "yes"}, "stream: must be a boolean"),
    ({"stream": 1}, "stream: must be a boolean"),
    ({"temperature": "hot"}, "temperature: must be a number"),
    ({"top_p": [1]}, "top_p: must be a number"),
    ({"tools": {"type": "function"}}, "tools: must be an array"),
    ({"tool_choice": 3}, "tool_choice: must be a string or an object"),
    ({"parallel_tool_calls": "no"}, "parallel_tool_calls: must be a boolean"),
    ({"model": ""}, "model: must be a non-empty string"),
    ({"model": 7}, "model: must be a non-empty string"),
    ({"model": None}, "model: Field required"),
]
LIMITS = {"chat": "max_tokens", "responses": "max_output_tokens", "messages": "max_tokens"}


# Messages words these as Anthropic's API does, and has no ``parallel_tool_calls``.
MESSAGES_WORDING = {
    "tools: must be an array": "tools: must be a list",
    "tool_choice: must be a string or an object": "tool_choice: must be an object",
}


def cases() -> Iterator[Any]:
    for variant in ("chat", "chat+web", "responses", "messages"):
        limit = LIMITS[protocol_of(variant)]
        wrong = WRONG_FIELDS
        if variant == "messages":
            wrong = [
                (change, MESSAGES_WORDING.get(message, message))
                for change, message in WRONG_FIELDS
                if "parallel_tool_calls" not in change
            ]
        for change, message in [
            *wrong,
            ({limit: -5}, f"{limit}: must be a positive integer"),
            ({limit: 2.5}, f"{limit}: must be a positive integer"),
            ({limit: True}, f"{limit}: must be a positive integer"),
        ]:
            yield pytest.param(variant, change, message, id=f"{variant}-{json.dumps(change)}")
    for change, message in [
        ({"n": 0}, "n: must be a positive integer"),
        ({"stop": [1]}, "stop: must be a string or an array of strings"),
        ({"messages": []}, "messages: a non-empty array of messages is required"),
        ({"messages": "hi"}, "messages: a non-empty array of messages is required"),
    ]:
        for variant in ("chat", "chat+web"):
            yield pytest.param(variant, change, message, id=f"{variant}-{json.dumps(change)}")
    yield pytest.param("responses", {"store": "no"}, "store: must be a boolean", id="store")


@pytest.mark.parametrize(("variant", "change", "message"), list(cases()))
def test_mistyped_fields_are_400_in_every_protocol(
    live: str, upstream: ScriptedUpstream, variant: str, change: dict[str, Any], message: str
) -> None:
    body = {**VALID[variant], **change}
    if body.get("model") is None:
        body.pop("model", None)
    response = httpx.post(live + PATHS[protocol_of(variant)], json=body, timeout=30)
    assert response.status_code == 400, response.text
    assert error_of(protocol_of(variant), response) == message
    assert upstream.requests == []


def test_responses_without_a_model_is_400_for_the_sdk(live: str) -> None:
    client = openai_client(live + "/v1")
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(input="hi")  # type: ignore[call-overload]
    assert "model: Field required" in str(caught.value)


def test_a_stream_field_that_is_not_true_starts_no_stream(
    live: str, upstream: ScriptedUpstream
) -> None:
    reply = httpx.post(live + PATHS["chat"], json={**VALID["chat"], "stream": False}, timeout=30)
    assert reply.headers["content-type"].startswith("application/json")
    response = httpx.post(live + PATHS["chat"], json={**VALID["chat"], "stream": "yes"})
    assert response.status_code == 400
    assert len(upstream.requests) == 1


@pytest.mark.parametrize("protocol", ["chat", "responses", "messages"])
def test_a_body_over_the_limit_is_413_declared_or_chunked(
    live: str, upstream: ScriptedUpstream, protocol: str
) -> None:
    big = {**VALID[protocol], "padding": "x" * (2 << 20)}
    declared = httpx.post(live + PATHS[protocol], json=big, timeout=30)
    assert declared.status_code == 413
    assert "WEBREACH_SERVER_MAX_BODY_BYTES" in error_of(protocol, declared)

    def chunks() -> Iterator[bytes]:
        payload = json.dumps(big).encode()
        for start in range(0, len(payload), 65536):
            yield payload[start : start + 65536]

    chunked = httpx.post(live + PATHS[protocol], content=chunks(), timeout=30)
    assert chunked.status_code == 413
    assert upstream.requests == []


def test_the_sdks_see_413_as_an_error_they_can_name(live: str) -> None:
    with (
        openai.OpenAI(base_url=live + "/v1", api_key="k", max_retries=0) as client,
        pytest.raises(openai.APIStatusError) as caught,
    ):
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x" * (2 << 20)}]
        )
    assert caught.value.status_code == 413
    with (
        anthropic.Anthropic(base_url=live, api_key="k", max_retries=0) as claude,
        pytest.raises(anthropic.APIStatusError) as refused,
    ):
        claude.messages.create(
            model="m", max_tokens=8, messages=[{"role": "user", "content": "x" * (2 << 20)}]
        )
    assert refused.value.status_code == 413
    assert refused.value.body["error"]["type"] == "request_too_large"  # type: ignore[index]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_a_64_mib_body_is_refused_without_being_read(upstream: ScriptedUpstream) -> None:
    """``webreach serve`` as run: the refusal comes before the body, so memory stays flat."""
    port = _free_port()
    env = {
        **os.environ,
        "WEBREACH_UPSTREAM_BASE_URL": upstream.url,
        "WEBREACH_SIGNING_KEY": "k" * 32,
    }
    with subprocess.Popen(
        [sys.executable, "-m", "webreach", "serve", "--port", str(port)],
        env=env,
        stderr=subprocess.PIPE,
    ) as server:  # leaving it closes the stderr pipe
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + STARTUP_PATIENCE
            while True:
                try:
                    httpx.get(base + "/healthz", timeout=1)
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline and server.poll() is None
                    time.sleep(0.05)
            before = _peak_rss_kib(server.pid)
            body = b'{"model": "m", "messages": [], "padding": "' + b"x" * (64 << 20) + b'"}'
            response = httpx.post(base + PATHS["chat"], content=body, timeout=60)
            assert response.status_code == 413
            assert _peak_rss_kib(server.pid) - before < 100 * 1024
            assert upstream.requests == []
        finally:
            server.terminate()
            server.wait(10)
