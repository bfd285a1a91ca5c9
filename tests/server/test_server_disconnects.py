"""Clients that give up: nothing they started may keep running, or keep a connection busy.

The server here uses the real Exa provider and the real ``http`` fetcher, against a replay
server that holds its answers until the caller hangs up — so a connection that is not closed
shows up as a request the replay server still holds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from client_sockets import ABANDON_MARKERS, abandon, wait_for
from replay_server import ReplayServer, Reply
from scripted_upstream import Call, ScriptedUpstream, Step
from server_harness import LiveServer
from webreach.net import create_client
from webreach.providers.fetch.http import HttpFetchProvider
from webreach.providers.search.exa import ExaSearchProvider
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

USER = [{"role": "user", "content": "What is new in Python?"}]
PAGE = "<html><head><title>Notes</title></head><body><article><p>{}</p></article></body></html>"
FOUND = {"results": [{"url": "https://python.example/notes", "title": "Notes"}]}

SEARCH_BODIES: dict[str, dict[str, Any]] = {
    "chat": {"model": "m", "messages": USER, "tools": [{"type": "deepseek_web_search"}]},
    "responses": {
        "model": "m",
        "input": "What is new in Python?",
        "tools": [{"type": "web_search"}],
    },
    "messages": {
        "model": "m",
        "max_tokens": 200,
        "messages": USER,
        "tools": [{"type": "web_search_20250305", "name": "web_search"}],
    },
}
PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "messages": "/v1/messages"}


class Stack:
    """The server in front of a scripted upstream, searching and fetching for real."""

    def __init__(self, upstream: ScriptedUpstream, replay: ReplayServer, url: str) -> None:
        self.upstream = upstream
        self.replay = replay
        self.url = url
        self.gate = threading.Event()

    def hold_searches(self) -> None:
        self.replay.route("POST", "/search", Reply(json=FOUND, hold=self.gate))

    def answer_searches(self) -> None:
        self.replay.route("POST", "/search", Reply(json=FOUND))


@pytest.fixture
def stack(upstream: ScriptedUpstream, replay: ReplayServer) -> Iterator[Stack]:
    client = create_client(timeout=30)
    runtime = WebRuntime()
    runtime.own(client)
    runtime.register_search_provider(
        ExaSearchProvider(api_key="exa-key", client=client, base_url=replay.url)
    )
    fetcher = HttpFetchProvider(allow=["127.0.0.1"])
    runtime.register_fetch_provider(fetcher)
    runtime.own(fetcher)  # closed with the runtime, by the app's lifespan, in the server's loop
    config = ServerSettings(upstream_base_url=upstream.url, signing_key="k" * 32)
    with LiveServer(create_app(config, runtime, ToolOptions(), keepalive_seconds=0.2)) as server:
        result = Stack(upstream, replay, server.url)
        yield result
        result.gate.set()


def finish_normally(stack: Stack) -> None:
    """A search after the abandoned ones runs to its answer."""
    stack.answer_searches()
    stack.upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["after"]})]), Step(content="Fine【1】.")
    )
    reply = httpx.post(stack.url + PATHS["chat"], json=SEARCH_BODIES["chat"], timeout=20)
    assert reply.status_code == 200
    assert reply.json()["choices"][0]["message"]["content"] == "Fine."


@pytest.mark.parametrize("protocol", ["chat", "responses", "messages"])
def test_streaming_clients_that_leave_mid_search_free_the_provider_connection(
    stack: Stack, protocol: str
) -> None:
    stack.hold_searches()
    for left in range(1, 4):
        stack.upstream.queue(Step(calls=[Call("web_search", {"queries": [f"abandoned {left}"]})]))
        abandon(
            stack.url + PATHS[protocol],
            {**SEARCH_BODIES[protocol], "stream": True},
            marker=ABANDON_MARKERS[protocol],
            until=lambda n=left: len(stack.replay.requests) >= n,
        )
        assert wait_for(lambda n=left: stack.replay.disconnects >= n), (
            f"after {left} clients left, the provider saw {stack.replay.disconnects} hang-ups"
        )
    finish_normally(stack)


def read_link_request(page: str) -> tuple[Step, dict[str, Any]]:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": f"Summarise {page}"}],
        "tools": [{"type": "deepseek_read_url"}],
    }
    return Step(calls=[Call("read_link", {"url": page})]), body


def open_page_request(page: str) -> tuple[Step, dict[str, Any]]:
    step = Step(reasoning="Open it.", calls=[Call("open_page", {"url": page})])
    return step, {**SEARCH_BODIES["chat"], "thinking": {"type": "enabled"}}


@pytest.mark.parametrize("request_for", [read_link_request, open_page_request])
def test_a_client_that_leaves_while_a_page_is_fetched_frees_the_fetch_connection(
    stack: Stack, request_for: Callable[[str], tuple[Step, dict[str, Any]]]
) -> None:
    page = stack.replay.url + "/page"
    stack.replay.route(
        "GET", "/page", Reply(body=PAGE.format("x").encode(), hold=stack.gate, headers=HTML)
    )
    step, body = request_for(page)
    stack.upstream.queue(step)
    abandon(
        stack.url + PATHS["chat"],
        {**body, "stream": True},
        marker=b"call_started",
        # robots.txt may be read first: the client leaves only once the page itself is asked for.
        until=lambda: any(seen.path == "/page" for seen in stack.replay.requests),
    )
    assert wait_for(lambda: stack.replay.disconnects >= 1)
    finish_normally(stack)


HTML = {"content-type": "text/html; charset=utf-8"}


@pytest.mark.parametrize(
    ("protocol", "stream"),
    [
        ("chat", True),
        ("chat", False),
        ("responses", True),
        ("responses", False),
        ("messages", True),
        ("messages", False),
    ],
)
def test_a_client_that_leaves_before_the_model_answers_closes_the_upstream_request(
    stack: Stack, protocol: str, stream: bool
) -> None:
    stack.upstream.queue(Step(hang=True))
    abandon(
        stack.url + PATHS[protocol],
        {**SEARCH_BODIES[protocol], "stream": stream},
        until=lambda: stack.upstream.waiting == 1,
    )
    assert wait_for(lambda: len(stack.upstream.hung_up) == 1, timeout=5)


@pytest.mark.parametrize("stream", [True, False])
def test_a_relayed_request_is_closed_upstream_when_its_client_leaves(
    stack: Stack, stream: bool
) -> None:
    stack.upstream.queue(Step(hang=True))
    abandon(
        stack.url + PATHS["chat"],
        {"model": "m", "messages": USER, "stream": stream},
        until=lambda: stack.upstream.waiting == 1,
    )
    assert wait_for(lambda: len(stack.upstream.hung_up) == 1, timeout=5)
