"""The Responses codec: requests to turns, and scripted events read back by the official SDK."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import openai
import pytest

from responses_events import (
    ANSWER_CHUNKS,
    CODEC,
    SOURCE_A,
    SOURCE_B,
    Scripted,
    cited_text,
    client_call_round,
    deep_search_round,
    failed_search_round,
    failing_round,
    plain_round,
    read_link_round,
    render_body,
    render_stream,
    sdk_client,
    search_call,
    search_round,
    sse_payloads,
    truncated_round,
    usage,
)
from webreach.server.core.turn.errors import RequestError, ServerFailure
from webreach.server.core.turn.events import (
    Event,
    Finished,
    ReasoningDelta,
    SearchOutcome,
    TextDelta,
    WebCallCompleted,
    WebCallStarted,
)
from webreach.server.core.turn.shape import DomainFilter, ReadUrlSpec, SearchSpec, Turn
from webreach.tools import SearchFilters

WEB = [{"type": "deepseek_web_search"}]
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
STRICTNESS = pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])


def parse(**body: Any) -> Turn:
    return CODEC.parse({"model": "m", "input": "hi", **body})


def refused(**body: Any) -> str:
    with pytest.raises(RequestError) as caught:
        parse(**body)
    assert caught.value.status == 400
    return caught.value.message


# --- requests ------------------------------------------------------------------------------


def test_a_string_input_is_one_user_message_and_parameters_are_renamed() -> None:
    turn = parse(
        input="Bonjour 🌍",
        stream=True,
        store=True,
        max_output_tokens=300,
        temperature=0.2,
        top_p=0.9,
        include=["reasoning.encrypted_content"],
        text={"format": {"type": "text"}, "verbosity": "low"},
    )
    assert turn.protocol == "responses"
    assert turn.model == "m"
    assert turn.stream is True
    assert turn.messages == [{"role": "user", "content": "Bonjour 🌍"}]
    assert turn.params == {"max_tokens": 300, "temperature": 0.2, "top_p": 0.9}
    assert turn.client_tools == []
    assert not turn.web.any
    assert turn.tool_choice is None
    assert turn.thinking is False


def test_instructions_system_and_developer_messages_merge_into_one_leading_system_message() -> None:
    turn = parse(
        instructions="Be brief.",
        input=[
            {"role": "system", "content": "Answer in French."},
            {"role": "user", "content": "Hi"},
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "Cite sources."}],
            },
            {"role": "user", "content": [{"type": "input_text", "text": "Again"}]},
        ],
    )
    assert turn.messages == [
        {"role": "system", "content": "Be brief.\n\nAnswer in French.\n\nCite sources."},
        {"role": "user", "content": "Hi"},
        {"role": "user", "content": "Again"},
    ]


def test_images_pass_through_as_chat_image_parts() -> None:
    data_url = "data:image/png;base64,iVBORw0KGgo="
    turn = parse(
        input=[
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "What is in these?"},
                    {"type": "input_image", "image_url": "https://example.com/a.png"},
                    {"type": "input_image", "image_url": data_url, "detail": "low"},
                ],
            }
        ]
    )
    assert turn.messages == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
                {"type": "image_url", "image_url": {"url": data_url, "detail": "low"}},
            ],
        }
    ]


def test_history_items_become_chat_messages() -> None:
    turn = parse(
        instructions="sys",
        input=[
            {"role": "user", "content": "Weather and time in 上海?"},
            {"type": "reasoning", "id": "rs_1", "summary": [], "content": []},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
            },
            {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call", "call_id": "c2", "name": "get_time", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "晴"},
            {
                "type": "function_call_output",
                "call_id": "c2",
                "output": [{"type": "input_text", "text": "12:00"}],
            },
            {"type": "function_call", "call_id": "c3", "name": "get_time", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c3", "output": "12:01"},
        ],
    )
    assert turn.messages == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Weather and time in 上海?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{}"},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "晴"},
        {"role": "tool", "tool_call_id": "c2", "content": "12:00"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c3",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c3", "content": "12:01"},
    ]


def test_earlier_web_calls_leave_only_answers_and_their_page_signatures() -> None:
    read = {
        "type": "web_search_call",
        "id": "srvtoolu_rl_00_1",
        "status": "completed",
        "kind": "read_link",
        "action": {"type": "open_page", "url": "https://example.com"},
        "page": {"url": "https://example.com", "title": "Example", "published_at": None},
        "signature": "sealed-one",
    }
    searched = {
        "type": "web_search_call",
        "id": "srvtoolu_s_00_1",
        "status": "completed",
        "kind": "search",
        "action": {"type": "search", "queries": ["q"], "sources": []},
    }
    answer = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "A."}],
    }
    turn = parse(
        instructions="sys",
        tools=WEB,
        input=[
            {"role": "user", "content": "Summarize https://example.com/"},
            read,
            answer,
            {"role": "user", "content": "And search?"},
            searched,
            {**read, "signature": "sealed-two"},
            answer,
            {"role": "user", "content": "Quote it."},
        ],
    )
    assert [m["role"] for m in turn.messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert [(page.round, page.signature) for page in turn.pages] == [
        (1, "sealed-one"),
        (3, "sealed-two"),
    ]


def test_tools_map_to_client_function_tools_and_web_tool_specs() -> None:
    turn = parse(tools=[WEATHER, {"type": "deepseek_web_search"}, {"type": "deepseek_read_url"}])
    assert [tool.definition for tool in turn.client_tools] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather of a city.",
                "parameters": WEATHER["parameters"],
            },
        }
    ]
    assert turn.web.search == SearchSpec("deepseek_web_search", "deepseek_web_search")
    assert turn.web.read_url == ReadUrlSpec("deepseek_read_url", "deepseek_read_url")


@pytest.mark.parametrize(
    "kind",
    ["web_search", "web_search_preview", "web_search_2025_08_26", "web_search_preview_2025_03_11"],
)
def test_openai_web_search_tools_are_accepted(kind: str) -> None:
    turn = parse(
        tools=[
            {
                "type": kind,
                "search_context_size": "high",
                "user_location": {"type": "approximate", "country": "IS"},
                "filters": {"allowed_domains": ["hagstofa.is"]},
            }
        ]
    )
    assert turn.web.search == SearchSpec(
        "web_search",
        kind,
        domains=DomainFilter(allowed=("hagstofa.is",)),
        location="IS",
        filters=SearchFilters(include_domains=("hagstofa.is",), country="IS"),
        context_size="high",
    )
    assert parse(tools=[{"type": kind}]).web.search == SearchSpec("web_search", kind)


@pytest.mark.parametrize(
    "kind", ["file_search", "computer_use_preview", "mcp", "shell", "tool_search"]
)
def test_other_servers_tool_types_are_ignored(kind: str) -> None:
    turn = parse(tools=[{"type": kind}, WEATHER])
    assert [tool.name for tool in turn.client_tools] == ["get_weather"]


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (WEB * 2, "tools: `deepseek_web_search` can only be declared once"),
        (
            [{"type": "deepseek_read_url"}] * 2,
            "tools: `deepseek_read_url` can only be declared once",
        ),
        (
            [{"type": "web_search"}, {"type": "web_search_preview"}],
            "tools: `web_search_preview` can only be declared once",
        ),
        (
            [{"type": "web_search"}, {"type": "deepseek_web_search"}],
            "tools: `deepseek_web_search` can only be declared once",
        ),
    ],
)
def test_a_web_tool_declared_twice_is_refused(tools: list[dict[str, Any]], message: str) -> None:
    assert refused(tools=tools) == message


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("allowed_domains", ["a.com"]),
        ("blocked_domains", ["b.com"]),
        ("user_location", {"type": "approximate"}),
        ("filters", {"allowed_domains": ["a.com"]}),
    ],
)
def test_domain_and_location_fields_on_deepseek_tools_are_refused(field: str, value: Any) -> None:
    assert refused(tools=[{"type": "deepseek_web_search", field: value}]) == (
        f"tools: `{field}` is not supported by `deepseek_web_search`"
    )
    assert refused(tools=[{"type": "deepseek_read_url", field: value}]) == (
        f"tools: `{field}` is not supported by `deepseek_read_url`"
    )


@pytest.mark.parametrize(
    ("tools", "choice", "named"),
    [
        (WEB, {"type": "deepseek_web_search"}, "deepseek_web_search"),
        (WEB, {"type": "web_search"}, "deepseek_web_search"),
        ([{"type": "deepseek_read_url"}], {"type": "deepseek_read_url"}, "deepseek_read_url"),
        (WEB, {"type": "function", "name": "deepseek_web_search"}, "deepseek_web_search"),
    ],
)
def test_tool_choice_cannot_force_the_reference_web_tools(
    tools: list[dict[str, Any]], choice: dict[str, Any], named: str
) -> None:
    assert refused(tools=tools, tool_choice=choice) == f"tool_choice: `{named}` cannot be forced"


@pytest.mark.parametrize(
    ("kind", "choice"),
    [
        ("web_search", {"type": "web_search"}),
        ("web_search_preview", {"type": "web_search_preview"}),
        ("web_search", {"type": "function", "name": "web_search"}),
    ],
)
def test_forcing_openai_web_search_forces_the_first_step(kind: str, choice: Any) -> None:
    turn = parse(tools=[{"type": kind}], tool_choice=choice)
    assert (turn.tool_choice, turn.forced_web) == ("auto", "search")


def test_tool_choice_mapping() -> None:
    assert parse(tool_choice="auto").tool_choice == "auto"
    assert parse(tool_choice="required", tools=[WEATHER]).tool_choice == "required"
    assert parse(tool_choice="required", tools=[WEATHER, *WEB]).tool_choice == "required"
    off = parse(tool_choice="none", tools=WEB)
    assert off.tool_choice == "none"
    assert off.tools_off and not off.uses_web
    assert parse(
        tool_choice={"type": "function", "name": "get_weather"}, tools=[WEATHER]
    ).tool_choice == {
        "type": "function",
        "function": {"name": "get_weather"},
    }
    own = {**WEATHER, "name": "web_search"}
    assert parse(
        tool_choice={"type": "function", "name": "web_search"}, tools=[own]
    ).tool_choice == {
        "type": "function",
        "function": {"name": "web_search"},
    }
    assert refused(tool_choice={"type": "allowed_tools", "mode": "auto", "tools": []}) == (
        "tool_choice: `allowed_tools` is not supported"
    )
    assert refused(tool_choice={"type": "function", "name": "nope"}, tools=[WEATHER]) == (
        "tool_choice: `nope` is not a declared tool"
    )


@pytest.mark.parametrize(
    ("reasoning", "thinking"),
    [
        (None, False),
        ({"effort": "none"}, False),
        ({"effort": "minimal"}, False),
        ({"effort": "low"}, True),
        ({"effort": "high", "summary": "auto"}, True),
        ({"summary": "auto"}, False),
    ],
)
def test_reasoning_effort_turns_thinking_on(reasoning: Any, thinking: bool) -> None:
    assert parse(reasoning=reasoning).thinking is thinking


@pytest.mark.parametrize(
    ("last", "message"),
    [
        (
            {"role": "assistant", "content": "The autumn wind rises,"},
            "input: ends with an assistant `message`; continuing a reply is not supported in "
            "the Responses API",
        ),
        (
            {"type": "reasoning", "id": "rs_1", "summary": []},
            "input: ends with a `reasoning` item; continuing a reply is not supported in the "
            "Responses API",
        ),
        (
            {"type": "web_search_call", "id": "ws", "status": "completed", "action": {}},
            "input: ends with a `web_search_call` item; continuing a reply is not supported in "
            "the Responses API",
        ),
    ],
)
def test_an_input_that_continues_a_reply_is_refused(last: dict[str, Any], message: str) -> None:
    assert refused(input=[{"role": "user", "content": "Poem?"}, last]) == message


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"text": {"format": {"type": "json_schema", "schema": {}}}}, "text.format.name:"),
        ({"text": {"format": {"type": "xml"}}}, "text.format.type:"),
        ({"conversation": "conv_1"}, "conversation:"),
        ({"top_logprobs": 2}, "top_logprobs:"),
        ({"input": [{"type": "item_reference", "id": "msg_1"}]}, "input: `item_reference`"),
        ({"input": [{"type": "computer_call_output", "call_id": "c"}]}, "input: item type"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_image", "file_id": "f"}]}]},
            "input: `input_image` needs an `image_url`",
        ),
        (
            {"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]},
            "input: `input_file` with a `file_id` is not supported",
        ),
        ({"input": [{"role": "critic", "content": "x"}]}, "input: message role `critic`"),
        ({"input": None}, "input: required"),
        (
            {"input": [{"role": "system", "content": [{"type": "input_image", "image_url": "u"}]}]},
            "input: images are not supported in `system` messages",
        ),
        (
            {
                "input": [
                    {"role": "user", "content": "x"},
                    {
                        "type": "function_call_output",
                        "call_id": "c",
                        "output": [{"type": "input_image", "image_url": "u"}],
                    },
                ]
            },
            "input: images are not supported in `function_call_output`",
        ),
    ],
)
def test_unsupported_fields_and_items_are_refused_by_name(
    body: dict[str, Any], message: str
) -> None:
    assert refused(**body).startswith(message)


def test_the_sdk_request_is_parsed() -> None:
    script = Scripted(plain_round())
    client = sdk_client(script, strict=False)
    client.responses.create(
        model="deepseek-flash",
        instructions="Be brief.",
        input=[
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "看图"},
                    {"type": "input_image", "image_url": "https://x.test/i.png", "detail": "auto"},
                ],
            },
        ],
        tools=[WEATHER, {"type": "deepseek_web_search"}],
        tool_choice="required",
        reasoning={"effort": "high"},
        max_output_tokens=64,
    )
    (turn,) = script.turns
    assert turn.model == "deepseek-flash"
    assert turn.messages[0] == {"role": "system", "content": "Be brief."}
    assert turn.messages[1]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "https://x.test/i.png", "detail": "auto"},
    }
    assert turn.tool_choice == "required"
    assert turn.thinking is True
    assert turn.params == {"max_tokens": 64}
    assert turn.web.search is not None and turn.client_tools[0].name == "get_weather"


def test_the_error_body() -> None:
    assert CODEC.error_body(400, "tools: bad") == {
        "error": {
            "message": "tools: bad",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }
    assert CODEC.error_body(401, "no")["error"]["type"] == "authentication_error"
    assert CODEC.error_body(429, "slow")["error"]["type"] == "rate_limit_error"
    assert CODEC.error_body(502, "down")["error"]["type"] == "server_error"


def test_a_refused_request_reaches_the_sdk_as_bad_request() -> None:
    client = sdk_client(Scripted(plain_round()), strict=True)
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="m", input="hi", tools=WEB * 2)
    assert caught.value.body == {
        "message": "tools: `deepseek_web_search` can only be declared once",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }


# --- output, read by the official SDK -------------------------------------------------------


def final_responses(events: list[Event], *, strict: bool, **request: Any) -> list[Any]:
    """The final response three ways: ``create``, the raw stream's last event, the helper."""
    client = sdk_client(Scripted(events), strict=strict)
    body = {"model": "m", "input": "hi", "tools": WEB, **request}
    created = client.responses.create(**body)
    streamed = list(client.responses.create(**body, stream=True))
    with client.responses.stream(**body) as stream:
        helped = stream.get_final_response()
    return [created, streamed[-1].response, helped]


