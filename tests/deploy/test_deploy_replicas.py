"""deploy/compose.yaml's topology without containers: two replicas started as the image starts
them (its entry point, ready when its health check passes), in the environment compose gives
them (compose.yaml's ``environment`` over the env file's template), sharing a real redis-server
and one signing key, in front of a scripted upstream.

A conversation may move between replicas at every turn, as the load balancer sends it: a
Responses response stored by one is continued by the other, and a page one replica read and
sealed is opened by the other, even with the store emptied. A replica with a key of its own opens
nothing (and still answers), which is why the key must be shared.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
import redis

from cli_helpers import clean_env
from deploy_files import (
    ENV_EXAMPLE,
    compose,
    env_file,
    free_port,
    run_image,
    service_environment,
    webreach_on_path,
)
from replay_server import ReplayServer, Reply
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client

INBOUND_KEY = "deploy-inbound-key"
SIGNING_KEY = "the one signing key of this deployment"
HTML = (
    "<html><head><title>Notes</title></head><body><article><p>"
    + "Python 3.14 has a JIT compiler and better error messages. " * 8
    + "</p></article></body></html>"
)

Replica = Callable[..., str]
"""Starts one more replica (keyword arguments override its environment); returns its URL."""


def compose_environment(redis_url: str, **filled: str) -> dict[str, str]:
    """What compose gives every replica: the env file (here its template, ``filled`` in), then
    the service's ``environment`` as compose interpolates it from that file, which wins;
    Redis is the compose service's, moved to the test's redis-server."""
    environment = env_file(ENV_EXAMPLE)
    assert set(filled) <= set(environment), "fill only what the template names"
    environment.update(filled)
    environment.update(service_environment(compose(environment)["services"]["webreach"]))
    assert environment["WEBREACH_CACHE"].startswith("redis://redis:")
    environment["WEBREACH_CACHE"] = redis_url
    return environment


@pytest.fixture
def page_url() -> Iterator[str]:
    with ReplayServer() as pages:
        pages.route(
            "GET", "/notes", Reply(body=HTML.encode(), headers={"content-type": "text/html"})
        )
        yield pages.url + "/notes"


@pytest.fixture
def replica(upstream: ScriptedUpstream, redis_url: str, tmp_path: Path) -> Iterator[Replica]:
    shared = compose_environment(
        redis_url,
        WEBREACH_UPSTREAM_BASE_URL=upstream.url,
        WEBREACH_SERVER_API_KEYS=INBOUND_KEY,
        WEBREACH_SIGNING_KEY=SIGNING_KEY,
    )
    with ExitStack() as running:

        def start(**override: str) -> str:
            port = free_port()
            env = clean_env(
                **{
                    **shared,
                    **override,
                    # Each container has its own 8080; processes on one machine need a port each.
                    "PORT": str(port),
                    "PATH": webreach_on_path(tmp_path),
                    "PYTHONPATH": os.pathsep.join(sys.path),
                    # The tests' own: the page server is on loopback, which the guard refuses.
                    "WEBREACH_FETCH_ALLOW": "127.0.0.1",
                    "WEBREACH_FETCH_PROVIDER": "http",
                }
            )
            # `--host 127.0.0.1`: the image binds 0.0.0.0; the tests stay on loopback.
            running.enter_context(run_image(env, tmp_path, "--host", "127.0.0.1"))
            return f"http://127.0.0.1:{port}"

        yield start


def responses(url: str) -> openai.OpenAI:
    return openai_client(url + "/v1", INBOUND_KEY)


def messages(url: str) -> anthropic.Anthropic:
    return anthropic_client(url, INBOUND_KEY)


def sent_to_upstream(upstream: ScriptedUpstream) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = upstream.requests[-1]["messages"]
    return sent


def test_a_stored_response_is_continued_on_the_other_replica(
    upstream: ScriptedUpstream, replica: Replica, page_url: str
) -> None:
    a, b = replica(), replica()
    tools: Any = [{"type": "deepseek_read_url"}]
    ask = f"Summarise {page_url}"

    upstream.queue(Step(calls=[Call("read_link", {"url": page_url})]), Step(content="A JIT."))
    first = responses(a).responses.create(model="m", input=ask, tools=tools)
    assert first.store is True  # the Responses default: kept in Redis

    upstream.queue(Step(content="Quoted."))
    second = responses(b).responses.create(
        model="m", input="Quote it.", previous_response_id=first.id, tools=tools
    )
    assert second.previous_response_id == first.id
    sent = sent_to_upstream(upstream)
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[0]["content"].startswith(ask)
    assert "JIT compiler" in sent[0]["content"]  # the page replica A read, restored on B
    assert sent[1]["content"] == "A JIT."

    # And back to A, naming the response B stored.
    upstream.queue(Step(content="Done."))
    third = responses(a).responses.create(
        model="m", input="Thanks.", previous_response_id=second.id, tools=tools
    )
    assert third.output_text == "Done."
    sent = sent_to_upstream(upstream)
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[3]["content"] == "Quoted."


def test_a_sealed_page_opens_on_every_replica_with_the_shared_key_and_on_no_other(
    upstream: ScriptedUpstream, replica: Replica, page_url: str, redis_url: str
) -> None:
    a, b = replica(), replica()
    tools: Any = [{"type": "web_fetch_20250910", "name": "web_fetch"}]
    question: list[Any] = [{"role": "user", "content": f"Summarise {page_url}"}]

    upstream.queue(Step(calls=[Call("read_link", {"url": page_url})]), Step(content="A JIT."))
    first = messages(a).messages.create(model="m", max_tokens=64, messages=question, tools=tools)
    blocks = [block.model_dump(exclude_none=True) for block in first.content]
    sealed = [block for block in blocks if block.get("signature")]
    assert sealed, "the read page travels sealed in the reply"
    history: list[Any] = [
        *question,
        {"role": "assistant", "content": blocks},
        {"role": "user", "content": "Quote it."},
    ]
    # Only the signature can bring the page back now: the store forgets everything.
    redis.Redis.from_url(redis_url).flushall()

    upstream.queue(Step(content="Quoted."))
    messages(b).messages.create(model="m", max_tokens=64, messages=history, tools=tools)
    assert "JIT compiler" in str(sent_to_upstream(upstream))

    # A replica that was not given the deployment's key cannot open it; the turn still works.
    stranger = replica(WEBREACH_SIGNING_KEY="a key of its own, not the deployment's")
    upstream.queue(Step(content="Without the page."))
    reply = messages(stranger).messages.create(
        model="m", max_tokens=64, messages=history, tools=tools
    )
    assert "Without the page." in str(reply.content)
    assert "JIT compiler" not in str(sent_to_upstream(upstream))
