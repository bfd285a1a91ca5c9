"""The WebSocket mode of ``/v1/responses``, with the ``websockets`` client against the live
server in front of the scripted upstream: a turn, a continuation, errors, and a client that
leaves mid-turn."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosedOK, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from scripted_upstream import ScriptedUpstream, Step, TricklingUpstream
from server_harness import LiveServer
from webreach.cache import MemoryStore
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.server.responses import websocket
from webreach.settings.server import KeyLimits
from webreach.tools import ToolOptions

TERMINAL = ("response.completed", "response.failed", "response.incomplete", "error")
KEY = "sk-inbound-test"


def _socket_url(base: str) -> str:
    return base.replace("http://", "ws://", 1) + "/responses"


def _open(base: str, **headers: str) -> ClientConnection:
    return connect(_socket_url(base), additional_headers=headers, proxy=None, open_timeout=30)


def _turn(ws: ClientConnection, **body: Any) -> list[dict[str, Any]]:
    """Sends one ``response.create``; the messages until its terminal one."""
    ws.send(json.dumps({"type": "response.create", **body}))
    got: list[dict[str, Any]] = []
    while not got or got[-1]["type"] not in TERMINAL:
        got.append(json.loads(ws.recv(timeout=60)))
    return got


def _until(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.01)


def test_a_turn_sends_the_stream_events_as_messages(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(Step(content=["Hello ", "there."]))
    with _open(webreach_url) as ws:
        events = _turn(ws, model="m", input="hi")
    kinds = [event["type"] for event in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert "response.output_text.delta" in kinds
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    message = events[-1]["response"]["output"][-1]
    assert message["content"][0]["text"] == "Hello there."


def test_turns_run_one_after_another_on_one_connection(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(Step(content="first"), Step(content="second"))
    with _open(webreach_url) as ws:
        ws.send(json.dumps({"type": "response.create", "model": "m", "input": "one"}))
        ws.send(json.dumps({"type": "response.create", "model": "m", "input": "two"}))
        done: list[dict[str, Any]] = []
        running = False
        while len(done) < 2:
            event = json.loads(ws.recv(timeout=60))
            if event["type"] == "response.created":
                assert not running, "a turn began before the one before it ended"
                running = True
            if event["type"] == "response.completed":
                running = False
                done.append(event["response"])
    texts = [response["output"][-1]["content"][0]["text"] for response in done]
    assert texts == ["first", "second"]


def test_store_false_continues_on_its_connection_only(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(Step(content="OK"), Step(content="cobalt"))
    with _open(webreach_url) as ws:
        first = _turn(ws, model="m", store=False, input="Remember: cobalt.")[-1]["response"]
        second = _turn(
            ws, model="m", store=False, previous_response_id=first["id"], input="The word?"
        )
    assert second[-1]["type"] == "response.completed"
    assert second[-1]["response"]["previous_response_id"] == first["id"]
    sent = upstream.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[0]["content"] == "Remember: cobalt."
    assert sent[1]["content"] == "OK"
    with _open(webreach_url) as ws:
        missed = _turn(ws, model="m", store=False, previous_response_id=first["id"], input="?")
    assert missed[-1]["type"] == "error"
    assert missed[-1]["status"] == 400
    assert missed[-1]["error"]["code"] == "previous_response_not_found"
    assert len(upstream.requests) == 2


def test_a_failed_continuation_forgets_the_response_it_continued(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    with _open(webreach_url) as ws:
        first = _turn(ws, model="m", store=False, input="hi")[-1]["response"]
        orphan = {"type": "function_call_output", "call_id": "call_nowhere", "output": "x"}
        failed = _turn(ws, model="m", store=False, previous_response_id=first["id"], input=[orphan])
        retry = _turn(ws, model="m", store=False, previous_response_id=first["id"], input="again")
    assert failed[-1]["type"] == "error"
    assert failed[-1]["error"]["param"] == "input"
    assert "call_nowhere" in failed[-1]["error"]["message"]
    assert retry[-1]["error"]["code"] == "previous_response_not_found"


def test_bad_messages_are_error_events_and_the_connection_goes_on(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    with _open(webreach_url) as ws:
        ws.send("{not json")
        broken = json.loads(ws.recv(timeout=60))
        ws.send(json.dumps({"type": "response.cancel"}))
        unknown = json.loads(ws.recv(timeout=60))
        streamed = _turn(ws, model="m", input="hi", stream=True)[-1]
        after = _turn(ws, model="m", input="hi")[-1]
    assert broken["type"] == "error" and broken["status"] == 400
    assert "not valid JSON" in broken["error"]["message"]
    assert unknown["error"]["param"] == "type"
    assert streamed["type"] == "error" and streamed["error"]["param"] == "stream"
    assert after["type"] == "response.completed"


def test_a_client_that_leaves_mid_turn_ends_the_upstream_request(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(Step(hang=True))
    ws = _open(webreach_url)
    ws.send(json.dumps({"type": "response.create", "model": "m", "input": "hi"}))
    _until(lambda: upstream.waiting == 1)
    ws.close()
    _until(lambda: len(upstream.hung_up) == 1)
    assert upstream.waiting == 0


@pytest.fixture
def keyed_url(upstream: ScriptedUpstream) -> Iterator[str]:
    settings = ServerSettings(
        upstream_base_url=upstream.url,
        upstream_api_key="upstream-key",
        signing_key="test-signing-key-of-32-bytes-or-more",
        server_api_keys=KEY,
    )
    app = create_app(settings, WebRuntime(), ToolOptions(), store=MemoryStore())
    with LiveServer(app) as server:
        yield server.url + "/v1"


def test_the_handshake_needs_an_inbound_key(upstream: ScriptedUpstream, keyed_url: str) -> None:
    with pytest.raises(InvalidStatus) as refused:
        _open(keyed_url)
    assert refused.value.response.status_code == 401
    assert b"invalid or missing API key" in refused.value.response.body
    with _open(keyed_url, Authorization=f"Bearer {KEY}") as ws:
        assert _turn(ws, model="m", input="hi")[-1]["type"] == "response.completed"


def test_a_keyless_server_refuses_another_sites_page(webreach_url: str) -> None:
    with pytest.raises(InvalidStatus) as refused:
        _open(webreach_url, Origin="https://attacker.example")
    assert refused.value.response.status_code == 403


def test_each_turn_counts_against_its_keys_request_limit(upstream: ScriptedUpstream) -> None:
    settings = ServerSettings(
        upstream_base_url=upstream.url,
        upstream_api_key="upstream-key",
        signing_key="test-signing-key-of-32-bytes-or-more",
        server_api_keys=f"alice:{KEY}",
        server_key_limits={"alice": KeyLimits(requests_per_minute=1)},
    )
    app = create_app(settings, WebRuntime(), ToolOptions(), store=MemoryStore())
    with LiveServer(app) as server, _open(server.url + "/v1", **{"x-api-key": KEY}) as ws:
        first = _turn(ws, model="m", input="hi")[-1]
        second = _turn(ws, model="m", input="hi")[-1]
    assert first["type"] == "response.completed"
    assert second["type"] == "error"
    assert second["status"] == 429
    assert len(upstream.requests) == 1


def test_a_connection_ends_at_its_time_limit(
    upstream: ScriptedUpstream, webreach_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(websocket, "CONNECTION_LIMIT_SECONDS", 0.5)
    with _open(webreach_url) as ws:
        told = json.loads(ws.recv(timeout=60))
        with pytest.raises(ConnectionClosedOK):
            ws.recv(timeout=60)
    assert told["type"] == "error"
    assert told["error"]["code"] == "websocket_connection_limit_reached"


def test_no_message_carries_a_secret_the_server_holds(upstream: ScriptedUpstream) -> None:
    secret = "sk-upstream-secret-7731"
    settings = ServerSettings(
        upstream_base_url=upstream.url,
        upstream_api_key=secret,
        signing_key="test-signing-key-of-32-bytes-or-more",
    )
    upstream.queue(Step(content=["Here it is: sk-ups", "tream-se", "cret-7731 and no more."]))
    app = create_app(settings, WebRuntime(), ToolOptions(), store=MemoryStore())
    orphan = {"type": "function_call_output", "call_id": secret, "output": "x"}
    with LiveServer(app) as server, _open(server.url + "/v1") as ws:
        said = _turn(ws, model="m", input="hi")
        refused = _turn(ws, model="m", input=[{"role": "user", "content": "hi"}, orphan])
    assert said[-1]["type"] == "response.completed"
    assert refused[-1]["type"] == "error"
    for event in (*said, *refused):
        assert "cret-7731" not in json.dumps(event)


def test_each_turn_has_its_access_line(
    upstream: ScriptedUpstream, webreach_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="webreach.access")
    upstream.queue(Step(content="hello"), Step(hang=True))
    with _open(webreach_url) as ws:
        assert _turn(ws, model="m", input="hi")[-1]["type"] == "response.completed"
        assert _turn(ws, model="m", input="hi", background=True)[-1]["type"] == "error"
        ws.send(json.dumps({"type": "response.create", "model": "m", "input": "hi"}))
        _until(lambda: upstream.waiting == 1)

    def lines() -> list[dict[str, Any]]:
        return [r.fields for r in caplog.records if getattr(r, "event", None) == "access"]  # type: ignore[attr-defined]

    _until(lambda: len(lines()) == 3)
    fields = lines()
    assert [f["method"] for f in fields] == ["WEBSOCKET"] * 3
    assert [f["status"] for f in fields] == [200, 400, 499]
    assert {f["path"] for f in fields} == {"/v1/responses"}
    assert fields[1]["note"].startswith("background:")


def test_a_client_that_leaves_mid_stream_ends_the_upstream_stream() -> None:
    with TricklingUpstream(pace=0.05, lasts=300) as trickling:
        settings = ServerSettings(
            upstream_base_url=trickling.url,
            upstream_api_key="upstream-key",
            signing_key="test-signing-key-of-32-bytes-or-more",
        )
        app = create_app(settings, WebRuntime(), ToolOptions(), store=MemoryStore())
        with LiveServer(app) as server:
            ws = _open(server.url + "/v1")
            ws.send(json.dumps({"type": "response.create", "model": "m", "input": "hi"}))
            while json.loads(ws.recv(timeout=60))["type"] != "response.output_text.delta":
                pass
            assert trickling.open == 1
            ws.close()
            _until(lambda: trickling.open == 0)
    assert len(trickling.closed) == 1