def stream_frames(events: list[Event], **request: Any) -> list[tuple[str, dict[str, Any]]]:
    turn = CODEC.parse({"model": "m", "input": "hi", "tools": WEB, "stream": True, **request})
    return sse_payloads(render_stream(turn, events))


@STRICTNESS
def test_a_search_round_reads_back_with_sources_and_citations(strict: bool) -> None:
    answer = "".join(ANSWER_CHUNKS)
    for response in final_responses(search_round(), strict=strict, reasoning={"effort": "high"}):
        assert response.status == "completed"
        assert response.id.startswith("resp_")
        assert response.model_extra["store"] is True
        assert [item.type for item in response.output] == [
            "reasoning",
            "web_search_call",
            "web_search_call",
            "message",
        ]
        reasoning, first, second, message = response.output
        # Both: openai-agents, pydantic-ai and the AI SDK show `summary`, others `content`.
        assert [part.text for part in reasoning.summary] == ["需要搜索一下。"]
        assert [c.text for c in reasoning.content] == ["需要搜索一下。"]
        assert reasoning.encrypted_content is None
        assert first.status == "completed"
        assert first.model_extra["kind"] == "search"
        assert first.action.queries == ["冰岛 人口", "Iceland population"]
        assert first.action.query == "冰岛 人口"
        assert [s.model_dump() for s in first.action.sources] == [
            {
                "type": "url",
                "url": SOURCE_A.url,
                "title": "冰岛人口 2025",
                "snippet": "冰岛人口约为 39.4 万。",
                "site_name": "Example 新闻",
                "site_icon": "https://example.com/favicon.ico",
                "published_at": "2025-10-15T16:00:00+00:00",
            }
        ]
        assert second.action.sources[0].url == SOURCE_B.url
        assert message.role == "assistant" and message.status == "completed"
        (part,) = message.content
        assert part.text == answer == response.output_text
        spans = [(a.url, a.title, answer[a.start_index : a.end_index]) for a in part.annotations]
        assert spans == [
            (SOURCE_A.url, "冰岛人口 2025", "".join(ANSWER_CHUNKS[:3])),
            (SOURCE_B.url, "", "".join(ANSWER_CHUNKS[3:])),
        ]
        assert all(a.type == "url_citation" for a in part.annotations)
        used = response.usage
        assert (used.input_tokens, used.output_tokens, used.total_tokens) == (1905, 72, 1977)
        assert used.input_tokens_details.cached_tokens == 128
        assert used.output_tokens_details.reasoning_tokens == 30
        assert used.model_extra["server_tool_use"] == {
            "web_search_requests": 2,
            "web_fetch_requests": 0,
            "tool_search": 3,
            "tool_fetch": 0,
            "tool_image_search": 0,
        }


