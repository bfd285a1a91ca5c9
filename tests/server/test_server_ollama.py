"""The server in front of Ollama (a fake with Ollama's real paths and error bodies): the
Ollama quickstart of docs/server/protocols.md works, a base URL without ``/v1`` is named at
start, in ``/readyz`` and to the client, and a model without tool calling is named as such."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from fake_ollama import WITH_TOOLS, WITHOUT_TOOLS, FakeOllama
from sdk_clients import openai_client
from server_harness import LiveServer, default_search
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

NO_V1 = "the upstream has no /models: does WEBREACH_UPSTREAM_BASE_URL end in /v1?"


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


def _served(base_url: str) -> LiveServer:
    runtime = WebRuntime()
    runtime.register_search_provider(default_search())
    settings = ServerSettings(
        upstream_base_url=base_url,
        signing_key="test-signing-key-of-at-least-32-bytes",
        ready_window=2.0,
    )
    return LiveServer(create_app(settings, runtime, ToolOptions()))


def _readyz(base: str, status: int) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    seen = None
    while time.monotonic() < deadline:
        answer = httpx.get(base + "/readyz", timeout=10)
        seen = (answer.status_code, answer.text)
        if answer.status_code == status and answer.json().get("reason") != (
            "the upstream has not answered yet"
        ):
            body: dict[str, Any] = answer.json()
            return body
        time.sleep(0.05)
    pytest.fail(f"/readyz never answered {status}; last {seen}")


def _client(base: str) -> openai.OpenAI:
    return openai_client(base + "/v1", "none")


def test_an_ollama_url_without_v1_is_named(
    ollama: FakeOllama, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="webreach.server")
    with _served(ollama.root) as server:
        body = _readyz(server.url, 503)
        assert body["reason"] == NO_V1
        with pytest.raises(openai.NotFoundError) as relayed:
            _client(server.url).chat.completions.create(
                model=WITH_TOOLS, messages=[{"role": "user", "content": "hi"}]
            )
        with pytest.raises(openai.NotFoundError) as searched:
            _client(server.url).chat.completions.create(
                model=WITH_TOOLS,
                messages=[{"role": "user", "content": "news?"}],
                web_search_options={},
            )
    for failure in (relayed.value, searched.value):
        assert "has no /chat/completions: does WEBREACH_UPSTREAM_BASE_URL end in /v1?" in str(
            failure
        )
        assert "404 page not found" in str(failure)
    said = [r.getMessage() for r in caplog.records if r.name == "webreach.server"]
    assert f"not ready: {NO_V1} ({ollama.root.removeprefix('http://')})" in said
    assert not any(line.startswith("ready: ") for line in said)
    assert "GET /models" in ollama.asked


def test_the_ollama_quickstart_answers_and_names_a_model_without_tools(
    ollama: FakeOllama,
) -> None:
    with _served(ollama.root + "/v1") as server:
        assert _readyz(server.url, 200)["status"] == "ready"
        client = _client(server.url)
        reply = client.chat.completions.create(
            model=WITH_TOOLS,
            messages=[{"role": "user", "content": "news?"}],
            web_search_options={},
        )
        assert reply.choices[0].message.content == "Hello from Ollama."
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(
                model=WITHOUT_TOOLS,
                messages=[{"role": "user", "content": "news?"}],
                web_search_options={},
            )
    message = str(refused.value)
    assert "refused tool calling, which web search needs" in message
    assert "choose a model that supports tool calling" in message
    assert f"registry.ollama.ai/library/{WITHOUT_TOOLS} does not support tools" in message
