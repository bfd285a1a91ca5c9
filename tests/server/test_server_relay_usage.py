"""A relayed Chat stream (no web tools: Open WebUI's usual path) counts its upstream tokens for
its key's usage and the metrics. The server asks the upstream for the usage chunk; a client
that did not ask for it never sees it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from providers_for_tests import ScriptedFetch
from scripted_upstream import ScriptedUpstream, Step
from sdk_clients import openai_client
from server_harness import LiveServer, default_search
from webreach.cache import MemoryStore
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.server.core.upstream.usage import has_usage, read_usage
from webreach.tools import ToolOptions

ALICE = "sk-alice-secret-4242"
ADMIN = "admin-secret-7777"
USER = [{"role": "user", "content": "hi"}]


@pytest.fixture
def served(upstream: ScriptedUpstream) -> Iterator[str]:
    config = ServerSettings(
        upstream_base_url=upstream.url,
        upstream_api_key="upstream-key",
        signing_key="test-signing-key-of-32-bytes-or-more",
        server_api_keys=f"alice:{ALICE}",
        admin_api_key=ADMIN,
        metrics=True,
    )
    runtime = WebRuntime()
    runtime.register_search_provider(default_search())
    runtime.register_fetch_provider(ScriptedFetch())
    app = create_app(config, runtime, ToolOptions(), store=MemoryStore())
    with LiveServer(app) as server:
        yield server.url


def client(url: str) -> openai.OpenAI:
    return openai_client(url + "/v1", ALICE)


def alice_usage(url: str) -> dict[str, int]:
    answer = httpx.get(f"{url}/admin/usage", headers={"authorization": f"Bearer {ADMIN}"})
    assert answer.status_code == 200, answer.text
    usage: dict[str, int] = answer.json()["keys"]["alice"]
    return usage


def tokens_metric(url: str) -> dict[str, float]:
    page = httpx.get(f"{url}/metrics", headers={"authorization": f"Bearer {ADMIN}"}).text
    return {
        sample.labels["kind"]: sample.value
        for family in text_string_to_metric_families(page)
        for sample in family.samples
        if sample.name == "webreach_upstream_tokens_total" and sample.labels["key"] == "alice"
    }


def test_a_relayed_stream_counts_its_tokens_and_hides_the_usage_chunk_it_did_not_ask_for(
    upstream: ScriptedUpstream, served: str
) -> None:
    upstream.queue(Step(content="Hello there.", usage=(40, 9)))
    chunks = list(client(served).chat.completions.create(model="m", messages=USER, stream=True))  # type: ignore[arg-type]
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello there."
    assert all(c.choices for c in chunks), "a usage-only chunk reached a client that did not ask"
    assert all(c.usage is None for c in chunks)
    asked: dict[str, Any] = upstream.requests[-1]
    assert asked["stream_options"] == {"include_usage": True}
    usage = alice_usage(served)
    assert (usage["input_tokens"], usage["output_tokens"]) == (40, 9)
    assert tokens_metric(served) == {"prompt": 40.0, "completion": 9.0}


def test_a_client_that_asks_for_usage_gets_its_chunk_and_the_tokens_count_once(
    upstream: ScriptedUpstream, served: str
) -> None:
    upstream.queue(Step(content="Hi.", usage=(12, 3)))
    chunks = list(
        client(served).chat.completions.create(
            model="m",
            messages=USER,  # type: ignore[arg-type]
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    reported = [c.usage for c in chunks if c.usage is not None]
    assert [(u.prompt_tokens, u.completion_tokens) for u in reported] == [(12, 3)]
    usage = alice_usage(served)
    assert (usage["input_tokens"], usage["output_tokens"]) == (12, 3)


def test_a_client_that_said_no_to_usage_is_still_counted_and_still_not_shown(
    upstream: ScriptedUpstream, served: str
) -> None:
    upstream.queue(Step(content="Hi.", usage=(7, 2)))
    body = {
        "model": "m",
        "messages": USER,
        "stream": True,
        "stream_options": {"include_usage": False},
    }
    headers = {"authorization": f"Bearer {ALICE}"}
    with httpx.stream("POST", f"{served}/v1/chat/completions", json=body, headers=headers) as r:
        text = r.read().decode()
    assert r.status_code == 200
    assert '"usage":{' not in text.replace(" ", "") and "[DONE]" in text
    assert upstream.requests[-1]["stream_options"] == {"include_usage": True}
    usage = alice_usage(served)
    assert (usage["input_tokens"], usage["output_tokens"]) == (7, 2)


def test_a_relayed_whole_answer_counts_its_tokens(upstream: ScriptedUpstream, served: str) -> None:
    upstream.queue(Step(content="Whole.", usage=(21, 4)))
    reply = client(served).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert reply.usage is not None and reply.usage.prompt_tokens == 21
    assert "stream_options" not in upstream.requests[-1]
    usage = alice_usage(served)
    assert (usage["input_tokens"], usage["output_tokens"]) == (21, 4)
    assert tokens_metric(served) == {"prompt": 21.0, "completion": 4.0}


CHUNK = b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"Hi"}}],"usage":null}\n\n'
ONLY_USAGE = b'data: {"id":"c","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2}}\n\n'


@pytest.mark.parametrize("separator", [b"\n\n", b"\r\n\r\n"])
def test_the_usage_only_chunk_is_cut_out_of_a_block_whole_events_around_it_kept(
    separator: bytes,
) -> None:
    block = (CHUNK + ONLY_USAGE + b"data: [DONE]\n\n").replace(b"\n\n", separator)
    shown, usage = read_usage(block, hide=True)
    assert usage is not None and (usage.input_tokens, usage.output_tokens) == (4, 2)
    assert shown == (CHUNK + b"data: [DONE]\n\n").replace(b"\n\n", separator)
    assert read_usage(block, hide=False)[0] == block


@pytest.mark.parametrize("separator", [b"\n\n", b"\r\n\r\n"])
def test_a_usage_only_chunk_that_opens_the_block_is_cut_out_whole(separator: bytes) -> None:
    """A read of the upstream's socket can begin at the usage chunk; nothing of it may stay
    (a busy machine once passed on ``da`` of its ``data:``, glued to ``[DONE]``)."""
    block = (ONLY_USAGE + b"data: [DONE]\n\n").replace(b"\n\n", separator)
    shown, usage = read_usage(block, hide=True)
    assert shown == b"data: [DONE]" + separator
    assert usage is not None and usage.input_tokens == 4
    assert read_usage(ONLY_USAGE, hide=True)[0] == b""


def test_usage_on_a_chunk_with_choices_is_read_and_the_chunk_kept() -> None:
    block = b'data: {"choices":[{"index":0,"delta":{}}], "usage": {"prompt_tokens":9}}\n\n'
    shown, usage = read_usage(block, hide=True)
    assert shown == block
    assert usage is not None and usage.input_tokens == 9


def test_the_last_of_several_usages_counts_and_text_that_quotes_usage_is_not_one() -> None:
    quoted = b'data: {"choices":[{"delta":{"content":"\\"usage\\":{\\"x\\":1}"}}]}\n\n'
    later = ONLY_USAGE.replace(b'"prompt_tokens":4', b'"prompt_tokens":40')
    shown, usage = read_usage(quoted + ONLY_USAGE + later, hide=True)
    assert shown == quoted
    assert usage is not None and usage.input_tokens == 40
    assert not has_usage(quoted)


def test_a_broken_usage_object_is_passed_on_as_it_came() -> None:
    block = b'data: {"choices":[],"usage":{"prompt_tokens":\n\n'
    assert read_usage(block, hide=True) == (block, None)