def test_citation_indices_count_code_points_not_utf16_units() -> None:
    events = search_round()
    frames = stream_frames(events)
    done = [
        d for t, d in frames if t == "response.output_item.done" and d["item"]["type"] == "message"
    ]
    annotations = done[0]["item"]["content"][0]["annotations"]
    # 🇮🇸 is two code points, 😀 one (two UTF-16 units): indices count code points.
    assert [(a["start_index"], a["end_index"]) for a in annotations] == [
        (0, len("".join(ANSWER_CHUNKS[:3]))),
        (len("".join(ANSWER_CHUNKS[:3])), len("".join(ANSWER_CHUNKS))),
    ]
    assert annotations[0]["end_index"] == 24
    assert len("".join(ANSWER_CHUNKS[:3]).encode("utf-16-le")) // 2 == 26


def test_citations_are_rebased_onto_a_later_message_item() -> None:
    preamble = "先搜一下 😀。"
    call = search_call()
    events: list[Event] = [
        TextDelta(preamble),
        WebCallStarted(call),
        WebCallCompleted(call, SearchOutcome((SOURCE_A,))),
    ]
    events += cited_text(("答案 🇮🇸", "。"), {0: (SOURCE_A,)}, offset=len(preamble))
    events.append(Finished("end_turn", usage()))
    for response in final_responses(events, strict=True):
        first, _, second = response.output
        assert first.content[0].text == preamble and first.content[0].annotations == []
        (annotation,) = second.content[0].annotations
        assert (annotation.start_index, annotation.end_index) == (0, len("答案 🇮🇸"))


