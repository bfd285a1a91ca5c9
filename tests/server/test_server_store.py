"""What the server keeps between requests: Responses items and conversations, read pages.

Clients with ``store: true`` defaults send earlier output back as ``item_reference`` items or
chain turns with ``previous_response_id``; clients that rebuild blocks from typed fields drop a
read page's ``signature``. Both work while the store holds what they name — in one process, and
across two ``webreach serve`` processes sharing Redis and a signing key.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from cli_helpers import clean_env
from client_sockets import STARTUP_PATIENCE
from providers_for_tests import ScriptedFetch
from replay_server import ReplayServer, Reply
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client
from sdk_clients import openai_client as client
from test_server_read_link import ARTICLE, ARTICLE_URL

READ = [{"type": "deepseek_read_url"}]
ASK = f"Summarise {ARTICLE_URL}"


def read_step(url: str = ARTICLE_URL) -> Step:
    return Step(calls=[Call("read_link", {"url": url})])


def upstream_text(upstream: ScriptedUpstream) -> str:
    return str(upstream.requests[-1]["messages"])


def test_previous_response_id_continues_the_stored_conversation(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(read_step(), Step(content="A faster interpreter."))
    first = client(webreach_url).responses.create(model="m", input=ASK, tools=READ)  # type: ignore[arg-type]
    assert first.store is True
    second = client(webreach_url).responses.create(
        model="m",
        input="Quote its first sentence.",
        previous_response_id=first.id,
        tools=READ,  # type: ignore[arg-type]
    )
    assert second.previous_response_id == first.id
    sent = upstream.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[0]["content"].startswith(ASK)
    assert "JIT compiler" in sent[0]["content"]  # the page read in turn 1, restored
    assert sent[1]["content"] == "A faster interpreter."
    assert fetcher.calls == [ARTICLE_URL]


def test_item_references_resolve_to_the_stored_items(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(read_step(), Step(content="A faster interpreter."))
    first = client(webreach_url).responses.create(model="m", input=ASK, tools=READ)  # type: ignore[arg-type]
    references = [{"type": "item_reference", "id": item.id} for item in first.output]
    assert len(references) == 2  # the read link, the answer
    client(webreach_url).responses.create(
        model="m",
        input=[{"role": "user", "content": ASK}, *references, {"role": "user", "content": "More?"}],  # type: ignore[list-item]
        tools=READ,  # type: ignore[arg-type]
    )
    sent = upstream.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "JIT compiler" in sent[0]["content"]
    assert sent[1]["content"] == "A faster interpreter."


def test_store_false_keeps_nothing(upstream: ScriptedUpstream, webreach_url: str) -> None:
    first = client(webreach_url).responses.create(model="m", input="Hi", store=False)
    assert first.store is False
    with pytest.raises(openai.BadRequestError, match=f"response `{first.id}` is unknown"):
        client(webreach_url).responses.create(
            model="m", input="Again", previous_response_id=first.id
        )
    with pytest.raises(openai.BadRequestError, match=f"item `{first.output[0].id}` is unknown"):
        client(webreach_url).responses.create(
            model="m", input=[{"type": "item_reference", "id": first.output[0].id}]
        )


def test_a_messages_client_that_drops_the_signature_gets_the_page_from_the_store(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    """langchain-anthropic and pydantic-ai rebuild blocks from typed fields, without
    ``signature``; the page is found by the block's ``tool_use_id``."""
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(read_step(), Step(content="A faster interpreter."))
    claude = anthropic_client(webreach_url.removesuffix("/v1"))
    tools = [{"type": "web_fetch_20250910", "name": "web_fetch"}]
    question = [{"role": "user", "content": ASK}]
    first = claude.messages.create(model="m", max_tokens=64, messages=question, tools=tools)  # type: ignore[arg-type,list-item]
    blocks = [block.model_dump(exclude_none=True) for block in first.content]
    for block in blocks:
        block.pop("signature", None)
    history = [
        *question,
        {"role": "assistant", "content": blocks},
        {"role": "user", "content": "Quote it."},
    ]
    claude.messages.create(model="m", max_tokens=64, messages=history, tools=tools)  # type: ignore[arg-type]
    assert "JIT compiler" in upstream_text(upstream)
    assert fetcher.calls == [ARTICLE_URL]


