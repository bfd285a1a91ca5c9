"""An upstream that writes its own key into what it answers: no byte of it leaves the server.

A prompt-injected or misconfigured model may write the server's upstream key into an answer,
its reasoning or a tool call, token by token. The real ``webreach serve`` (debug logs on) runs
in front of a scripted upstream and Exa's replay; every protocol, streamed and not, with and
without web tools, is read raw and through the official SDKs, and every log line and every
request the search provider received is searched for the key and for its pieces.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from replay_server import ReplayServer
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from test_server_logs import UPSTREAM_KEY, World, exa_results, server_env, serving
from web_requests import BODIES, PATHS, USER
from webreach.server.core.upstream.secrets import Redactor

SPLIT = ["Here it is: sk-ups", "tream-se", "cret-7731", " and nothing more."]
"""The key as a model streams it: in pieces, one per chunk."""
assert "".join(SPLIT[:3]).endswith(UPSTREAM_KEY)
PIECES = ("tream-se", "cret-7731", UPSTREAM_KEY)
"""What would show that the key, or part of it, went out."""

PLAIN: dict[str, dict[str, Any]] = {
    "responses": {"model": "m", "input": "What is new?"},
    "messages": {"model": "m", "max_tokens": 64, "messages": USER},
}
"""Responses and Messages without web tools: translated to the upstream and back."""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with ScriptedUpstream() as upstream, ReplayServer() as exa:
        exa.route("POST", "/search", exa_results)
        env = server_env(upstream.url, exa.url, WEBREACH_SEARCH_CONTEXT_SIZE="low")
        folder: Path = tmp_path_factory.mktemp("key-in-output")
        with serving(folder, env, "--log-level", "debug") as served:
            yield World(upstream, exa, served)


def assert_no_key(text: str, where: str) -> None:
    for piece in PIECES:
        assert piece not in text, f"{piece!r} of the upstream key in {where}:\n{text[:2000]}"


def searched_then_said(world: World) -> None:
    """A search whose query holds the key, reasoning that splits it, an answer that does."""
    world.upstream.queue(
        Step(
            reasoning=["I should look up sk-up", "stream-secret-7731 now."],
            calls=[Call("web_search", {"queries": [f"news about {UPSTREAM_KEY} today"]})],
        ),
        Step(content=SPLIT),
    )


def post(world: World, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(world.served.base + path, json=body, timeout=30)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", ["chat", "responses", "messages"])
def test_a_web_search_turn_never_passes_the_key_on(
    world: World, protocol: str, stream: bool
) -> None:
    searched_then_said(world)
    before = len(world.exa.requests)
    response = post(world, PATHS[protocol], {**BODIES[protocol], "stream": stream})
    assert response.status_code == 200, response.text
    assert_no_key(response.text, f"the {protocol} reply")
    assert "***" in response.text  # the answer still came, the key hidden in it
    asked = [recorded.json().get("query", "") for recorded in world.exa.requests[before:]]
    assert asked, "the search ran"
    assert_no_key(" ".join(asked), "the search provider's request")


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", ["responses", "messages"])
def test_a_translated_turn_without_web_tools_never_passes_the_key_on(
    world: World, protocol: str, stream: bool
) -> None:
    world.upstream.queue(Step(content=SPLIT))
    response = post(world, PATHS[protocol], {**PLAIN[protocol], "stream": stream})
    assert response.status_code == 200, response.text
    assert_no_key(response.text, f"the {protocol} reply")
    assert ("***" if stream else "Here it is: ***") in response.text


@pytest.mark.parametrize("stream", [False, True])
def test_the_relay_hides_a_key_written_whole(world: World, stream: bool) -> None:
    world.upstream.queue(Step(content=[f"The key is {UPSTREAM_KEY}.", " Done."]))
    response = post(world, PATHS["chat"], {**BODIES["relay"], "stream": stream})
    assert response.status_code == 200, response.text
    assert_no_key(response.text, "the relayed reply")
    assert "The key is ***." in response.text


@pytest.mark.parametrize(
    "pieces",
    [SPLIT, ["The key: ", *UPSTREAM_KEY, " ends here s"]],
    ids=["in pieces", "a character a frame"],
)
def test_the_relay_hides_a_key_spread_over_frames(world: World, pieces: list[str]) -> None:
    """Relayed frames pass on as they came, but for the texts that held part of a key; the
    SDK's streamed text has the key hidden whole, and the rest of the text as written."""
    world.upstream.queue(Step(content=pieces))
    response = post(world, PATHS["chat"], {**BODIES["relay"], "stream": True})
    assert response.status_code == 200, response.text
    assert_no_key(response.text, "the relayed stream")
    world.upstream.queue(Step(content=pieces))
    chat = openai_client(world.served.base + "/v1", "unused")
    said = "".join(
        chunk.choices[0].delta.content or ""
        for chunk in chat.chat.completions.create(model="m", messages=USER, stream=True)  # type: ignore[call-overload]
        if chunk.choices
    )
    assert said == Redactor([UPSTREAM_KEY])("".join(pieces))
    assert "***" in said and UPSTREAM_KEY not in said


def test_the_sdks_read_the_hidden_answer_whole(world: World) -> None:
    """The SDKs' stream helpers put the pieces together: the final text has no key either."""
    base = world.served.base
    searched_then_said(world)
    chat = openai_client(base + "/v1", "unused")
    with chat.chat.completions.stream(
        model="m",
        messages=USER,  # type: ignore[arg-type]
        tools=[{"type": "deepseek_web_search"}],  # type: ignore[list-item]
    ) as events:
        for _ in events:
            pass
        final = events.get_final_completion()
    said = final.choices[0].message.content or ""
    assert said.startswith("Here it is: ***")
    assert_no_key(said, "Chat's final completion")

    searched_then_said(world)
    with chat.responses.stream(
        model="m", input="What is new?", tools=[{"type": "web_search"}]
    ) as stream:
        for _ in stream:
            pass
        response = stream.get_final_response()
    assert response.output_text.startswith("Here it is: ***")
    assert_no_key(response.model_dump_json(), "the final response")

    searched_then_said(world)
    claude = anthropic_client(base, "unused")
    with claude.messages.stream(
        model="m",
        max_tokens=64,
        messages=USER,  # type: ignore[arg-type]
        tools=[{"type": "web_search_20250305", "name": "web_search"}],
    ) as events:
        for _ in events:
            pass
        message = events.get_final_message()
    assert_no_key(message.model_dump_json(), "the final message")
    assert "Here it is: ***" in "".join(
        block.text for block in message.content if block.type == "text"
    )


def test_no_log_line_holds_the_key(world: World) -> None:
    """Runs last in this module: by now every reply above was logged at debug level."""
    searched_then_said(world)
    post(world, PATHS["chat"], {**BODIES["chat"], "stream": True})
    world.served.wait_line("POST /v1/chat/completions 200")
    assert_no_key(world.served.text(), "the server's log")
