"""An upstream that answers 200 with something hostile or broken.

An error inside a stream that quotes the server's secrets, a body that is not an event stream
(a whole JSON completion, invalid JSON, an HTML page, a line cut mid-frame), chunks with the
wrong types, a stream that ends unfinished: a client sees the protocol's error naming the
upstream (HTTP 502 before anything was sent, the stream's error event after), or the answer
when there was one; never a secret, never a silent empty answer, never a 500. Every protocol,
streamed and not, the relay (no web tools) and the loop (a web tool).
"""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from cli_helpers import clean_env
from client_sockets import STARTUP_PATIENCE
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from web_requests import BODIES, LOOPS, VARIANTS, path_of
from webreach.server.app import ServerSettings

KEY = "sk-hostile-upstream-4242"
MODERATION_KEY = "mod-secret-9191"
INBOUND = "inbound-secret-5353"
SIGNING = "signing-secret-7171-of-32-bytes-or-more"
SECRETS = (KEY, MODERATION_KEY, INBOUND, SIGNING)
AUTH = {"Authorization": f"Bearer {INBOUND}"}
SSE = {"content-type": "text/event-stream"}
LEAK = f"Incorrect API key provided: {KEY}; moderation {MODERATION_KEY}; {INBOUND} {SIGNING}"


def chunk(delta: dict[str, Any] | None = None, **extra: Any) -> bytes:
    choice = {"index": 0, "delta": delta or {}, "finish_reason": None}
    body = {"id": "c1", "object": "chat.completion.chunk", "choices": [choice], **extra}
    return f"data: {json.dumps(body)}\n\n".encode()


def raw_chunk(body: Any) -> bytes:
    return f"data: {json.dumps(body)}\n\n".encode()


ERROR_MID_STREAM = chunk({"content": "Hel"}) + raw_chunk({"error": {"message": LEAK}})
UNTERMINATED = chunk({"content": "Hel"}) + b'data: {"choices": [{"delta": {"content": "lo'
UNFINISHED = chunk({"role": "assistant", "content": ""}) + chunk({"content": "Hel"})
COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "A whole answer."},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
}
WRONG_TYPES = {
    "index as a list": chunk(
        {"tool_calls": [{"index": [0], "id": "c", "function": {"name": "x", "arguments": ""}}]}
    ),
    "name as an int": chunk(
        {"tool_calls": [{"index": 0, "id": "c", "function": {"name": 7, "arguments": ""}}]}
    ),
    "a string in choices": raw_chunk({"id": "c1", "choices": ["stop"]}),
    "content as an int": chunk({"content": 42}),
    "usage as a string": raw_chunk({"id": "c1", "choices": [], "usage": "many"}),
}


@pytest.fixture
def server_config(upstream: ScriptedUpstream) -> ServerSettings:
    return ServerSettings(
        upstream_base_url=upstream.url,
        upstream_api_key=KEY,
        moderation_api_key=MODERATION_KEY,
        server_api_keys=INBOUND,
        signing_key=SIGNING,
        upstream_timeout=5.0,
    )


@pytest.fixture
def server_keepalive() -> float:
    return 5.0


