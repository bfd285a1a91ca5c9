"""An upstream that fails: the client learns it the protocol's way, with what it can act on.

Before anything was sent, an HTTP error (502/504, or the upstream's own 4xx/429 with its
``Retry-After``); after a stream started, the protocol's in-stream error. The server's own
upstream key never reaches a client.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from server_harness import LiveServer
from web_requests import BODIES, PATHS, USER, VARIANTS, path_of
from webreach.config import ConfigError, load_settings
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

KEY = "sk-upstream-secret-4242"


def message_of(response: httpx.Response) -> str:
    body = response.json()
    return str(body["error"]["message"])


@pytest.fixture
def server_config(upstream: ScriptedUpstream) -> ServerSettings:
    return ServerSettings(
        upstream_base_url=upstream.url,
        upstream_api_key=KEY,
        signing_key="k" * 32,
        upstream_timeout=1.0,
    )


@pytest.fixture
def server_keepalive() -> float:
    return 5.0  # longer than the upstream timeout: nothing is sent before it


@pytest.fixture
def live(webreach_url: str) -> str:
    return webreach_url.removesuffix("/v1")


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("stream", [False, True])
def test_a_rate_limited_upstream_passes_on_its_status_and_retry_after(
    live: str, upstream: ScriptedUpstream, variant: str, stream: bool
) -> None:
    upstream.queue(Step(status=429, error="slow down", headers={"Retry-After": "7"}))
    response = httpx.post(live + path_of(variant), json={**BODIES[variant], "stream": stream})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"
    assert "slow down" in response.text


def test_the_sdks_read_the_retry_after(live: str, upstream: ScriptedUpstream) -> None:
    upstream.queue(Step(status=503, error="overloaded", headers={"Retry-After": "3"}))
    client = openai_client(live + "/v1")
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert caught.value.status_code == 503
    assert caught.value.response.headers["retry-after"] == "3"


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("status", [401, 403])
def test_an_upstream_refusing_the_servers_key_is_502_without_the_key(
    live: str, upstream: ScriptedUpstream, variant: str, status: int
) -> None:
    upstream.queue(Step(status=status, error=f"Incorrect API key provided: {KEY}"))
    response = httpx.post(live + path_of(variant), json=BODIES[variant])
    assert response.status_code == 502
    assert "rejected the server's credentials" in message_of(response)
    assert KEY not in response.text


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_key_is_redacted_from_any_relayed_upstream_message(
    live: str, upstream: ScriptedUpstream, variant: str
) -> None:
    upstream.queue(Step(status=400, error=f"bad request from key {KEY}"))
    response = httpx.post(live + path_of(variant), json=BODIES[variant])
    assert response.status_code == 400
    assert "bad request from key ***" in response.text
    assert KEY not in response.text


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("status", "expected"), [(500, 502), (501, 502), (502, 502), (504, 504)])
def test_an_upstreams_own_failure_is_a_gateway_error_never_the_servers_500(
    live: str, upstream: ScriptedUpstream, variant: str, status: int, expected: int
) -> None:
    """A 5xx is the upstream's failure: 502 (504 for its timeout), with its message, so no
    client reads it as webreach's own crash; the SDKs raise their gateway errors."""
    upstream.queue(Step(status=status, error="the model server crashed"))
    response = httpx.post(live + path_of(variant), json=BODIES[variant])
    assert response.status_code == expected
    assert "the model server crashed" in message_of(response)
    if variant == "messages":
        upstream.queue(Step(status=status, error="the model server crashed"))
        claude = anthropic_client(live)
        with pytest.raises(anthropic.APIStatusError) as caught:
            claude.messages.create(**BODIES["messages"])
        assert caught.value.status_code == expected
        assert caught.value.body["type"] == "error"  # type: ignore[index]


