"""Model content safety: ``safety_check: {"level": "low" | "high"}`` in every protocol.

The answer (thinking and text) reaches the client only once reviewed; a failing one ends as
the protocol's refusal (Messages ``refusal``, Responses ``incomplete``/``content_filter``, Chat
``content_filter``), keeping what DeepSeek's web tools keep. A read page is reviewed before the
model or the client sees it; one that fails is ``url_not_allowed``. The reviewer is a moderation
endpoint when one is configured (scored per level), else the upstream model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from providers_for_tests import ScriptedFetch, ScriptedSearch
from scripted_moderation import ScriptedModeration
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from server_harness import PROTOCOL_IDS, SMALLEST_REQUESTS, LiveServer
from webreach.cache import MemoryStore
from webreach.seam import FetchResult, HtmlBody, WebRuntime
from webreach.server import ServerSettings, create_app
from webreach.server.core.review.reviewers import REVIEW_ASK
from webreach.tools import ToolOptions

QUESTION = "How many people live in Iceland?"
SECRET = "FORBIDDEN plans, never to be shown"
PAGE_URL = "https://example.com/page"
ASK_PAGE = [{"role": "user", "content": f"What does {PAGE_URL} say?"}]
HIGH = {"safety_check": {"level": "high"}}
LOW = {"safety_check": {"level": "low"}}


def page(text: str) -> FetchResult:
    html = f"<html><head><title>A page</title></head><body><article><p>{text}</p></article>"
    return FetchResult(PAGE_URL, 200, HtmlBody(html + "</body></html>"))


def search_then(answer: str) -> list[Step]:
    return [
        Step(calls=[Call("web_search", {"queries": ["Iceland population"]})]),
        Step(content=answer, reasoning="Checking the sources."),
    ]


def verdict_by_text(body: dict[str, Any]) -> Step:
    """The model reviewer fails what mentions FORBIDDEN."""
    return Step(content="FAIL" if "FORBIDDEN" in body["messages"][1]["content"] else "PASS")


@pytest.fixture
def moderation() -> Iterator[tuple[ScriptedModeration, str]]:
    scripted = ScriptedModeration()
    with scripted.running() as url:
        yield scripted, url


@pytest.fixture
def moderated_url(
    upstream: ScriptedUpstream,
    moderation: tuple[ScriptedModeration, str],
    search: ScriptedSearch,
    fetcher: ScriptedFetch,
) -> Iterator[str]:
    """A server whose reviewer is the scripted moderation endpoint."""
    config = ServerSettings(
        upstream_base_url=upstream.url,
        signing_key="test-signing-key-of-32-bytes-or-more",
        moderation_base_url=moderation[1],
        moderation_api_key="moderation-key",
        moderation_model="text-moderation-test",
    )
    runtime = WebRuntime()
    runtime.register_search_provider(search)
    runtime.register_fetch_provider(fetcher)
    app = create_app(config, runtime, ToolOptions(), store=MemoryStore(), keepalive_seconds=0.2)
    with LiveServer(app) as server:
        yield server.url + "/v1"


def complete(url: str, request: dict[str, Any], *, stream: bool) -> Any:
    """A Chat completion through the SDK: ``create``, or the stream helper's final snapshot."""
    client = openai_client(url)
    if not stream:
        return client.chat.completions.create(**request)
    with client.chat.completions.stream(**request) as events:
        for _ in events:
            pass
        return events.current_completion_snapshot


def chat(url: str, *, stream: bool, **extra: Any) -> Any:
    request: dict[str, Any] = {
        "model": "m",
        "messages": [{"role": "user", "content": QUESTION}],
        "tools": [{"type": "deepseek_web_search"}],
        "extra_body": extra,
    }
    return complete(url, request, stream=stream)


def raw_stream(url: str, path: str, body: dict[str, Any]) -> str:
    with httpx.stream("POST", url + path, json={**body, "stream": True}, timeout=30) as reply:
        assert reply.status_code == 200
        return "".join(reply.iter_text())


# --- the level ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "body"), SMALLEST_REQUESTS, ids=PROTOCOL_IDS)
@pytest.mark.parametrize("value", [{}, {"level": "medium"}, "high", {"level": None}])
def test_a_safety_check_without_a_valid_level_is_the_references_400(
    webreach_url: str, path: str, body: dict[str, Any], value: object
) -> None:
    reply = httpx.post(f"{webreach_url}{path}", json={"model": "m", **body, "safety_check": value})
    assert reply.status_code == 400
    assert reply.json()["error"]["message"] == "safety_check: `level` must be `low` or `high`"