@pytest.fixture
def live(webreach_url: str) -> str:
    return webreach_url.removesuffix("/v1")


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every log record of the test, checked at its end for any secret."""
    caplog.set_level(logging.DEBUG)
    yield caplog
    for record in caplog.records:
        if not record.name.startswith(("webreach", "uvicorn")):
            continue  # the test's own clients, which send the inbound key
        text = f"{record.getMessage()} {record.__dict__!r}"
        for secret in SECRETS:
            assert secret not in text, f"a secret in the log: {text}"


def post(live: str, variant: str, stream: bool) -> httpx.Response:
    body = {**BODIES[variant], "stream": stream}
    return httpx.post(live + path_of(variant), json=body, headers=AUTH, timeout=30)


def no_secret(response: httpx.Response) -> None:
    for secret in SECRETS:
        assert secret.encode() not in response.content


def hostile(upstream: ScriptedUpstream, variant: str, step: Step, *, later: bool) -> None:
    """``step`` answers the first call, or (``later``) the call after a web search."""
    if later and variant != "relay":
        upstream.queue(Step(calls=[Call("web_search", {"queries": ["q"]})]))
    upstream.queue(step)


def stream_error(variant: str, response: httpx.Response) -> str:
    """The message of the protocol's in-stream error, which must end the stream."""
    events = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
    assert events, response.text
    assert events[-1] != "[DONE]"
    last = json.loads(events[-1])
    if variant == "responses":
        assert last["type"] == "response.failed"
        return str(last["response"]["error"]["message"])
    if variant == "messages":
        assert last["type"] == "error"
        return str(last["error"]["message"])
    assert last["choices"] == []
    return str(last["error"]["message"])


def http_error(response: httpx.Response, status: int = 502) -> str:
    assert response.status_code == status, response.text
    return str(response.json()["error"]["message"])


# --- point 2: an upstream's error inside a stream never carries a secret onwards -------------


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("stream", [True, False])
def test_an_error_inside_the_stream_reaches_the_client_without_any_secret(
    live: str,
    upstream: ScriptedUpstream,
    logs: pytest.LogCaptureFixture,
    variant: str,
    stream: bool,
) -> None:
    upstream.queue(Step(raw_body=ERROR_MID_STREAM, headers=SSE))
    response = post(live, variant, stream)
    no_secret(response)
    if variant == "relay" and not stream:
        assert "not JSON" in http_error(response)
        return
    if variant == "relay":
        assert response.status_code == 200
        assert "Incorrect API key provided: ***; moderation ***; *** ***" in response.text
    elif stream:
        assert response.status_code == 200
        assert stream_error(variant, response) == (
            "upstream error: Incorrect API key provided: ***; moderation ***; *** ***"
        )
    else:
        assert http_error(response).startswith("upstream error: Incorrect API key provided: ***")
    assert any("upstream failed: upstream error" in r.getMessage() for r in logs.records)


@pytest.mark.parametrize(
    "event",
    [
        b"event: error\ndata: " + json.dumps({"error": {"message": LEAK}}).encode() + b"\n\n",
        b"event: error\ndata: " + LEAK.encode() + b"\n\n",
        raw_chunk({"error": LEAK + " " + "x" * 5000}),
    ],
    ids=["event-json", "event-text", "long-string"],
)
def test_an_error_event_in_any_shape_is_redacted_and_bounded(
    live: str, upstream: ScriptedUpstream, logs: pytest.LogCaptureFixture, event: bytes
) -> None:
    upstream.queue(Step(raw_body=chunk({"content": "Hel"}) + event, headers=SSE))
    response = post(live, "chat", False)
    no_secret(response)
    message = http_error(response)
    assert message.startswith("upstream error: Incorrect API key provided: ***; moderation ***")
    assert len(message) <= 1000


@pytest.mark.parametrize("variant", LOOPS)
def test_an_error_after_a_search_is_the_streams_error_without_any_secret(
    live: str, upstream: ScriptedUpstream, logs: pytest.LogCaptureFixture, variant: str
) -> None:
    hostile(upstream, variant, Step(raw_body=ERROR_MID_STREAM, headers=SSE), later=True)
    response = post(live, variant, True)
    no_secret(response)
    assert "Incorrect API key provided: ***" in stream_error(variant, response)


def test_a_secret_in_a_200_body_or_an_error_status_is_hidden(
    live: str, upstream: ScriptedUpstream, logs: pytest.LogCaptureFixture
) -> None:
    leaky = {**COMPLETION, "system_fingerprint": f"fp {KEY}"}
    upstream.queue(Step(raw_body=json.dumps(leaky).encode()))
    response = post(live, "relay", False)
    assert response.status_code == 200
    no_secret(response)
    assert response.json()["system_fingerprint"] == "fp ***"
    for variant in VARIANTS:
        upstream.queue(Step(status=400, error=LEAK))
        refused = post(live, variant, False)
        assert refused.status_code == 400
        no_secret(refused)