def test_the_stream_obeys_the_sdk_ordering_rules() -> None:
    frames = stream_frames(search_round())
    kinds = [kind for kind, _ in frames]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert [data["sequence_number"] for _, data in frames] == list(range(len(frames)))
    ids = {data["response"]["id"] for kind, data in frames if "response" in data}
    assert len(ids) == 1
    assert frames[0][1]["response"]["output"] == []
    assert all("error" not in data for _, data in frames)
    added = {d["output_index"]: d["item"] for k, d in frames if k == "response.output_item.added"}
    done = {d["output_index"]: d["item"] for k, d in frames if k == "response.output_item.done"}
    assert Counter(k for k in kinds if k.startswith("response.output_item.")) == {
        "response.output_item.added": 4,
        "response.output_item.done": 4,
    }
    assert sorted(added) == sorted(done) == [0, 1, 2, 3]
    for index, item in added.items():
        assert (item["type"], item["id"]) == (done[index]["type"], done[index]["id"])
    completed = frames[-1][1]["response"]
    assert completed["output"] == [done[i] for i in range(4)]
    assert completed["store"] is True and completed["object"] == "response"

    message_index = 3
    message_events = [k for k, d in frames if d.get("output_index") == message_index]
    assert message_events[:3] == [
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
    ]
    assert message_events[-3:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
    ]
    assert added[message_index]["content"] == []
    annotated = [d for k, d in frames if k == "response.output_text.annotation.added"]
    assert [d["annotation_index"] for d in annotated] == [0, 1]
    assert [d["annotation"] for d in annotated] == done[message_index]["content"][0]["annotations"]