# --- the answer, reviewed by the upstream model ----------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_passing_answer_is_shown_whole_after_its_review(
    webreach_url: str, upstream: ScriptedUpstream, stream: bool
) -> None:
    upstream.queue(*search_then("About 390,000 people【1】."))
    completion = chat(webreach_url, stream=stream, **HIGH)
    choice = completion.choices[0]
    assert choice.finish_reason == "stop"
    assert choice.message.content == "About 390,000 people."
    reviews = [ask for ask in upstream.asides if ask["messages"][0]["content"] == REVIEW_ASK]
    reviewed = "".join(ask["messages"][1]["content"] for ask in reviews)
    assert "Level: high" in reviewed
    assert "About 390,000 people" in reviewed
    assert "Checking the sources." in reviewed


def test_a_failing_chat_answer_is_content_filter_with_the_calls_kept(
    webreach_url: str, upstream: ScriptedUpstream
) -> None:
    upstream.verdict = verdict_by_text
    upstream.queue(*search_then(SECRET))
    completion = chat(webreach_url, stream=False, **LOW)
    choice = completion.choices[0]
    assert choice.finish_reason == "content_filter"
    assert choice.message.content == ""
    extra = choice.message.model_extra or {}
    assert "annotations" not in extra
    (step,) = extra["server_tool_calls"]
    assert step["calls"][0]["kind"] == "search"
    assert "FORBIDDEN" not in json.dumps(completion.model_dump())


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/chat/completions",
            {"messages": [{"role": "user", "content": QUESTION}], "thinking": {"type": "enabled"}},
        ),
        ("/responses", {"input": QUESTION, "reasoning": {"effort": "high"}}),
        (
            "/messages",
            {
                "max_tokens": 256,
                "messages": [{"role": "user", "content": QUESTION}],
                "thinking": {"type": "enabled", "budget_tokens": 2048},
            },
        ),
    ],
    ids=["chat", "responses", "messages"],
)
def test_a_failing_answer_never_reaches_a_stream(
    webreach_url: str, upstream: ScriptedUpstream, path: str, body: dict[str, Any]
) -> None:
    upstream.verdict = verdict_by_text
    upstream.queue(Step(content=SECRET, reasoning="FORBIDDEN thoughts too"))
    frames = raw_stream(webreach_url, path, {"model": "m", **body, **HIGH})
    assert "FORBIDDEN" not in frames
    assert any(end in frames for end in ('"refusal"', '"content_filter"'))


def test_a_failing_messages_answer_stops_with_refusal(
    webreach_url: str, upstream: ScriptedUpstream
) -> None:
    upstream.verdict = verdict_by_text
    upstream.queue(*search_then(SECRET))
    client = anthropic_client(webreach_url.removesuffix("/v1"))
    request: dict[str, Any] = {
        "model": "m",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": QUESTION}],
        "tools": [{"type": "deepseek_web_search", "name": "web_search"}],
        "extra_body": HIGH,
    }
    message = client.messages.create(**request)
    assert message.stop_reason == "refusal"
    kinds = [block.type for block in message.content]
    assert kinds == ["server_tool_use", "web_search_tool_result"]
    upstream.queue(*search_then(SECRET))
    with client.messages.stream(**request) as events:
        streamed = events.get_final_message()
    assert streamed.stop_reason == "refusal"
    assert "text" not in [block.type for block in streamed.content]


def responses_search(level: dict[str, Any]) -> dict[str, Any]:
    """A Responses request for the Iceland question with web search and ``level``."""
    return {
        "model": "m",
        "input": QUESTION,
        "tools": [{"type": "deepseek_web_search"}],
        "extra_body": level,
    }


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_failing_responses_answer_is_incomplete_keeping_only_the_searches(
    webreach_url: str, upstream: ScriptedUpstream, stream: bool
) -> None:
    upstream.verdict = verdict_by_text
    upstream.queue(*search_then(SECRET))
    client = openai_client(webreach_url)
    request = responses_search(HIGH)
    if stream:
        with client.responses.stream(**request) as events:
            ended = [e for e in events if e.type == "response.incomplete"]
        response = ended[0].response
    else:
        response = client.responses.create(**request)
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "content_filter"
    assert [item.type for item in response.output] == ["web_search_call"]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_an_answer_that_cannot_be_reviewed_fails_instead_of_passing(
    webreach_url: str, upstream: ScriptedUpstream, stream: bool
) -> None:
    # The question passes its own review (the input is reviewed first); the answer gets none.
    upstream.verdict = lambda ask: Step(
        content="PASS" if QUESTION in ask["messages"][1]["content"] else "Maybe?"
    )
    upstream.queue(Step(content="An answer nobody could review."))
    body = {"model": "m", "messages": [{"role": "user", "content": QUESTION}], **HIGH}
    if stream:
        frames = raw_stream(webreach_url, "/chat/completions", body)
        assert "content review could not be completed" in frames
        assert "nobody could review" not in frames
        assert "[DONE]" not in frames
    else:
        reply = httpx.post(f"{webreach_url}/chat/completions", json=body, timeout=30)
        assert reply.status_code == 502
        assert "content review could not be completed" in reply.json()["error"]["message"]