def test_the_sdks_raise_the_redacted_upstream_error(
    live: str, upstream: ScriptedUpstream, logs: pytest.LogCaptureFixture
) -> None:
    client = openai_client(live + "/v1", INBOUND)
    for variant in ("relay", "chat"):
        upstream.queue(Step(raw_body=ERROR_MID_STREAM, headers=SSE))
        with pytest.raises(openai.APIError) as caught:
            for _ in client.chat.completions.create(**BODIES[variant], stream=True):
                pass
        assert KEY not in str(caught.value) and "***" in str(caught.value)
    upstream.queue(Step(raw_body=ERROR_MID_STREAM, headers=SSE))
    events = list(client.responses.create(**BODIES["responses"], stream=True))
    assert events[-1].type == "response.failed"
    assert events[-1].response.error is not None
    assert events[-1].response.error.message.endswith(
        "Incorrect API key provided: ***; moderation ***; *** ***"
    )
    claude = anthropic_client(live, INBOUND)
    upstream.queue(Step(raw_body=ERROR_MID_STREAM, headers=SSE))
    with pytest.raises(anthropic.APIError) as refused:
        claude.messages.create(**BODIES["messages"])
    assert KEY not in str(refused.value) and "***" in str(refused.value)


# --- point 5: a 200 that is not an event stream --------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("stream", [True, False])
def test_a_whole_json_completion_is_the_answer(
    live: str, upstream: ScriptedUpstream, variant: str, stream: bool
) -> None:
    upstream.queue(Step(raw_body=json.dumps(COMPLETION).encode()))
    if variant == "messages":
        claude = anthropic_client(live, INBOUND)
        if stream:
            with claude.messages.stream(**BODIES["messages"]) as events:
                message = events.get_final_message()
        else:
            message = claude.messages.create(**BODIES["messages"])
        assert [block.text for block in message.content if block.type == "text"] == [
            "A whole answer."
        ]
        assert (message.usage.input_tokens, message.usage.output_tokens) == (7, 3)
        assert message.stop_reason == "end_turn"
        return
    client = openai_client(live + "/v1", INBOUND)
    if variant == "responses":
        if stream:
            with client.responses.stream(**BODIES["responses"]) as events:
                response = events.get_final_response()
        else:
            response = client.responses.create(**BODIES["responses"])
        assert response.output_text == "A whole answer."
        assert response.usage is not None and response.usage.output_tokens == 3
        return
    if stream:
        parts = list(client.chat.completions.create(**BODIES[variant], stream=True))
        text = "".join(p.choices[0].delta.content or "" for p in parts if p.choices)
        assert text == "A whole answer."
        assert [p.choices[0].finish_reason for p in parts if p.choices][-1] == "stop"
        assert parts[-1].usage is not None and parts[-1].usage.completion_tokens == 3
        return
    reply = client.chat.completions.create(**BODIES[variant])
    assert reply.choices[0].message.content == "A whole answer."
    assert reply.usage is not None and reply.usage.completion_tokens == 3