def test_a_search_call_is_announced_before_it_completes() -> None:
    frames = stream_frames(search_round())
    calls = [
        (k, d["output_index"])
        for k, d in frames
        if k.startswith("response.web_search_call.")
        or (k.startswith("response.output_item.") and d["item"]["type"] == "web_search_call")
    ]
    assert calls == [
        ("response.output_item.added", 1),
        ("response.web_search_call.in_progress", 1),
        ("response.web_search_call.searching", 1),
        ("response.output_item.added", 2),
        ("response.web_search_call.in_progress", 2),
        ("response.web_search_call.searching", 2),
        ("response.web_search_call.completed", 1),
        ("response.output_item.done", 1),
        ("response.web_search_call.completed", 2),
        ("response.output_item.done", 2),
    ]
    added = next(
        d["item"] for k, d in frames if k == "response.output_item.added" and d["output_index"] == 1
    )
    assert added["status"] == "in_progress"
    assert added["kind"] == "search"
    assert added["action"] == {
        "type": "search",
        "queries": ["冰岛 人口", "Iceland population"],
        "query": "冰岛 人口",
    }


@STRICTNESS
def test_a_failed_search_is_a_failed_call_in_a_completed_response(strict: bool) -> None:
    for response in final_responses(failed_search_round(), strict=strict):
        assert response.status == "completed"
        call, message = response.output
        assert call.status == "failed"
        assert call.model_extra["error"] == {"code": "unavailable"}
        assert "sources" not in call.action.model_dump(exclude_none=True)
        assert message.content[0].text == "I could not search."
        assert "server_tool_use" not in (response.usage.model_extra or {})  # nothing billed