def test_messages_keep_their_order_when_held_for_review(
    webreach_url: str, upstream: ScriptedUpstream
) -> None:
    upstream.queue(
        Step(
            reasoning="Let me search.",
            calls=[Call("web_search", {"queries": ["Iceland population"]})],
        ),
        Step(reasoning="Found it.", content="About 390,000【1】"),
    )
    client = anthropic_client(webreach_url.removesuffix("/v1"))
    with client.messages.stream(
        model="m",
        max_tokens=256,
        messages=[{"role": "user", "content": QUESTION}],
        thinking={"type": "enabled", "budget_tokens": 2048},
        tools=[{"type": "deepseek_web_search", "name": "web_search"}],  # type: ignore[list-item,typeddict-item]
        extra_body=LOW,
    ) as events:
        message = events.get_final_message()
    assert message.stop_reason == "end_turn"
    assert [block.type for block in message.content] == [
        "thinking",
        "server_tool_use",
        "web_search_tool_result",
        "thinking",
        "text",
    ]


# --- read pages and the moderation endpoint --------------------------------------------------


def read_page(url: str, level: dict[str, Any], stream: bool = False) -> Any:
    request: dict[str, Any] = {
        "model": "m",
        "messages": ASK_PAGE,
        "tools": [{"type": "deepseek_read_url"}],
        "extra_body": level,
    }
    return complete(url, request, stream=stream)


def read_call(completion: Any) -> dict[str, Any]:
    (step,) = completion.choices[0].message.model_extra["server_tool_calls"]
    (call,) = step["calls"]
    return dict(call)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_page_that_fails_review_is_url_not_allowed_and_never_shown(
    moderated_url: str,
    upstream: ScriptedUpstream,
    fetcher: ScriptedFetch,
    moderation: tuple[ScriptedModeration, str],
    stream: bool,
) -> None:
    fetcher.pages[PAGE_URL] = page("FORBIDDEN recipe for harm.")
    upstream.queue(Step(calls=[Call("read_link", {"url": PAGE_URL})]), Step(content="Sorry."))
    completion = read_page(moderated_url, LOW, stream)
    call = read_call(completion)
    assert call["status"] == "failed"
    assert call["error"] == {"code": "url_not_allowed"}
    assert "signature" not in call
    told = upstream.requests[1]["messages"][-1]
    assert told["role"] == "tool"
    assert "did not pass the content review" in told["content"]
    assert "recipe" not in json.dumps(upstream.requests[1])
    usage = completion.usage.model_extra["server_tool_use"]
    assert usage["tool_fetch"] == 1  # fetched, so billed, as DeepSeek bills it
    scripted, _ = moderation
    assert scripted.keys[0] == "Bearer moderation-key"
    assert scripted.requests[0]["model"] == "text-moderation-test"
    assert scripted.requests[0]["input"] == [ASK_PAGE[0]["content"]]  # the user's input first
    assert "FORBIDDEN recipe" in scripted.requests[1]["input"][0]


@pytest.mark.parametrize(("level", "passes"), [(LOW, True), (HIGH, False)], ids=["low", "high"])
def test_the_level_sets_the_moderation_threshold(
    moderated_url: str,
    upstream: ScriptedUpstream,
    fetcher: ScriptedFetch,
    level: dict[str, Any],
    passes: bool,
) -> None:
    fetcher.pages[PAGE_URL] = page("A BORDERLINE remark about someone.")
    upstream.queue(Step(calls=[Call("read_link", {"url": PAGE_URL})]), Step(content="Done."))
    call = read_call(read_page(moderated_url, level))
    assert (call["status"] == "completed") is passes
    assert ("signature" in call) is passes


