"""``POST /v1/responses/compact`` through the official ``openai`` SDK, against the live server
in front of the scripted upstream."""

from __future__ import annotations

import openai
import pytest

from scripted_upstream import ScriptedUpstream, Step
from sdk_clients import openai_client
from webreach.server.responses.compact import COMPACT_ASK, MAX_INPUT_CHARS, MAX_SUMMARY_TOKENS


def _client(base: str) -> openai.OpenAI:
    return openai_client(base, "unused")


CONVERSATION = [
    {"type": "message", "role": "user", "content": "Remember the code word: slate."},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "OK."}]},
    {"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_1", "output": "42"},
]


def test_a_conversation_becomes_its_user_messages_and_a_summary(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(Step(content="The code word is slate; lookup gave 42."))
    compacted = _client(webreach_url).responses.compact(
        model="m", input=CONVERSATION, instructions="Be brief."
    )
    assert compacted.object == "response.compaction"
    assert compacted.id.startswith("cmp_")
    roles = [item.role for item in compacted.output]  # type: ignore[union-attr]
    assert roles == ["user", "assistant"]
    summary = compacted.output[-1].content[0]  # type: ignore[union-attr]
    assert summary.text == "The code word is slate; lookup gave 42."  # type: ignore[union-attr]
    assert compacted.usage.output_tokens == 5
    asked = upstream.requests[0]
    assert asked["max_tokens"] == MAX_SUMMARY_TOKENS
    assert asked["messages"][0] == {"role": "system", "content": "Be brief."}
    assert asked["messages"][-1] == {"role": "user", "content": COMPACT_ASK}
    assert {"role": "tool", "tool_call_id": "call_1", "content": "42"} in asked["messages"]


def test_the_compacted_window_starts_a_new_response(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(Step(content="Code word: slate."), Step(content="slate"))
    client = _client(webreach_url)
    compacted = client.responses.compact(model="m", input=CONVERSATION)
    window = [item.model_dump(exclude_none=True, warnings=False) for item in compacted.output]
    answer = client.responses.create(
        model="m", input=[*window, {"role": "user", "content": "The word?"}]
    )
    assert answer.output_text == "slate"
    sent = upstream.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == "Code word: slate."


def test_a_stored_response_is_compacted_by_its_id(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(Step(content="Noted."), Step(content="Summary."))
    client = _client(webreach_url)
    first = client.responses.create(model="m", input="The port is 8443.")
    compacted = client.responses.compact(model="m", previous_response_id=first.id, input=[])
    said = compacted.output[0].content[0]  # type: ignore[union-attr]
    assert said.text == "The port is 8443."  # type: ignore[union-attr]
    assert upstream.requests[1]["messages"][1] == {"role": "assistant", "content": "Noted."}


@pytest.mark.parametrize(
    ("body", "param", "said"),
    [
        ({"model": "m", "input": []}, "input", "empty"),
        ({"model": "m"}, "input", "required"),
        ({"model": "m", "input": "hi", "tools": []}, "tools", "not a field"),
        ({"model": "m", "input": "x" * (MAX_INPUT_CHARS + 1)}, "input", "at most"),
        ({"model": "m", "previous_response_id": "resp_gone", "input": []}, None, "unknown"),
    ],
)
def test_bad_compactions_are_refused_naming_what_is_wrong(
    upstream: ScriptedUpstream, webreach_url: str, body: dict[str, object], param: str, said: str
) -> None:
    with pytest.raises(openai.APIStatusError) as refused:
        _client(webreach_url).post("/responses/compact", body=body, cast_to=object)
    error = refused.value.body  # the SDK gives the `error` object
    assert said in error["message"]  # type: ignore[index]
    assert error["param"]  # type: ignore[index] == (param or "previous_response_id")
    assert refused.value.status_code in (400, 413)
    assert upstream.requests == []