@STRICTNESS
def test_deep_search_pages_and_read_links(strict: bool) -> None:
    for response in final_responses(
        deep_search_round(), strict=strict, reasoning={"effort": "high"}
    ):
        opened, found = response.output[1:3]
        assert opened.model_extra["kind"] == "deep_search"
        assert (
            opened.action.type == "open_page" and opened.action.url == "https://example.com/tower"
        )
        assert opened.model_extra["page"] == {
            "url": "https://example.com/tower",
            "title": "Tower",
            "published_at": None,
        }
        assert "signature" not in opened.model_extra
        assert (found.action.type, found.action.pattern) == ("find_in_page", "333")
        assert [item.type for item in response.output] == [
            "reasoning",
            "web_search_call",
            "web_search_call",
            "reasoning",
            "message",
        ]
    tools = [{"type": "deepseek_read_url"}]
    for response in final_responses(read_link_round("sealed"), strict=strict, tools=tools):
        call = response.output[0]
        assert call.model_extra["kind"] == "read_link"
        assert call.action.model_dump(exclude_none=True) == {
            "type": "open_page",
            "url": "https://example.com/a",
        }
        assert call.model_extra["signature"] == "sealed"
        assert call.model_extra["page"]["published_at"] == "2026-01-01"
        assert response.usage.model_extra["server_tool_use"]["tool_fetch"] == 1