def test_a_page_the_endpoint_cannot_review_is_unavailable(
    moderated_url: str,
    upstream: ScriptedUpstream,
    fetcher: ScriptedFetch,
    moderation: tuple[ScriptedModeration, str],
) -> None:
    moderation[0].fail_after = 1  # the user's input passes; the page and answer get no review
    fetcher.pages[PAGE_URL] = page("A harmless page.")
    upstream.queue(Step(calls=[Call("read_link", {"url": PAGE_URL})]), Step(content="Done."))
    reply = httpx.post(
        f"{moderated_url}/chat/completions",
        json={
            "model": "m",
            "messages": ASK_PAGE,
            "tools": [{"type": "deepseek_read_url"}],
            **LOW,
        },
        timeout=30,
    )
    # The answer cannot be reviewed either: the turn fails, naming why (after newlines and a
    # 200 once the wait passed the keep-alive interval, as any long non-streamed answer).
    assert reply.status_code in (200, 502)
    assert "content review could not be completed" in reply.json()["error"]["message"]
    assert "moderation-key" not in reply.text
    told = upstream.requests[1]["messages"][-1]["content"]
    assert "could not be reviewed" in told


def test_the_moderation_endpoint_reviews_the_answer_too(
    moderated_url: str, upstream: ScriptedUpstream
) -> None:
    upstream.queue(*search_then(SECRET))
    completion = chat(moderated_url, stream=True, **LOW)
    assert completion.choices[0].finish_reason == "content_filter"
    assert "FORBIDDEN" not in json.dumps(completion.model_dump())
    assert upstream.asides == []  # the model was not asked for a verdict


def test_a_client_tool_call_is_reviewed_with_its_arguments(
    webreach_url: str, upstream: ScriptedUpstream
) -> None:
    upstream.verdict = verdict_by_text
    upstream.queue(Step(calls=[Call("send_mail", {"body": "FORBIDDEN instructions"})]))
    client = openai_client(webreach_url)
    completion = client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "Mail it."}],
        tools=[
            {
                "type": "function",
                "function": {"name": "send_mail", "parameters": {"type": "object"}},
            }
        ],
        extra_body=LOW,
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "content_filter"
    assert not choice.message.tool_calls
    asked, review = upstream.asides  # the user's input, then the call
    assert "Mail it." in asked["messages"][1]["content"]
    assert "FORBIDDEN instructions" in review["messages"][1]["content"]


def page_refused_in_messages(url: str, stream: bool) -> dict[str, Any]:
    client = anthropic_client(url.removesuffix("/v1"), strict=True)
    request: dict[str, Any] = {
        "model": "m",
        "max_tokens": 256,
        "messages": ASK_PAGE,
        "tools": [{"type": "web_fetch_20250910", "name": "web_fetch"}],
        "extra_body": LOW,
    }
    if stream:
        with client.messages.stream(**request) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**request)
    result = message.content[1]
    assert result.type == "web_fetch_tool_result"
    return dict(result.content.model_dump())  # type: ignore[union-attr]


def page_refused_in_responses(url: str, stream: bool) -> dict[str, Any]:
    client = openai_client(url)
    request: dict[str, Any] = {
        "model": "m",
        "input": ASK_PAGE[0]["content"],
        "tools": [{"type": "deepseek_read_url"}],
        "extra_body": LOW,
    }
    if stream:
        with client.responses.stream(**request) as events:
            response = events.get_final_response()
    else:
        response = client.responses.create(**request)
    call = response.output[0].model_dump()
    assert call["type"] == "web_search_call"
    assert call["status"] == "failed"
    assert "signature" not in call or not call["signature"]
    return dict(call["error"])


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("protocol", ["messages", "responses"])
def test_a_page_that_fails_review_is_url_not_allowed_in_messages_and_responses(
    moderated_url: str,
    upstream: ScriptedUpstream,
    fetcher: ScriptedFetch,
    protocol: str,
    stream: bool,
) -> None:
    fetcher.pages[PAGE_URL] = page("FORBIDDEN recipe for harm.")
    upstream.queue(Step(calls=[Call("read_link", {"url": PAGE_URL})]), Step(content="Sorry."))
    refused = (
        page_refused_in_messages(moderated_url, stream)
        if protocol == "messages"
        else page_refused_in_responses(moderated_url, stream)
    )
    assert refused["error_code" if protocol == "messages" else "code"] == "url_not_allowed"
    assert "recipe" not in json.dumps(upstream.requests[1])


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_passing_responses_answer_is_whole(
    webreach_url: str, upstream: ScriptedUpstream, stream: bool
) -> None:
    upstream.queue(*search_then("About 390,000 people【1】."))
    client = openai_client(webreach_url, strict=True)
    request = responses_search(HIGH)
    if stream:
        with client.responses.stream(**request) as events:
            response = events.get_final_response()
    else:
        response = client.responses.create(**request)
    assert response.status == "completed"
    assert response.output_text == "About 390,000 people."
    assert [item.type for item in response.output] == ["web_search_call", "reasoning", "message"]
