"""Stopping ``webreach serve`` with real signals: the first Ctrl-C or SIGTERM says how many
requests it waits for and gives them ``WEBREACH_SHUTDOWN_TIMEOUT``, then ends each with its
protocol's error; a second Ctrl-C stops at once in one line; never a traceback."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

import anthropic
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from cli_helpers import clean_env
from scripted_upstream import ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from stderr_lines import WAIT, StderrLines
from test_cli_serve import free_port, start_serving

STOPPING = "stopping: waiting for"


_STARTED: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _reaped() -> Iterator[None]:
    """A server a failed test left running is killed and reaped, and its stdout pipe (which
    nobody reads) closed; its stderr reader closes stderr at the end of the stream."""
    yield
    while _STARTED:
        process = _STARTED.pop()
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


class Served(StderrLines):
    """A ``webreach serve`` process whose stderr lines are read as they come."""

    def __init__(self, upstream: ScriptedUpstream, **env: str) -> None:
        self.port = free_port()
        settings = clean_env(WEBREACH_UPSTREAM_BASE_URL=upstream.url, **env)
        super().__init__(start_serving(settings, self.port))
        _STARTED.append(self.process)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


@pytest.fixture
def held(upstream: ScriptedUpstream) -> Iterator[threading.Event]:
    release = threading.Event()
    upstream.queue(Step(content="never sent", hold=release))
    yield release
    release.set()


def _stream_in_background(
    url: str, *, stream: bool = True, search: bool = False
) -> tuple[threading.Thread, list[BaseException]]:
    failures: list[BaseException] = []
    extra: dict[str, object] = {"web_search_options": {}} if search else {}

    def run() -> None:
        messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]
        try:
            with openai.OpenAI(base_url=url, api_key="x", max_retries=0, timeout=WAIT) as client:
                if not stream:
                    client.chat.completions.create(model="m", messages=messages, extra_body=extra)
                    return
                with client.chat.completions.create(
                    model="m", messages=messages, stream=True, extra_body=extra
                ) as chunks:
                    for _ in chunks:
                        pass
        except BaseException as error:  # what the client saw is the test's to judge
            failures.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, failures


def _until_upstream_asked(upstream: ScriptedUpstream) -> None:
    deadline = time.monotonic() + WAIT
    while not upstream.requests:
        assert time.monotonic() < deadline, "the turn never reached the upstream"
        time.sleep(0.02)


def test_ctrl_c_on_an_idle_server_exits_cleanly(upstream: ScriptedUpstream) -> None:
    served = Served(upstream)
    served.wait_for("serving on")
    served.process.send_signal(signal.SIGINT)
    code, err = served.ended()
    assert code == 0, err
    assert "stopping: waiting for 0 requests (Ctrl-C again to stop now)" in err
    assert "Traceback" not in err
    assert " ERROR " not in err


def test_sigterm_ends_a_held_streaming_turn_with_the_protocols_error(
    upstream: ScriptedUpstream, held: threading.Event
) -> None:
    served = Served(upstream, WEBREACH_SHUTDOWN_TIMEOUT="1")
    served.wait_for("serving on")
    client, failures = _stream_in_background(served.url)
    _until_upstream_asked(upstream)
    served.process.send_signal(signal.SIGTERM)
    said = served.wait_for(STOPPING)
    assert "stopping: waiting for 1 request (Ctrl-C again to stop now)" in said
    client.join(WAIT)
    assert not client.is_alive()
    assert len(failures) == 1
    assert isinstance(failures[0], openai.APIError)
    assert "the server is stopping" in str(failures[0])
    assert "WEBREACH_SHUTDOWN_TIMEOUT" in str(failures[0])
    code, err = served.ended()
    assert code == 0, err
    assert "Traceback" not in err


def test_sigterm_ends_a_held_whole_search_turn_with_its_error_body(
    upstream: ScriptedUpstream, held: threading.Event
) -> None:
    served = Served(upstream, WEBREACH_SHUTDOWN_TIMEOUT="1")
    served.wait_for("serving on")
    client, failures = _stream_in_background(served.url, stream=False, search=True)
    _until_upstream_asked(upstream)
    assert upstream.requests[0].get("tools")  # the loop's step, not a relay
    served.process.send_signal(signal.SIGTERM)
    served.wait_for("stopping: waiting for 1 request (Ctrl-C again to stop now)")
    client.join(WAIT)
    assert not client.is_alive()
    assert len(failures) == 1
    assert isinstance(failures[0], openai.APIStatusError)
    assert failures[0].status_code == 503
    assert "the server is stopping" in failures[0].message
    code, err = served.ended()
    assert code == 0, err
    assert "Traceback" not in err


def test_a_second_ctrl_c_stops_at_once_in_one_line(
    upstream: ScriptedUpstream, held: threading.Event
) -> None:
    served = Served(upstream)  # the default timeout: the turn would be waited for
    served.wait_for("serving on")
    client, _ = _stream_in_background(served.url)
    _until_upstream_asked(upstream)
    served.process.send_signal(signal.SIGINT)
    served.wait_for(STOPPING)
    before = len(served.seen)
    served.process.send_signal(signal.SIGINT)
    code, err = served.ended()
    assert code == 130, err
    assert [line.strip() for line in served.seen[before:]] == ["webreach: stopped now"]
    assert "Traceback" not in err
    client.join(WAIT)


def test_mcp_over_http_stops_cleanly_on_ctrl_c() -> None:
    port = free_port()
    with subprocess.Popen(
        [sys.executable, "-m", "webreach", "mcp", "--http", "--port", str(port)],
        env=clean_env(WEBREACH_SEARCH_PROVIDER="exa", EXA_API_KEY="x"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:  # leaving it closes the pipes
        try:
            assert process.stderr is not None
            for line in process.stderr:
                if "MCP server on" in line:
                    break
            process.send_signal(signal.SIGINT)
            code = process.wait(timeout=WAIT)
            err = process.stderr.read()
        finally:
            process.kill()
    assert code == 0, err
    assert "webreach: stopping: waiting for 0 requests (Ctrl-C again to stop now)" in err
    assert "Traceback" not in err


REASON = "the server is stopping: the turn was ended after 1 s (WEBREACH_SHUTDOWN_TIMEOUT)"


def _openai_client(url: str) -> openai.OpenAI:
    return openai_client(url, "x", timeout=WAIT)


# Each turn closes its client and its stream: one left open holds its connection's socket.


def _responses_stream(url: str) -> str:
    with (
        _openai_client(url) as client,
        client.responses.create(model="m", input="hi", stream=True) as events,
    ):
        for event in events:
            if event.type == "response.failed":
                assert event.response.error is not None
                return f"response.failed: {event.response.error.message}"
    return "the stream ended without response.failed"


def _responses_whole(url: str) -> str:
    try:
        with _openai_client(url) as client:
            client.responses.create(model="m", input="hi", tools=[{"type": "web_search"}])
    except openai.APIStatusError as error:
        body = error.body  # the error object of the body
        assert isinstance(body, dict)
        return f"{error.status_code}: {body['message']}"
    return "answered"


def _messages_client(url: str) -> anthropic.Anthropic:
    return anthropic_client(url.removesuffix("/v1"), "x", timeout=WAIT)


def _messages_stream(url: str) -> str:
    messages: list[anthropic.types.MessageParam] = [{"role": "user", "content": "hi"}]
    try:
        with (
            _messages_client(url) as client,
            client.messages.stream(model="m", max_tokens=100, messages=messages) as stream,
        ):
            for _ in stream:
                pass
    except anthropic.APIStatusError as error:
        body = error.body
        assert isinstance(body, dict)
        return f"{body['type']} {body['error']['type']}: {body['error']['message']}"
    return "the stream ended without an error event"


def _messages_whole(url: str) -> str:
    messages: list[anthropic.types.MessageParam] = [{"role": "user", "content": "hi"}]
    try:
        with _messages_client(url) as client:
            client.messages.create(
                model="m",
                max_tokens=100,
                messages=messages,
                tools=[{"type": "web_search_20250305", "name": "web_search"}],
            )
    except anthropic.APIStatusError as error:
        body = error.body
        assert isinstance(body, dict)
        return f"{error.status_code} {body['error']['type']}: {body['error']['message']}"
    return "answered"


@pytest.mark.parametrize(
    ("turn", "seen"),
    [
        (_responses_stream, f"response.failed: {REASON}"),
        (_responses_whole, f"503: {REASON}"),
        (_messages_stream, f"error api_error: {REASON}"),
        (_messages_whole, f"503 api_error: {REASON}"),
    ],
    ids=["responses-stream", "responses-whole", "messages-stream", "messages-whole"],
)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_each_protocol_sees_its_own_error_when_the_stop_ends_its_turn(
    upstream: ScriptedUpstream,
    held: threading.Event,
    turn: Callable[[str], str],
    seen: str,
    sig: signal.Signals,
) -> None:
    served = Served(upstream, WEBREACH_SHUTDOWN_TIMEOUT="1")
    served.wait_for("serving on")
    outcome: list[str] = []
    client = threading.Thread(target=lambda: outcome.append(turn(served.url)), daemon=True)
    client.start()
    _until_upstream_asked(upstream)
    served.process.send_signal(sig)
    served.wait_for("stopping: waiting for 1 request (Ctrl-C again to stop now)")
    client.join(WAIT)
    assert outcome == [seen]
    code, err = served.ended()
    assert code == 0, err
    assert "Traceback" not in err
    assert " ERROR " not in err


def test_a_turn_that_ends_within_the_timeout_brings_its_answer(
    upstream: ScriptedUpstream, held: threading.Event
) -> None:
    served = Served(upstream)  # the default timeout, 10 s
    served.wait_for("serving on")
    answer: list[str] = []

    def run() -> None:
        messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]
        with (
            _openai_client(served.url) as client,
            client.chat.completions.create(model="m", messages=messages, stream=True) as chunks,
        ):
            answer.append("".join(c.choices[0].delta.content or "" for c in chunks if c.choices))

    client = threading.Thread(target=run, daemon=True)
    client.start()
    _until_upstream_asked(upstream)
    served.process.send_signal(signal.SIGINT)
    served.wait_for("stopping: waiting for 1 request (Ctrl-C again to stop now)")
    held.set()
    client.join(WAIT)
    assert answer == ["never sent"]
    code, err = served.ended()
    assert code == 0, err
    assert "Traceback" not in err
    assert " ERROR " not in err
