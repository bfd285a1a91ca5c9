"""Chat Completions as other ecosystems speak it: their ways to ask for search, and the
reference's extension fields applied rather than forwarded."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from providers_for_tests import ScriptedFetch, ScriptedSearch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import openai_client
from test_server_read_link import ARTICLE, ARTICLE_URL, ASK, READ

USER = [{"role": "user", "content": "What is the weather like?"}]


def search_then_answer(upstream: ScriptedUpstream) -> None:
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["weather"]})]), Step(content="Sunny【1】.")
    )


def post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(url + "/chat/completions", json=body, timeout=30)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def searched(reply: dict[str, Any]) -> list[dict[str, Any]]:
    steps = reply["choices"][0]["message"].get("server_tool_calls", [])
    return [call for step in steps for call in step["calls"]]


@pytest.mark.parametrize(
    ("extra", "sources"),
    [
        ({"web_search_options": {}}, 5),
        ({"web_search_options": {"search_context_size": "low"}}, 3),
        ({"web_search_options": {"search_context_size": "high"}}, 8),
        ({"tools": [{"type": "web_search"}]}, 8),
        ({"tools": [{"type": "web_search_preview"}]}, 8),
        ({"plugins": [{"id": "web", "max_results": 2}]}, 2),
        ({"plugins": [{"id": "web"}]}, 8),
    ],
)
def test_every_way_to_ask_for_search_runs_the_servers_search(
    upstream: ScriptedUpstream,
    webreach_url: str,
    search: ScriptedSearch,
    extra: dict[str, Any],
    sources: int,
) -> None:
    search_then_answer(upstream)
    reply = post(webreach_url, {"model": "m", "messages": USER, **extra})
    assert reply["choices"][0]["message"]["content"] == "Sunny."
    assert [call["action"]["queries"] for call in searched(reply)] == [["weather"]]
    assert reply["choices"][0]["message"]["annotations"][0]["type"] == "url_citation"
    assert [request.max_results for request in search.calls] == [sources]
    first = upstream.requests[0]
    assert [tool["function"]["name"] for tool in first["tools"]] == ["web_search"]
    assert "web_search_options" not in first and "plugins" not in first


def test_the_online_suffix_searches_and_is_removed_before_the_upstream(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    search_then_answer(upstream)
    reply = openai_client(webreach_url).chat.completions.create(
        model="gpt-4.1:online",
        messages=USER,  # type: ignore[arg-type]
    )
    assert reply.choices[0].message.content == "Sunny."
    assert {request["model"] for request in upstream.requests} == {"gpt-4.1"}


def test_user_location_reaches_the_model_as_a_hint(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    search_then_answer(upstream)
    location = {"type": "approximate", "approximate": {"city": "Oslo", "country": "NO"}}
    post(
        webreach_url,
        {"model": "m", "messages": USER, "web_search_options": {"user_location": location}},
    )
    sent = upstream.requests[0]["messages"]
    assert sent[0]["role"] == "system"
    assert sent[0]["content"].endswith(
        "The user's approximate location: Oslo, NO. Use it when a search depends on "
        "where the user is."
    )
    assert sent[1] == USER[0]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"web_search_options": {"search_context_size": "huge"}}, "search_context_size"),
        ({"web_search_options": "on"}, "web_search_options: must be an object"),
        (
            {"tools": [{"type": "deepseek_web_search"}], "web_search_options": {}},
            "web_search_options: not supported together",
        ),
        (
            {"tools": [{"type": "web_search"}], "response_format": {"type": "yaml"}},
            "response_format.type: must be `text`, `json_schema` or `json_object`",
        ),
        ({"tools": [{"type": "web_search"}], "logprobs": True}, "logprobs: not supported"),
        (
            {"web_search_options": {}, "top_logprobs": 2, "logprobs": True},
            "logprobs: not supported",
        ),
    ],
)
def test_what_web_search_cannot_honour_is_a_400(
    upstream: ScriptedUpstream, webreach_url: str, extra: dict[str, Any], message: str
) -> None:
    response = httpx.post(
        webreach_url + "/chat/completions", json={"model": "m", "messages": USER, **extra}
    )
    assert response.status_code == 400
    assert message in response.json()["error"]["message"]
    assert upstream.requests == []


def test_extension_fields_are_applied_not_forwarded(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    body = {
        "model": "m",
        "messages": [*USER, {"role": "latest_reminder", "content": "Be brief."}],
        "thinking": {"type": "disabled"},
        "safety_check": {"level": "low"},
        "title": True,
        "temperature": 0.2,
        "tools": [{"type": "code_interpreter"}],
    }
    reply = post(webreach_url, body)
    assert reply["choices"][0]["message"]["content"] == "Hello from the scripted upstream."
    sent = upstream.requests[0]
    assert not {"thinking", "safety_check", "title", "tools"} & set(sent)
    assert sent["temperature"] == 0.2
    assert sent["messages"][-1] == {"role": "system", "content": "Be brief."}


def test_web_history_without_web_tools_is_stripped_and_its_pages_restored(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(Step(calls=[Call("read_link", {"url": ARTICLE_URL})]), Step(content="JIT."))
    client = openai_client(webreach_url)
    first = client.chat.completions.create(model="m", messages=ASK, tools=READ)  # type: ignore[arg-type]
    reply = first.choices[0].message.model_dump(exclude_none=True)
    # What openai-node's finalChatCompletion() adds, and what only replies carry:
    reply.update(parsed=None, refusal=None, annotations=[{"type": "url_citation"}])
    history = [*ASK, reply, {"role": "user", "content": "And in one word?"}]
    client.chat.completions.create(model="m", messages=history)  # type: ignore[arg-type]
    sent = upstream.requests[-1]["messages"]
    assert "server_tool_calls" not in json.dumps(sent)
    assert sent[1] == {"role": "assistant", "content": "JIT."}
    assert "JIT compiler" in sent[0]["content"]
    assert "tools" not in upstream.requests[-1]


def test_content_filter_keeps_the_calls_and_nothing_of_the_answer(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    """The reference's ``content_filter``: empty content, no annotations, the calls kept with
    the thinking of each step cleared."""
    steps = [
        Step(reasoning="Let me look.", calls=[Call("web_search", {"queries": ["weather"]})]),
        Step(content="Sunny【1】.", finish_reason="content_filter"),
    ]
    body = {"model": "m", "messages": USER, "tools": [{"type": "deepseek_web_search"}]}
    for stream in (False, True):
        upstream.queue(*steps)
        client = openai_client(webreach_url)
        if stream:
            chunks = list(client.chat.completions.create(**body, stream=True))  # type: ignore[call-overload]
            last = chunks[-1].choices[0]
            assert last.finish_reason == "content_filter"
            assert "annotations" not in (last.delta.model_extra or {})
            calls = last.delta.model_extra["server_tool_calls"]
        else:
            reply = client.chat.completions.create(**body).choices[0]  # type: ignore[call-overload]
            assert reply.finish_reason == "content_filter"
            assert reply.message.content == ""
            assert reply.message.annotations is None
            calls = reply.message.model_extra["server_tool_calls"]
        assert [step["calls"][0]["action"]["queries"] for step in calls] == [["weather"]]