# --- two replicas ----------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "webreach", "serve", "--port", str(port)],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_PATIENCE
    while True:
        try:
            httpx.get(base + "/healthz", timeout=1)
            return process, base
        except httpx.TransportError:
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)


@pytest.fixture
def replicas(upstream: ScriptedUpstream, redis_url: str) -> Iterator[tuple[str, str, str]]:
    """Two ``webreach serve`` processes sharing Redis and a signing key; a page server."""
    with ReplayServer() as pages:
        html = "<html><head><title>Notes</title></head><body><article>{}</article></body></html>"
        body = html.format(
            "<p>" + "Python 3.14 has a JIT compiler and better error messages. " * 8 + "</p>"
        )
        pages.route(
            "GET", "/notes", Reply(body=body.encode(), headers={"content-type": "text/html"})
        )
        env = clean_env(
            WEBREACH_UPSTREAM_BASE_URL=upstream.url,
            WEBREACH_SIGNING_KEY="one key for every replica of this deployment",
            WEBREACH_CACHE=redis_url,
            WEBREACH_FETCH_ALLOW="127.0.0.1",
            WEBREACH_FETCH_PROVIDER="http",
            PYTHONPATH=os.pathsep.join(sys.path),
        )
        started = [_serve(env) for _ in range(2)]
        try:
            yield started[0][1], started[1][1], pages.url + "/notes"
        finally:
            for process, _ in started:
                process.terminate()
                process.wait(10)


def test_turns_alternating_between_replicas_resolve_everything(
    upstream: ScriptedUpstream, replicas: tuple[str, str, str]
) -> None:
    a, b, page = replicas
    ask = f"Summarise {page}"
    upstream.queue(read_step(page), Step(content="It has a JIT."))
    first = client(a + "/v1").responses.create(model="m", input=ask, tools=READ)  # type: ignore[arg-type]

    upstream.queue(Step(content="Quoted."))
    second = client(b + "/v1").responses.create(
        model="m",
        input="Quote it.",
        previous_response_id=first.id,
        tools=READ,  # type: ignore[arg-type]
    )
    assert "JIT compiler" in upstream_text(upstream)

    upstream.queue(Step(content="Again."))
    references: list[Any] = [{"type": "item_reference", "id": item.id} for item in first.output]
    client(a + "/v1").responses.create(
        model="m",
        input=[{"role": "user", "content": ask}, *references, {"role": "user", "content": "And?"}],
        tools=READ,  # type: ignore[arg-type]
    )
    assert "JIT compiler" in upstream_text(upstream)

    upstream.queue(Step(content="Once more."))
    client(b + "/v1").responses.create(
        model="m",
        input="Last one.",
        previous_response_id=second.id,
        tools=READ,  # type: ignore[arg-type]
    )
    sent = upstream.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert "JIT compiler" in sent[0]["content"]


def test_a_page_read_on_one_replica_comes_back_unsealed_on_the_other(
    upstream: ScriptedUpstream, replicas: tuple[str, str, str]
) -> None:
    a, b, page = replicas
    tools = [{"type": "web_fetch_20250910", "name": "web_fetch"}]
    question = [{"role": "user", "content": f"Summarise {page}"}]
    upstream.queue(read_step(page), Step(content="It has a JIT."))
    first = anthropic_client(a).messages.create(
        model="m",
        max_tokens=64,
        messages=question,
        tools=tools,  # type: ignore[arg-type]
    )
    blocks = [block.model_dump(exclude_none=True) for block in first.content]
    for block in blocks:
        block.pop("signature", None)
    upstream.queue(Step(content="Quoted."))
    anthropic_client(b).messages.create(
        model="m",
        max_tokens=64,
        messages=[
            *question,
            {"role": "assistant", "content": blocks},
            {"role": "user", "content": "Quote it."},
        ],  # type: ignore[list-item]
        tools=tools,  # type: ignore[arg-type]
    )
    assert "JIT compiler" in upstream_text(upstream)