def test_a_whole_json_completion_with_tool_calls_runs_the_search(
    live: str, upstream: ScriptedUpstream
) -> None:
    called = {
        **COMPLETION,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {
                                "name": "web_search",
                                "arguments": json.dumps({"queries": ["iceland"]}),
                            },
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    upstream.queue(Step(raw_body=json.dumps(called).encode()), Step(content="Found it【1】."))
    response = post(live, "chat", False)
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"].startswith("Found it")
    assert len(upstream.requests) == 2

    # Relayed to a client that asked for a stream: the same call, as the chunks of a stream.
    upstream.queue(Step(raw_body=json.dumps(called).encode()))
    client = openai_client(live + "/v1", INBOUND)
    lookup = {"type": "function", "function": {"name": "lookup", "parameters": {}}}
    parts = list(client.chat.completions.create(**BODIES["relay"], tools=[lookup], stream=True))
    calls = [c for p in parts if p.choices for c in p.choices[0].delta.tool_calls or ()]
    assert [(c.index, c.id, c.function and c.function.name) for c in calls] == [
        (0, "call_1", "web_search")
    ]
    assert [p.choices[0].finish_reason for p in parts if p.choices][-1] == "tool_calls"


NOT_A_STREAM = {
    "html": (b"<html><body>502 Bad Gateway</body></html>", "text/html", "text/html"),
    "invalid json": (b'{"choices": [', "application/json", "not a completion"),
    "json without choices": (b'{"hello": "world"}', "application/json", "no choices"),
    "plain text": (b"model overloaded", "text/plain", "text/plain"),
}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("case", list(NOT_A_STREAM))
def test_a_200_that_is_neither_a_stream_nor_a_completion_is_a_502(
    live: str,
    upstream: ScriptedUpstream,
    logs: pytest.LogCaptureFixture,
    variant: str,
    stream: bool,
    case: str,
) -> None:
    body, kind, said = NOT_A_STREAM[case]
    upstream.queue(Step(raw_body=body, headers={"content-type": kind}))
    response = post(live, variant, stream)
    if variant == "relay" and kind == "application/json" and not stream:
        if case == "json without choices":
            # A JSON object that is not an error goes as it came: the relay does not judge it.
            assert (response.status_code, response.content) == (200, body)
            return
        said = "that is not JSON"
    message = http_error(response)
    assert message.startswith("upstream answered 200 with ")
    assert said in message
    warnings = [r.getMessage() for r in logs.records if r.levelno == logging.WARNING]
    assert any(w.startswith("upstream failed: upstream answered 200") for w in warnings)
    assert any("127.0.0.1:" in w for w in warnings)  # the operator's line names the upstream


@pytest.mark.parametrize("variant", LOOPS)
def test_an_html_page_after_a_search_is_the_streams_error(
    live: str, upstream: ScriptedUpstream, variant: str
) -> None:
    page = Step(raw_body=b"<html>oops</html>", headers={"content-type": "text/html"})
    hostile(upstream, variant, page, later=True)
    message = stream_error(variant, post(live, variant, True))
    assert message == "upstream answered 200 with text/html, not an event stream"


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("body", [UNTERMINATED, UNFINISHED], ids=["mid-frame", "no-finish"])
def test_a_stream_that_ends_unfinished_is_truncated_not_complete(
    live: str,
    upstream: ScriptedUpstream,
    logs: pytest.LogCaptureFixture,
    variant: str,
    stream: bool,
    body: bytes,
) -> None:
    upstream.queue(Step(raw_body=body, headers=SSE))
    response = post(live, variant, stream)
    if variant == "relay" and not stream:
        assert "not JSON" in http_error(response)
        return
    message = stream_error(variant, response) if stream else http_error(response)
    assert "before" in message and "complete" in message
    assert any(
        r.getMessage().startswith("upstream failed:") and "complete" in r.getMessage()
        for r in logs.records
    )


def test_the_sdks_raise_on_a_truncated_stream(live: str, upstream: ScriptedUpstream) -> None:
    client = openai_client(live + "/v1", INBOUND)
    for variant in ("relay", "chat"):
        upstream.queue(Step(raw_body=UNFINISHED, headers=SSE))
        with pytest.raises(openai.APIError, match="complete"):
            for _ in client.chat.completions.create(**BODIES[variant], stream=True):
                pass
    upstream.queue(Step(raw_body=UNTERMINATED, headers=SSE))
    with pytest.raises(openai.InternalServerError):
        client.responses.create(**BODIES["responses"])
    claude = anthropic_client(live, INBOUND)
    upstream.queue(Step(raw_body=UNFINISHED, headers=SSE))
    with (
        pytest.raises(anthropic.APIError, match="complete"),
        claude.messages.stream(**BODIES["messages"]) as events,
    ):
        events.get_final_message()


def test_a_stream_with_done_but_no_finish_reason_is_complete(
    live: str, upstream: ScriptedUpstream
) -> None:
    upstream.queue(Step(raw_body=UNFINISHED + b"data: [DONE]\n\n", headers=SSE))
    response = post(live, "chat", False)
    assert response.json()["choices"][0]["message"]["content"] == "Hel"


# --- point 6: wrong-typed chunks ------------------------------------------------------------


@pytest.mark.parametrize("variant", LOOPS)
@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("case", list(WRONG_TYPES))
def test_a_wrong_typed_chunk_is_a_502_naming_the_upstream_not_a_500(
    live: str,
    upstream: ScriptedUpstream,
    logs: pytest.LogCaptureFixture,
    variant: str,
    stream: bool,
    case: str,
) -> None:
    good = chunk({"role": "assistant", "content": ""})
    upstream.queue(Step(raw_body=good + WRONG_TYPES[case] + b"data: [DONE]\n\n", headers=SSE))
    response = post(live, variant, stream)
    message = stream_error(variant, response) if stream else http_error(response)
    assert message.startswith("upstream sent a malformed chunk (")
    assert not any(r.exc_info for r in logs.records), "a traceback was logged"
    assert any("malformed chunk" in r.getMessage() for r in logs.records)


# --- `webreach serve`: its log, as an operator reads it --------------------------------------

EXA_KEY = "exa-provider-secret-6161"


def test_webreach_serve_logs_the_upstreams_error_without_any_key(tmp_path: Path) -> None:
    """The real command, its stderr read whole: the upstream's error quoting the upstream key,
    a search provider's key and the signing key is logged, and answered, with none of them."""
    leak = f"bad key {KEY}, and {EXA_KEY} and {SIGNING}"
    error_stream = chunk({"content": "Hel"}) + raw_chunk({"error": {"message": leak}})
    env = clean_env(
        WEBREACH_UPSTREAM_API_KEY=KEY,
        WEBREACH_SEARCH_PROVIDER="exa",
        EXA_API_KEY=EXA_KEY,
        EXA_BASE_URL="http://127.0.0.1:9",
        WEBREACH_SIGNING_KEY=SIGNING,
        WEBREACH_CONFIG="",
    )
    port = free_port()
    log = tmp_path / "serve.log"
    with ScriptedUpstream() as upstream, log.open("wb") as output:
        env["WEBREACH_UPSTREAM_BASE_URL"] = upstream.url
        process = subprocess.Popen(
            [sys.executable, "-m", "webreach", "serve", "--port", str(port)],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for(lambda: "serving on" in log.read_text(), log)
            live = f"http://127.0.0.1:{port}"
            replies = []
            for variant in VARIANTS:
                for stream in (True, False):
                    upstream.queue(Step(raw_body=error_stream, headers=SSE))
                    body = {**BODIES[variant], "stream": stream}
                    replies.append(httpx.post(live + path_of(variant), json=body, timeout=30))
            wait_for(lambda: log.read_text().count(" /v1/") >= len(replies), log)
        finally:
            process.terminate()
            process.wait(timeout=20)
    text = log.read_text()
    for secret in (KEY, EXA_KEY, SIGNING):
        assert all(secret.encode() not in reply.content for reply in replies)
        assert secret not in text
    assert "upstream failed: upstream error: bad key ***, and *** and ***" in text
    assert any(b"bad key ***, and *** and ***" in reply.content for reply in replies)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(condition: Callable[[], bool], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_PATIENCE
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not in the log in time:\n{log.read_text()}")
        time.sleep(0.05)
