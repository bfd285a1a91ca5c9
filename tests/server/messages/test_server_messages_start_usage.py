"""A streamed Messages ``message_start`` carries the first model step's usage, as DeepSeek's does.

The upstream reports usage with its last chunk, so ``message_start`` waits for that usage or for
the first event that must go out, whichever comes first (keep-alives fill the wait): a step that
searches first gives its real numbers, one that writes at once opens with zeros, unless the
upstream reported its input early. The final usage stays ``message_delta``'s, and the SDK's
stream accumulator ends with it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from scripted_upstream import Call, EarlyUsageUpstream, ScriptedUpstream, Step
from sdk_clients import anthropic_client
from server_harness import LiveServer, default_search
from webreach.cache import MemoryStore
from webreach.seam import WebRuntime
from webreach.server import ServerSettings, create_app
from webreach.tools import ToolOptions

QUESTION = "How many people live in Iceland?"
SEARCH = [{"type": "deepseek_web_search", "name": "web_search"}]


def searched_then_answered() -> list[Step]:
    return [
        Step(calls=[Call("web_search", {"queries": ["Iceland population"]})], usage=(120, 8)),
        Step(content=["About ", "390,000【1】."], usage=(300, 20)),
    ]


def messages_body(**extra: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": QUESTION}],
        "stream": True,
        **extra,
    }


def raw_frames(base: str, body: dict[str, Any]) -> str:
    with httpx.stream("POST", base + "/v1/messages", json=body, timeout=30) as reply:
        assert reply.status_code == 200
        return "".join(reply.iter_text())


def parsed(text: str) -> list[tuple[str, dict[str, Any]]]:
    """(event, data) of each frame; comments are skipped, as SSE readers skip them."""
    out = []
    for chunk in text.split("\n\n"):
        lines = [line for line in chunk.split("\n") if line and not line.startswith(":")]
        if lines:
            name = lines[0].removeprefix("event: ")
            out.append((name, json.loads(lines[1].removeprefix("data: "))))
    return out


def start_usage(frames: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    name, data = frames[0]
    assert name == "message_start"
    usage: dict[str, Any] = data["message"]["usage"]
    return usage


def final_usage(frames: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    (delta,) = [data for name, data in frames if name == "message_delta"]
    usage: dict[str, Any] = delta["usage"]
    return usage


@pytest.fixture
def early_upstream() -> Iterator[ScriptedUpstream]:
    with EarlyUsageUpstream() as server:
        yield server


@pytest.fixture
def early_url(early_upstream: ScriptedUpstream) -> Iterator[str]:
    runtime = WebRuntime()
    runtime.register_search_provider(default_search())
    app = create_app(
        ServerSettings(upstream_base_url=early_upstream.url, signing_key="k" * 32),
        runtime,
        ToolOptions(),
        store=MemoryStore(),
        keepalive_seconds=0.2,
    )
    with LiveServer(app) as server:
        yield server.url


# --- the first step's numbers ------------------------------------------------------------------


def test_a_step_that_searches_first_opens_with_its_usage(
    webreach_url: str, upstream: ScriptedUpstream
) -> None:
    upstream.queue(*searched_then_answered())
    frames = parsed(raw_frames(webreach_url.removesuffix("/v1"), messages_body(tools=SEARCH)))
    start = start_usage(frames)
    assert (start["input_tokens"], start["output_tokens"]) == (120, 8)
    assert start["cache_read_input_tokens"] == 0 and start["cache_creation_input_tokens"] == 0
    assert start["server_tool_use"]["web_search_requests"] == 0
    final = final_usage(frames)
    assert (final["input_tokens"], final["output_tokens"]) == (420, 28)
    assert final["server_tool_use"]["web_search_requests"] == 1


def test_a_step_that_writes_at_once_opens_with_zeros_first(
    webreach_url: str, upstream: ScriptedUpstream
) -> None:
    upstream.queue(Step(content=["About ", "390,000."], usage=(50, 6)))
    frames = parsed(raw_frames(webreach_url.removesuffix("/v1"), messages_body()))
    assert [name for name, _ in frames[:2]] == ["message_start", "content_block_start"]
    start = start_usage(frames)
    assert (start["input_tokens"], start["output_tokens"]) == (0, 0)
    assert (final_usage(frames)["input_tokens"], final_usage(frames)["output_tokens"]) == (50, 6)


def test_input_tokens_reported_early_open_the_message_and_count_once(
    early_url: str, early_upstream: ScriptedUpstream
) -> None:
    early_upstream.queue(Step(content=["About ", "390,000."], usage=(77, 5)))
    frames = parsed(raw_frames(early_url, messages_body()))
    start = start_usage(frames)
    assert (start["input_tokens"], start["output_tokens"]) == (77, 0)
    assert (final_usage(frames)["input_tokens"], final_usage(frames)["output_tokens"]) == (77, 5)


def test_an_answer_held_for_review_opens_with_its_steps_usage(
    webreach_url: str, upstream: ScriptedUpstream
) -> None:
    upstream.queue(Step(content="About 390,000.", usage=(64, 4)))
    body = messages_body(safety_check={"level": "low"})
    frames = parsed(raw_frames(webreach_url.removesuffix("/v1"), body))
    start = start_usage(frames)
    assert (start["input_tokens"], start["output_tokens"]) == (64, 4)


def test_keep_alives_flow_while_message_start_waits(
    webreach_url: str, upstream: ScriptedUpstream
) -> None:
    """A first step that takes a while to decide on its search: comments, then the start."""
    gate = threading.Event()
    first, answer = searched_then_answered()
    first.hold = gate
    upstream.queue(first, answer)
    timer = threading.Timer(1.0, gate.set)
    timer.start()
    try:
        text = raw_frames(webreach_url.removesuffix("/v1"), messages_body(tools=SEARCH))
    finally:
        timer.cancel()
    assert text.startswith(": keep-alive\n\n")
    assert start_usage(parsed(text))["input_tokens"] == 120


# --- the SDK ends with the final usage -----------------------------------------------------------


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
def test_the_sdk_stream_accumulator_ends_with_message_deltas_usage(
    webreach_url: str, upstream: ScriptedUpstream, strict: bool
) -> None:
    upstream.queue(*searched_then_answered())
    client = anthropic_client(webreach_url.removesuffix("/v1"), strict=strict)
    with client.messages.stream(
        model="m",
        max_tokens=256,
        messages=[{"role": "user", "content": QUESTION}],
        tools=[{"type": "web_search_20250305", "name": "web_search"}],
    ) as events:
        seen = list(events)
        message = events.get_final_message()
    start = next(event for event in seen if event.type == "message_start")
    assert (start.message.usage.input_tokens, start.message.usage.output_tokens) == (120, 8)
    assert (message.usage.input_tokens, message.usage.output_tokens) == (420, 28)
    assert message.usage.server_tool_use is not None
    assert message.usage.server_tool_use.web_search_requests == 1
    assert message.content[-1].type == "text"