@pytest.mark.parametrize("variant", VARIANTS)
def test_an_upstream_408_is_a_504(live: str, upstream: ScriptedUpstream, variant: str) -> None:
    upstream.queue(Step(status=408, error="request timeout"))
    response = httpx.post(live + path_of(variant), json=BODIES[variant])
    assert response.status_code == 504


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"<html><body>Bad gateway</body></html>", "that is not JSON"),
        (b'{"choices": [], "usage": {"prompt_tokens": NaN}}', "that is not JSON"),
        (b'{"id": "x", "choices": [', "that is not JSON"),
        (b"[1, 2, 3]", "that is not a JSON object"),
        (b'{"error": {"message": "quota exhausted"}}', "upstream error: quota exhausted"),
    ],
)
def test_a_relayed_200_that_is_not_a_json_answer_is_a_502_as_in_the_loop(
    live: str, upstream: ScriptedUpstream, body: bytes, said: str
) -> None:
    """The label says JSON, the body is not (or is an error): the client gets the upstream's
    failure in the protocol's shape, never a 200 its SDK cannot read."""
    upstream.queue(Step(raw_body=body, headers={"content-type": "application/json"}))
    response = httpx.post(live + PATHS["chat"], json=BODIES["relay"])
    assert response.status_code == 502
    assert said in message_of(response)
    upstream.queue(Step(raw_body=body, headers={"content-type": "application/json"}))
    client = openai_client(live + "/v1")
    with pytest.raises(openai.InternalServerError, match=said):
        client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]


@pytest.mark.parametrize("variant", VARIANTS)
def test_an_upstream_that_never_answers_is_504_after_the_timeout(
    live: str, upstream: ScriptedUpstream, variant: str
) -> None:
    upstream.queue(Step(hang=True))
    response = httpx.post(live + path_of(variant), json=BODIES[variant], timeout=30)
    assert response.status_code == 504
    assert "did not answer in time" in message_of(response)


@pytest.mark.parametrize("variant", ["chat", "responses", "messages"])
def test_a_body_cut_midway_before_anything_was_sent_is_a_502_the_sdks_raise(
    live: str, upstream: ScriptedUpstream, variant: str
) -> None:
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["q"]})]), Step(content="x", break_after=2)
    )
    response = httpx.post(live + path_of(variant), json=BODIES[variant], timeout=30)
    assert response.status_code == 502
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["q"]})]), Step(content="x", break_after=2)
    )
    if variant == "messages":
        claude = anthropic_client(live)
        with pytest.raises(anthropic.InternalServerError):
            claude.messages.create(**BODIES["messages"])
        return
    client = openai_client(live + "/v1")
    create = client.chat.completions.create if variant == "chat" else client.responses.create
    with pytest.raises(openai.InternalServerError):
        create(**BODIES[variant])


def test_a_relayed_json_body_cut_midway_is_502(live: str, upstream: ScriptedUpstream) -> None:
    upstream.queue(Step(content="a long answer", break_after=1))
    response = httpx.post(live + PATHS["chat"], json=BODIES["relay"], timeout=30)
    assert response.status_code == 502
    assert "cut" in message_of(response)


def sse_payloads(response: httpx.Response) -> Iterator[Any]:
    for line in response.iter_lines():
        if line.startswith("data: "):
            data = line[6:]
            yield data if data == "[DONE]" else json.loads(data)


def test_a_relayed_stream_cut_midway_ends_the_chat_way(
    live: str, upstream: ScriptedUpstream
) -> None:
    upstream.queue(Step(content=["one ", "two ", "three"], break_after=2, pace=0.05))
    with httpx.stream(
        "POST", live + PATHS["chat"], json={**BODIES["relay"], "stream": True}, timeout=30
    ) as response:
        assert response.status_code == 200
        payloads = list(sse_payloads(response))
    assert [p["choices"][0]["delta"].get("content") for p in payloads[:-1]] == ["", "one "]
    assert payloads[-1]["choices"] == []
    assert payloads[-1]["model"] == "m"  # a chunk still: every field a chunk must have
    assert payloads[-1]["error"]["type"] == "api_error"
    assert "[DONE]" not in payloads

    upstream.queue(Step(content=["one ", "two ", "three"], break_after=2))
    client = openai_client(live + "/v1")
    with pytest.raises(openai.APIError, match="ended the stream before it was complete"):
        for _ in client.chat.completions.create(model="m", messages=USER, stream=True):  # type: ignore[call-overload]
            pass


