"""The client's thinking switch reaches the upstream in the upstream's own dialect.

It also turns web search into deep search; here it is about what the model is told: OpenAI-style
upstreams get ``reasoning_effort``, DeepSeek-style ones ``thinking``
(``WEBREACH_UPSTREAM_DIALECT``).
A client that says nothing sends nothing: a model that does not reason would refuse the field.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from scripted_upstream import ScriptedUpstream
from server_harness import LiveServer
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

USER = [{"role": "user", "content": "Think about it."}]
REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "chat on": ("/chat/completions", {"messages": USER, "thinking": {"type": "enabled"}}),
    "chat off": ("/chat/completions", {"messages": USER, "thinking": {"type": "disabled"}}),
    "chat own effort": (
        "/chat/completions",
        {"messages": USER, "thinking": {"type": "enabled"}, "reasoning_effort": "low"},
    ),
    "responses high": ("/responses", {"input": "Think.", "reasoning": {"effort": "high"}}),
    "responses none": ("/responses", {"input": "Think.", "reasoning": {"effort": "none"}}),
    "messages small budget": (
        "/messages",
        {"messages": USER, "thinking": {"type": "enabled", "budget_tokens": 2000}},
    ),
    "messages big budget": (
        "/messages",
        {"messages": USER, "thinking": {"type": "enabled", "budget_tokens": 20000}},
    ),
    "messages adaptive": ("/messages", {"messages": USER, "thinking": {"type": "adaptive"}}),
    "messages off": ("/messages", {"messages": USER, "thinking": {"type": "disabled"}}),
    "silent": ("/chat/completions", {"messages": USER, "title": True}),
}
OPENAI = {
    "chat on": {"reasoning_effort": "medium"},
    "chat off": {},
    "chat own effort": {"reasoning_effort": "low"},
    "responses high": {"reasoning_effort": "high"},
    "responses none": {},
    "messages small budget": {"reasoning_effort": "low"},
    "messages big budget": {"reasoning_effort": "high"},
    "messages adaptive": {"reasoning_effort": "medium"},
    "messages off": {},
    "silent": {},
}
ENABLED = {"thinking": {"type": "enabled"}}
DISABLED = {"thinking": {"type": "disabled"}}
DEEPSEEK = {
    "chat on": ENABLED,
    "chat off": DISABLED,
    "chat own effort": {**ENABLED, "reasoning_effort": "low"},
    "responses high": ENABLED,
    "responses none": DISABLED,
    "messages small budget": ENABLED,
    "messages big budget": ENABLED,
    "messages adaptive": ENABLED,
    "messages off": DISABLED,
    "silent": {},
}


@pytest.fixture(params=["openai", "deepseek"])
def dialect_server(
    request: pytest.FixtureRequest, upstream: ScriptedUpstream
) -> Iterator[tuple[str, str]]:
    config = ServerSettings(upstream_base_url=upstream.url, upstream_dialect=request.param)
    with LiveServer(create_app(config, WebRuntime(), ToolOptions())) as server:
        yield request.param, server.url + "/v1"


@pytest.mark.parametrize("case", list(REQUESTS))
def test_thinking_reaches_the_upstream_in_its_dialect(
    upstream: ScriptedUpstream, dialect_server: tuple[str, str], case: str
) -> None:
    dialect, url = dialect_server
    path, body = REQUESTS[case]
    response = httpx.post(url + path, json={"model": "m", **body}, timeout=30)
    assert response.status_code == 200, response.text
    sent = upstream.requests[-1]
    told = {key: sent[key] for key in ("reasoning_effort", "thinking") if key in sent}
    assert told == (OPENAI if dialect == "openai" else DEEPSEEK)[case]


def test_an_unknown_dialect_is_refused_at_start() -> None:
    with pytest.raises(ValueError, match="upstream_dialect"):
        ServerSettings(upstream_base_url="http://127.0.0.1:9/v1", upstream_dialect="klingon")