@STRICTNESS
def test_client_function_calls_end_the_turn(strict: bool) -> None:
    for response in final_responses(client_call_round(), strict=strict, tools=[WEATHER, *WEB]):
        assert response.status == "completed"
        message, weather, clock = response.output
        assert message.content[0].text == "Let me check the weather."
        assert (weather.type, weather.call_id, weather.name) == (
            "function_call",
            "call_1",
            "get_weather",
        )
        assert json.loads(weather.arguments) == {"city": "上海"}
        assert weather.status == "completed"
        assert (clock.call_id, clock.arguments) == ("call_2", "{}")
        assert weather.id != clock.id
        assert [t.type for t in response.tools] == ["function"]
        assert response.tools[0].name == "get_weather"


def test_function_call_arguments_stream_in_full() -> None:
    frames = stream_frames(client_call_round(), tools=[WEATHER])
    deltas = [d for k, d in frames if k == "response.function_call_arguments.delta"]
    dones = [d for k, d in frames if k == "response.function_call_arguments.done"]
    assert [d["delta"] for d in deltas] == ['{"city": "上海"}', "{}"]
    assert [(d["name"], d["arguments"]) for d in dones] == [
        ("get_weather", '{"city": "上海"}'),
        ("get_time", "{}"),
    ]


@STRICTNESS
def test_a_failure_after_the_start_is_response_failed(strict: bool) -> None:
    client = sdk_client(Scripted(failing_round()), strict=strict)
    body = {"model": "m", "input": "hi", "tools": WEB}
    with pytest.raises(openai.InternalServerError, match="The model failed"):
        client.responses.create(**body)  # nothing was sent yet: an HTTP error, not a 200

    events = list(client.responses.create(**body, stream=True))
    assert events[-1].type == "response.failed"
    assert events[-1].response.error.code == "server_error"
    assert events[-1].response.usage.input_tokens == 1905
    with client.responses.stream(**body) as stream:
        seen = [event.type for event in stream]
    assert seen[-1] == "response.failed"
    with client.responses.stream(**body) as stream, pytest.raises(RuntimeError):
        stream.get_final_response()  # the SDK's own rule: only response.completed is final


def test_no_stream_payload_carries_a_top_level_error() -> None:
    for events in (failing_round(), failed_search_round()):
        assert all("error" not in data for _, data in stream_frames(events))


@STRICTNESS
def test_the_output_limit_makes_the_response_incomplete(strict: bool) -> None:
    client = sdk_client(Scripted(truncated_round()), strict=strict)
    created = client.responses.create(model="m", input="hi")
    assert created.status == "incomplete"
    assert created.incomplete_details is not None
    assert created.incomplete_details.reason == "max_output_tokens"
    assert created.output[0].status == "incomplete"
    last = list(client.responses.create(model="m", input="hi", stream=True))[-1]
    assert last.type == "response.incomplete"
    assert last.response.output_text == "A long answer that is cut"


@STRICTNESS
def test_a_plain_answer_and_usage_without_server_tools(strict: bool) -> None:
    for response in final_responses(plain_round("Hello, 世界! 👋"), strict=strict, tools=[]):
        assert response.output_text == "Hello, 世界! 👋"
        assert "server_tool_use" not in (response.usage.model_extra or {})
        assert response.usage.input_tokens_details.cached_tokens == 128
        assert response.tools == [] and response.tool_choice == "auto"


