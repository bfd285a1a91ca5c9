"""A request's turn has limits: upstream calls (``WEBREACH_MAX_STEPS``) and time
(``WEBREACH_TURN_TIMEOUT``).

A model that keeps calling tools is forced to answer once at the cap, then the request ends with
the protocol's error naming it; a turn past its deadline ends with the protocol's error event
(streamed) or a 504 (not streamed), and whatever it had in flight is cancelled and closed.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx
import openai
import pytest

from providers_for_tests import ScriptedSearch
from scripted_upstream import Call, ScriptedUpstream, Step, ToolCaller, TricklingUpstream
from sdk_clients import anthropic_client, openai_client
from server_harness import LiveServer, default_search
from webreach.seam import SearchRequest, SearchResult, WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.server.core.loop.runner import FORCED_ANSWER
from webreach.server.core.turn.limits import TurnLimits, TurnTimedOut, Waits
from webreach.tools import ToolOptions

PROTOCOLS = ["chat", "responses", "messages"]
QUESTION = "What is new?"
USER = [{"role": "user", "content": QUESTION}]
WEB_TOOLS: dict[str, list[dict[str, Any]]] = {
    "chat": [{"type": "deepseek_web_search"}],
    "responses": [{"type": "web_search"}],
    "messages": [{"type": "web_search_20250305", "name": "web_search"}],
}
CLIENT_TOOL = {"name": "lookup", "description": "Look a word up.", "parameters": {}}
STEP_CAP = "stopped after 3 upstream calls (WEBREACH_MAX_STEPS)"
TURN = 0.5
"""The turn deadline of these tests, in seconds."""
TIMED_OUT = f"turn timed out after {TURN:g} s (WEBREACH_TURN_TIMEOUT)"
GIVES_UP = 40
LASTS = 8.0
"""How long the hostile upstreams last: past the deadline, short of hanging a test that fails."""


@dataclass
class Seen:
    """What a client saw: the HTTP status (200 for an error inside a stream) and the message."""

    status: int
    message: str
    kind: str = ""
    text: str = ""


def body_of(protocol: str, stream: bool, tools: list[dict[str, Any]] | None = None) -> Any:
    tools = WEB_TOOLS[protocol] if tools is None else tools
    if protocol == "responses":
        return {"model": "m", "input": QUESTION, "tools": tools, "stream": stream}
    body = {"model": "m", "messages": USER, "tools": tools, "stream": stream}
    return {**body, "max_tokens": 64} if protocol == "messages" else body


def ask(base: str, protocol: str, stream: bool, tools: list[dict[str, Any]] | None = None) -> Seen:
    """Ask through the protocol's official SDK; the failure it reports, or the answer's text."""
    body = body_of(protocol, stream, tools)
    if protocol == "messages":
        return _ask_claude(base, body, stream)
    client = openai_client(base + "/v1", timeout=30)
    try:
        if protocol == "chat":
            if not stream:
                reply = client.chat.completions.create(**body)
                return Seen(200, "", text=reply.choices[0].message.content or "")
            text = ""
            for chunk in client.chat.completions.create(**body):
                text += "".join(c.delta.content or "" for c in chunk.choices)
            return Seen(200, "", text=text)
        if not stream:
            return Seen(200, "", text=client.responses.create(**body).output_text)
        text = ""
        for event in client.responses.create(**body):
            if event.type == "response.output_text.delta":
                text += event.delta
            if event.type == "response.failed":
                error = event.response.error
                assert error is not None
                return Seen(200, error.message, error.code or "", text)
        return Seen(200, "", text=text)
    except openai.APIStatusError as failure:
        return Seen(failure.status_code, failure.message, _kind(failure.body))
    except openai.APIError as failure:
        return Seen(200, failure.message, _kind(failure.body), text)


def _ask_claude(base: str, body: Any, stream: bool) -> Seen:
    claude = anthropic_client(base, timeout=30)
    text = ""
    try:
        if not stream:
            reply = claude.messages.create(**body)
            return Seen(200, "", text="".join(b.text for b in reply.content if b.type == "text"))
        for event in claude.messages.create(**body):
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                text += event.delta.text
        return Seen(200, "", text=text)
    except anthropic.APIStatusError as failure:
        error = failure.body.get("error", {}) if isinstance(failure.body, dict) else {}
        return Seen(failure.status_code, str(error.get("message")), str(error.get("type")), text)


def _kind(body: object) -> str:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return str(error.get("type") or "")
    return ""


@contextmanager
def serving(
    upstream: ScriptedUpstream, search: ScriptedSearch | None = None, **settings: Any
) -> Iterator[str]:
    """The server in front of ``upstream``, with ``settings`` over the test defaults."""
    keepalive = settings.pop("keepalive_seconds", 5.0)
    config = ServerSettings(upstream_base_url=upstream.url, signing_key="k" * 32, **settings)
    runtime = WebRuntime()
    runtime.register_search_provider(search or default_search())
    app = create_app(config, runtime, ToolOptions(), keepalive_seconds=keepalive)
    with LiveServer(app) as server:
        yield server.url


def has_tools(body: dict[str, Any]) -> bool:
    return bool(body.get("tools"))


# --- WEBREACH_MAX_STEPS ------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_model_that_keeps_calling_tools_is_stopped_at_the_step_cap(
    protocol: str, stream: bool
) -> None:
    with ScriptedUpstream() as upstream, serving(upstream, max_steps=3) as base:
        model = upstream.respond = ToolCaller(gives_up=GIVES_UP)
        seen = ask(base, protocol, stream)
    assert model.calls == 3
    assert [has_tools(body) for body in model.bodies] == [True, True, False]
    assert STEP_CAP in seen.message
    assert "the model kept calling tools" in seen.message
    assert seen.status == (200 if stream else 502)
    if protocol == "messages":
        assert seen.kind == "api_error"


def test_the_default_cap_is_24_upstream_calls() -> None:
    with ScriptedUpstream() as upstream, serving(upstream) as base:
        model = upstream.respond = ToolCaller(gives_up=GIVES_UP)
        seen = ask(base, "chat", stream=False)
    assert model.calls == 24
    assert seen.status == 502
    assert "stopped after 24 upstream calls (WEBREACH_MAX_STEPS)" in seen.message


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_last_call_forces_an_answer_and_a_model_that_answers_succeeds(protocol: str) -> None:
    with ScriptedUpstream() as upstream, serving(upstream, max_steps=3) as base:
        search = Step(calls=[Call("web_search", {"queries": ["news"]})])
        upstream.queue(search, search, Step(content="The answer."))
        seen = ask(base, protocol, stream=True)
    assert (seen.message, seen.text) == ("", "The answer.")
    assert [has_tools(body) for body in upstream.requests] == [True, True, False]
    assert upstream.requests[-1]["messages"][-1] == {"role": "system", "content": FORCED_ANSWER}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("protocol", ["responses", "messages"])
def test_a_model_calling_a_tool_nobody_offered_is_stopped_at_the_cap(
    protocol: str, stream: bool
) -> None:
    """Client tools and no web tool: calls of an unknown tool used to be answered "no such
    tool" for ever."""
    if protocol == "responses":
        tools = [{"type": "function", **CLIENT_TOOL}]
    else:
        tools = [{"name": "lookup", "description": "Look a word up.", "input_schema": {}}]
    with ScriptedUpstream() as upstream, serving(upstream, max_steps=3) as base:
        model = upstream.respond = ToolCaller("no_such_tool", gives_up=GIVES_UP)
        seen = ask(base, protocol, stream, tools)
    assert model.calls == 3
    assert STEP_CAP in seen.message


