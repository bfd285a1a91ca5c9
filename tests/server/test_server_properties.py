"""Property tests: whatever JSON a client sends, the server answers it without a 500.

Bodies are generated around each protocol's real fields (so many get deep into the parsers)
with arbitrary JSON in every slot. The parsers are checked in-process on many bodies, and the
running server over HTTP on fewer, as a client meets it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scripted_upstream import ScriptedUpstream
from server_harness import LiveServer
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app, default_codecs
from webreach.server.core.turn.errors import RequestError
from webreach.server.core.wire.inbound import parse_json
from webreach.tools import ToolOptions

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
anything = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=16,
)


def sometimes(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly a plausible value, sometimes anything at all."""
    return strategy | anything


TOOL_TYPES = [
    "deepseek_web_search",
    "deepseek_read_url",
    "web_search",
    "web_search_preview",
    "web_search_20250305",
    "web_fetch_20250910",
    "function",
    "custom",
    "namespace",
]
tools = st.lists(
    sometimes(
        st.fixed_dictionaries(
            {"type": sometimes(st.sampled_from(TOOL_TYPES))},
            optional={
                "name": sometimes(st.sampled_from(["web_search", "web_fetch", "f", "read_link"])),
                "function": sometimes(st.fixed_dictionaries({"name": st.just("f")})),
                "max_uses": anything,
                "allowed_domains": anything,
                "user_location": anything,
                "input_schema": anything,
                "parameters": anything,
            },
        )
    ),
    max_size=3,
)
content = sometimes(st.text(max_size=20)) | st.lists(
    sometimes(
        st.fixed_dictionaries(
            {
                "type": sometimes(
                    st.sampled_from(
                        [
                            "text",
                            "input_text",
                            "image",
                            "tool_use",
                            "tool_result",
                            "web_search_tool_result",
                            "server_tool_use",
                        ]
                    )
                )
            },
            optional={
                "text": anything,
                "id": anything,
                "tool_use_id": anything,
                "content": anything,
                "input": anything,
                "source": anything,
                "signature": anything,
            },
        )
    ),
    max_size=3,
)
message = st.fixed_dictionaries(
    {"role": sometimes(st.sampled_from(["user", "assistant", "system", "tool", "developer"]))},
    optional={
        "content": content,
        "tool_calls": anything,
        "tool_call_id": anything,
        "server_tool_calls": anything,
        "type": anything,
    },
)
messages = sometimes(st.lists(sometimes(message), max_size=4))
common = {
    "model": sometimes(st.sampled_from(["m", ""])),
    "stream": sometimes(st.booleans()),
    "tools": sometimes(tools),
    "tool_choice": sometimes(st.sampled_from(["auto", "none", "required"])) | anything,
    "temperature": anything,
    "top_p": anything,
    "thinking": sometimes(
        st.fixed_dictionaries({"type": st.sampled_from(["enabled", "disabled", "adaptive"])})
    ),
    "metadata": anything,
}
BODIES = {
    "chat": st.fixed_dictionaries(
        {},
        optional={
            **common,
            "messages": messages,
            "max_tokens": anything,
            "stop": anything,
            "n": anything,
            "web_search_options": anything,
            "stream_options": anything,
        },
    ),
    "responses": st.fixed_dictionaries(
        {},
        optional={
            **common,
            "input": sometimes(st.text(max_size=10)) | messages,
            "instructions": anything,
            "max_output_tokens": anything,
            "reasoning": sometimes(
                st.fixed_dictionaries({"effort": st.sampled_from(["low", "high", "none"])})
            ),
            "text": anything,
            "previous_response_id": anything,
            "store": anything,
            "include": anything,
        },
    ),
    "messages": st.fixed_dictionaries(
        {},
        optional={
            **common,
            "messages": messages,
            "system": sometimes(st.text(max_size=10)) | anything,
            "max_tokens": sometimes(st.integers(min_value=-2, max_value=64)),
            "stop_sequences": anything,
        },
    ),
}
CODECS = default_codecs()
ALL_CHECKS = list(HealthCheck)
EXAMPLES = int(os.environ.get("TEST_FUZZ_EXAMPLES", "300"))
"""Examples per property; CI runs a few hundred, ``TEST_FUZZ_EXAMPLES=20000`` hunts longer."""


@pytest.mark.parametrize("protocol", ["chat", "responses", "messages"])
def test_parsers_refuse_only_with_request_errors(protocol: str) -> None:
    codec = CODECS[protocol]

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=ALL_CHECKS)
    @given(BODIES[protocol])
    def check(body: dict[str, Any]) -> None:
        raw = json.dumps(body).encode()
        refused: RequestError | None = None
        try:
            codec.parse(parse_json(raw))
        except RequestError as error:
            refused = error
        assert refused is None or (400 <= refused.status < 500 and refused.message)

    check()


@given(st.binary(max_size=200) | anything.map(lambda value: json.dumps(value).encode()))
@settings(max_examples=EXAMPLES, deadline=None)
def test_any_bytes_are_an_object_or_a_400(raw: bytes) -> None:
    outcome: object
    try:
        outcome = parse_json(raw)
    except RequestError as error:
        outcome = error.status
    assert outcome == 400 or isinstance(outcome, dict)


PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "messages": "/v1/messages"}


@pytest.fixture(scope="module")
def live() -> Iterator[str]:
    with ScriptedUpstream() as upstream:
        upstream.record = False
        config = ServerSettings(upstream_base_url=upstream.url)
        app = create_app(config, WebRuntime(), ToolOptions(), keepalive_seconds=5)
        with LiveServer(app) as server:
            yield server.url


@pytest.mark.parametrize("protocol", ["chat", "responses", "messages"])
def test_the_running_server_never_answers_500(live: str, protocol: str) -> None:
    with httpx.Client(base_url=live, timeout=30) as client:

        @settings(
            max_examples=EXAMPLES // 2, deadline=None, suppress_health_check=list(HealthCheck)
        )
        @given(BODIES[protocol])
        def check(body: dict[str, Any]) -> None:
            response = client.post(PATHS[protocol], json=body)
            assert response.status_code < 500, (body, response.text)
            if response.status_code >= 400:
                error = response.json()["error"]
                assert error["message"]

        check()