def test_a_relayed_stream_is_passed_on_whole_events(live: str, upstream: ScriptedUpstream) -> None:
    upstream.queue(Step(content=["a", "b", "c"]))
    with httpx.stream(
        "POST", live + PATHS["chat"], json={**BODIES["relay"], "stream": True}, timeout=30
    ) as response:
        raw = b"".join(response.iter_raw())
    assert raw.endswith(b"data: [DONE]\n\n")
    events = [event for event in raw.split(b"\n\n") if event]
    assert [event for event in events if not event.startswith(b"data: ")] == []
    assert sum(event.startswith(b"data: ") for event in events) >= 4


def test_credentials_in_the_upstream_url_are_refused_at_start_without_echoing_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WEBREACH_UPSTREAM_BASE_URL", "https://bob:hunter2@models.example/v1")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "WEBREACH_UPSTREAM_BASE_URL" in str(caught.value)
    assert "hunter2" not in str(caught.value)
    with pytest.raises(ValueError, match="must not contain credentials") as refused:
        create_app(
            ServerSettings(upstream_base_url="https://bob:hunter2@models.example/v1"),
            WebRuntime(),
            ToolOptions(),
        )
    assert "hunter2" not in str(refused.value)


def test_the_upstream_timeouts_are_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (load_settings().upstream_timeout, load_settings().upstream_connect_timeout) == (
        600.0,
        10.0,
    )
    monkeypatch.setenv("WEBREACH_UPSTREAM_TIMEOUT", "42")
    monkeypatch.setenv("WEBREACH_UPSTREAM_CONNECT_TIMEOUT", "3")
    monkeypatch.setenv("WEBREACH_SERVER_MAX_BODY_BYTES", "1000")
    settings = load_settings()
    assert (settings.upstream_timeout, settings.upstream_connect_timeout) == (42.0, 3.0)
    assert settings.server_max_body_bytes == 1000
    monkeypatch.setenv("WEBREACH_UPSTREAM_TIMEOUT", "0")
    with pytest.raises(ConfigError, match="WEBREACH_UPSTREAM_TIMEOUT"):
        load_settings()


def test_an_unreachable_upstream_with_a_short_connect_timeout(live: str) -> None:
    runtime = WebRuntime()
    config = ServerSettings(upstream_base_url="http://127.0.0.1:9/v1", upstream_connect_timeout=1)
    with LiveServer(create_app(config, runtime, ToolOptions())) as server:
        for variant in VARIANTS:
            response = httpx.post(server.url + path_of(variant), json=BODIES[variant])
            assert response.status_code == 502
            assert message_of(response).startswith("upstream unreachable")


def test_a_long_answer_is_preceded_by_newlines_and_a_late_failure_is_the_error_body(
    upstream: ScriptedUpstream,
) -> None:
    """Past the keep-alive interval a non-streamed answer sends newlines (valid leading JSON
    whitespace) so proxies keep the connection; the status is then sent, so a failure after
    that is the protocol's error body, as DeepSeek's API does."""
    config = ServerSettings(upstream_base_url=upstream.url, upstream_timeout=1.0)
    app = create_app(config, WebRuntime(), ToolOptions(), keepalive_seconds=0.2)
    with LiveServer(app) as server:
        for check in ("raw", "sdk"):
            gate = threading.Event()
            upstream.queue(Step(content="Late but fine.", hold=gate))
            threading.Timer(0.7, gate.set).start()
            if check == "raw":
                response = httpx.post(server.url + PATHS["chat"], json=BODIES["chat"], timeout=30)
                assert response.status_code == 200
                assert response.content.startswith(b"\n")
                assert response.json()["choices"][0]["message"]["content"] == "Late but fine."
            else:
                client = openai_client(server.url + "/v1")
                reply = client.chat.completions.create(**BODIES["chat"])
                assert reply.choices[0].message.content == "Late but fine."

        upstream.queue(Step(hang=True))
        late = httpx.post(server.url + PATHS["responses"], json=BODIES["responses"], timeout=30)
        assert late.status_code == 200
        assert late.content.startswith(b"\n")
        assert "did not answer in time" in late.json()["error"]["message"]