def test_a_client_tool_call_at_the_cap_still_reaches_the_client() -> None:
    """The cap stops calls the server would have to answer; a call of the client's own tool
    ends the turn as usual."""
    tools = [{"type": "function", "function": CLIENT_TOOL}, *WEB_TOOLS["chat"]]
    with ScriptedUpstream() as upstream, serving(upstream, max_steps=2) as base:
        upstream.queue(
            Step(calls=[Call("web_search", {"queries": ["news"]})]),
            Step(calls=[Call("lookup", {"word": "news"})]),
        )
        client = openai_client(base + "/v1")
        reply = client.chat.completions.create(model="m", messages=USER, tools=tools)  # type: ignore[arg-type,call-overload]
    assert reply.choices[0].finish_reason == "tool_calls"
    assert len(upstream.requests) == 2


# --- WEBREACH_TURN_TIMEOUT ---------------------------------------------------------------------


def wait_until(check: Any, within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return bool(check())


@pytest.mark.parametrize("comments", [False, True], ids=["tokens", "keepalives"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_streamed_turn_past_its_deadline_ends_with_the_error_event(
    protocol: str, comments: bool
) -> None:
    with (
        TricklingUpstream(0.2, comments=comments, lasts=LASTS) as upstream,
        serving(upstream, turn_timeout=TURN, keepalive_seconds=0.3) as base,
    ):
        started = time.monotonic()
        seen = ask(base, protocol, stream=True)
        took = time.monotonic() - started
        assert wait_until(lambda: upstream.open == 0)
    assert TIMED_OUT in seen.message
    assert seen.status == 200
    assert TURN <= took < 5.0
    assert upstream.calls == 1
    if not comments:
        words = seen.text.split()
        assert words, "no token sent before the deadline reached the client"
        assert words == [f"t{number}" for number in range(1, len(words) + 1)]
    if protocol == "messages":
        assert seen.kind == "timeout_error"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_keepalives_stop_with_the_error_event_and_the_stream_ends(protocol: str) -> None:
    """An upstream sending only keep-alives, under the server's own: both stop at the deadline,
    the error event is the stream's last and the connection is done with."""
    with (
        TricklingUpstream(0.2, comments=True, lasts=LASTS) as upstream,
        serving(upstream, turn_timeout=TURN, keepalive_seconds=0.3) as base,
    ):
        path = "/v1/chat/completions" if protocol == "chat" else f"/v1/{protocol}"
        started = time.monotonic()
        with httpx.stream("POST", base + path, json=body_of(protocol, True), timeout=30) as reply:
            lines = [line for line in reply.iter_lines() if line]
        took = time.monotonic() - started
        assert wait_until(lambda: upstream.open == 0)
    assert took < 5.0
    assert ": keep-alive" in lines
    assert lines[-1].startswith("data: ")
    assert TIMED_OUT in lines[-1]
    assert upstream.calls == 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_turn_past_its_deadline_without_streaming_is_a_504(protocol: str) -> None:
    with (
        TricklingUpstream(0.2, lasts=LASTS) as upstream,
        serving(upstream, turn_timeout=TURN) as base,
    ):
        started = time.monotonic()
        seen = ask(base, protocol, stream=False)
        took = time.monotonic() - started
        assert wait_until(lambda: upstream.open == 0)
    assert seen.status == 504
    assert TIMED_OUT in seen.message
    assert TURN <= took < 5.0
    assert upstream.calls == 1
    if protocol == "messages":
        assert seen.kind == "timeout_error"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("protocol", [*PROTOCOLS, "relay"])
def test_an_upstream_silent_past_the_deadline_is_a_504_before_the_reply_starts(
    protocol: str, stream: bool
) -> None:
    """The first upstream call is made before the client is answered: the deadline passing
    there is an HTTP 504 even for a stream, and the upstream is hung up on. (Keep-alives
    slower than the client's read timeout: before the limit, the server's own newlines kept a
    client waiting for the upstream's whole timeout.)"""
    with (
        ScriptedUpstream() as upstream,
        serving(upstream, turn_timeout=TURN, keepalive_seconds=30.0) as base,
    ):
        upstream.queue(Step(hang=True))
        path = "/v1/chat/completions" if protocol in ("chat", "relay") else f"/v1/{protocol}"
        body = body_of("chat" if protocol == "relay" else protocol, stream)
        if protocol == "relay":
            del body["tools"]
        response = httpx.post(base + path, json=body, timeout=10)
        assert wait_until(lambda: len(upstream.hung_up) == 1)
    assert response.status_code == 504
    assert response.json()["error"]["message"] == TIMED_OUT


def test_after_the_newlines_a_late_timeout_is_the_error_body() -> None:
    """Past the keep-alive interval a non-streamed answer has sent its status and newlines:
    the timeout is then the protocol's error body."""
    with (
        TricklingUpstream(0.2, lasts=LASTS) as upstream,
        serving(upstream, turn_timeout=1.0, keepalive_seconds=0.3) as base,
    ):
        response = httpx.post(base + "/v1/responses", json=body_of("responses", False), timeout=30)
        assert wait_until(lambda: upstream.open == 0)
    assert response.status_code == 200
    assert response.content.startswith(b"\n")
    assert response.json()["error"]["message"] == TIMED_OUT.replace(f"{TURN:g} s", "1 s")


def sse_data(response: httpx.Response) -> Iterator[Any]:
    for line in response.iter_lines():
        if line.startswith("data: "):
            data = line[6:]
            yield data if data == "[DONE]" else json.loads(data)


def test_a_relayed_stream_past_its_deadline_ends_the_chat_way() -> None:
    with (
        TricklingUpstream(0.2, lasts=LASTS) as upstream,
        serving(upstream, turn_timeout=TURN) as base,
    ):
        body = {"model": "m", "messages": USER, "stream": True}
        with httpx.stream("POST", base + "/v1/chat/completions", json=body, timeout=30) as reply:
            assert reply.status_code == 200
            payloads = list(sse_data(reply))
        assert wait_until(lambda: upstream.open == 0)
        client = openai_client(base + "/v1", timeout=30)
        with pytest.raises(openai.APIError, match=re.escape(TIMED_OUT)):
            for _ in client.chat.completions.create(model="m", messages=USER, stream=True):  # type: ignore[call-overload]
                pass
    assert payloads[0]["choices"][0]["delta"]["content"] == "t1 "
    assert payloads[-1]["choices"] == []
    assert payloads[-1]["error"]["message"] == TIMED_OUT
    assert "[DONE]" not in payloads
    assert upstream.calls == 2


def test_a_relayed_answer_trickling_whitespace_is_a_504() -> None:
    with (
        TricklingUpstream(0.2, lasts=LASTS) as upstream,
        serving(upstream, turn_timeout=TURN) as base,
    ):
        seen = ask(base, "chat", stream=False, tools=[])
        assert wait_until(lambda: upstream.open == 0)
    assert seen.status == 504
    assert TIMED_OUT in seen.message
    assert upstream.calls == 1


def test_the_deadline_cancels_the_searches_in_flight() -> None:
    """A search that would never end is cancelled with the turn; nothing is left running."""
    cancelled = threading.Event()

    async def endless(request: SearchRequest) -> SearchResult:
        try:
            await asyncio.sleep(LASTS)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        raise AssertionError("unreachable")

    search = ScriptedSearch("replay", behaviour=endless)
    with (
        ScriptedUpstream() as upstream,
        serving(upstream, search, turn_timeout=TURN) as base,
    ):
        upstream.queue(Step(calls=[Call("web_search", {"queries": ["news"]})]))
        for stream in (True, False):
            cancelled.clear()
            seen = ask(base, "messages", stream)
            assert TIMED_OUT in seen.message
            assert seen.status == (200 if stream else 504)
            assert cancelled.wait(5)
            upstream.queue(Step(calls=[Call("web_search", {"queries": ["news"]})]))


# --- the deadline over a stream's waits --------------------------------------------------------


async def test_waits_cancel_what_they_await_at_the_deadline_and_only_then() -> None:
    loop = asyncio.get_running_loop()
    closed = asyncio.Event()

    async def slow() -> Any:
        try:
            yield 1
            await asyncio.sleep(60)
            yield 2
        finally:
            closed.set()

    limits = TurnLimits(3, 0.2, loop.time() + 0.2)
    waits = Waits(limits)
    items = slow()
    assert await waits.next(items) == 1
    started = loop.time()
    with pytest.raises(TurnTimedOut, match=r"turn timed out after 0.2 s"):
        await waits.next(items)
    assert loop.time() - started < 1.0
    assert closed.is_set()
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]
    with pytest.raises(TurnTimedOut):
        await waits.next(slow())
    waits.close()


async def test_waits_past_the_deadline_between_items_fail_the_next_wait() -> None:
    async def items() -> Any:
        yield 1
        yield 2

    loop = asyncio.get_running_loop()
    waits = Waits(TurnLimits(3, 0.05, loop.time() + 0.05))
    stream = items()
    assert await waits.next(stream) == 1
    await asyncio.sleep(0.1)
    with pytest.raises(TurnTimedOut):
        await waits.next(stream)
    waits.close()


async def test_another_cancellation_passes_through_the_waits_and_close_disarms_them() -> None:
    async def forever() -> Any:
        await asyncio.sleep(60)
        yield 1

    loop = asyncio.get_running_loop()
    waits = Waits(TurnLimits(3, 0.2, loop.time() + 0.2))
    waiting = asyncio.ensure_future(waits.next(forever()))
    await asyncio.sleep(0.05)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    waits.close()
    await asyncio.sleep(0.3)
    assert not waits.expired