def test_the_response_echoes_what_the_sdk_can_validate() -> None:
    turn = CODEC.parse(
        {
            "model": "deepseek-flash",
            "input": "hi",
            "tools": [WEATHER, {"type": "web_search", "filters": {"allowed_domains": ["a.is"]}}],
            "tool_choice": {"type": "function", "name": "get_weather"},
            "temperature": 0.5,
            "max_output_tokens": 99,
        }
    )
    body = render_body(turn, plain_round())
    assert body["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Weather of a city.",
            "parameters": WEATHER["parameters"],
            "strict": None,
        },
        {"type": "web_search", "filters": {"allowed_domains": ["a.is"]}},
    ]
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert (body["temperature"], body["max_output_tokens"], body["model"]) == (
        0.5,
        99,
        "deepseek-flash",
    )
    assert body["store"] is True
    sized = {"type": "web_search", "search_context_size": "high"}
    turn = CODEC.parse({"model": "m", "input": "x", "tools": [sized]})
    assert render_body(turn, plain_round())["tools"] == [sized]
    # DeepSeek tool types are not echoed: a strict SDK client rejects them in `tools`.
    assert (
        render_body(CODEC.parse({"model": "m", "input": "x", "tools": WEB}), plain_round())["tools"]
        == []
    )


def test_a_stream_that_ends_without_a_verdict_fails_in_band() -> None:
    turn = CODEC.parse({"model": "m", "input": "x", "stream": True})
    frames = sse_payloads(render_stream(turn, [TextDelta("half")]))
    assert frames[-1][0] == "response.failed"
    assert frames[-1][1]["response"]["error"]["code"] == "server_error"
    assert [k for k, _ in frames].count("response.output_item.done") == 1
    with pytest.raises(ServerFailure, match="ended before it was complete"):
        render_body(turn, [TextDelta("half")])


def test_a_call_left_open_is_closed_as_failed() -> None:
    call = search_call()
    frames = stream_frames([WebCallStarted(call), Finished("end_turn", usage())])
    done = [d["item"] for k, d in frames if k == "response.output_item.done"]
    assert done == [frames[-1][1]["response"]["output"][0]]
    assert (done[0]["status"], done[0]["error"]) == ("failed", {"code": "unavailable"})


def test_multi_turn_round_trip_through_the_sdk() -> None:
    client = sdk_client(Scripted(read_link_round("sealed-page")), strict=True)
    first = client.responses.create(model="m", input="Summarize https://example.com/a", tools=WEB)
    script = Scripted(plain_round())
    follow_up = sdk_client(script, strict=True)
    follow_up.responses.create(
        model="m",
        tools=WEB,
        input=[
            {"role": "user", "content": "Summarize https://example.com/a"},
            *[item.model_dump(exclude_none=True) for item in first.output],
            {"role": "user", "content": "Quote it."},
        ],
    )
    (turn,) = script.turns
    assert turn.messages == [
        {"role": "user", "content": "Summarize https://example.com/a"},
        {"role": "assistant", "content": "Page A says hello."},
        {"role": "user", "content": "Quote it."},
    ]
    assert [(page.round, page.signature) for page in turn.pages] == [(0, "sealed-page")]


@pytest.mark.parametrize("strict", [False, True])
def test_reasoning_is_streamed_and_kept_as_the_summary_too(strict: bool) -> None:
    events: list[Event] = [
        ReasoningDelta("Search "),
        ReasoningDelta("first."),
        TextDelta("Done."),
        Finished("end_turn", usage()),
    ]
    frames = stream_frames(events)
    kinds = [kind for kind, _ in frames]
    deltas = [d["delta"] for k, d in frames if k == "response.reasoning_summary_text.delta"]
    assert deltas == ["Search ", "first."]
    assert kinds.index("response.reasoning_summary_part.added") < kinds.index(
        "response.reasoning_summary_text.delta"
    )
    assert kinds.index("response.reasoning_summary_part.done") < kinds.index(
        "response.output_item.done"
    )
    client = sdk_client(Scripted(events), strict=strict)
    with client.responses.stream(model="m", input="hi") as stream:
        final = stream.get_final_response()
    reasoning = final.output[0]
    assert reasoning.type == "reasoning"
    assert [part.text for part in reasoning.summary] == ["Search first."]
