"""DeepSeek against a local server replaying Messages responses with ``deepseek_web_search``
blocks, shaped like DeepSeek's Web Tools documentation."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from replay_server import ReplayServer, Reply
from webreach.providers.search.deepseek import DeepSeekSearchProvider
from webreach.seam import SearchRequest, WebError, WebErrorCode

CANARY = "sk-deepseek-canary-5e0c71"
PATH = "/anthropic/v1/messages"
DOCS = "https://docs.python.org/3/whatsnew/3.13.html"
PEP = "https://peps.python.org/pep-0744/"
BLOG = "https://realpython.com/python313-new-features/"


def call(tool_id: str, *queries: str) -> dict[str, Any]:
    return {
        "type": "server_tool_use",
        "id": tool_id,
        "name": "deepseek_web_search",
        "input": {"action": "search", "queries": list(queries)},
        "caller": {"type": "direct"},
        "kind": "search",
    }


def result(tool_id: str, content: Any) -> dict[str, Any]:
    return {
        "type": "web_search_tool_result",
        "tool_use_id": tool_id,
        "content": content,
        "kind": "search",
    }


def hit(url: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "web_search_result",
        "url": url,
        "encrypted_content": "6sesWdNHoulpcfri...",
        "site_name": None,
        "site_icon": None,
        **fields,
    }


def citation(url: str, text: str) -> dict[str, Any]:
    return {
        "type": "web_search_result_location",
        "url": url,
        "title": None,
        "encrypted_index": "",
        "cited_text": text,
    }


def message(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "18f3b95b-bf3c-4ffb-8c90-ad50d7cfb211",
        "type": "message",
        "role": "assistant",
        "model": "deepseek-flash",
        "content": list(blocks),
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 1905,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 72,
            "service_tier": "standard",
            "server_tool_use": {
                "web_search_requests": 2,
                "web_fetch_requests": 0,
                "tool_search": 3,
                "tool_fetch": 0,
                "tool_image_search": 0,
            },
        },
    }


FIRST = "Python 3.13 ships a new interactive interpreter"
SECOND = " and an experimental JIT compiler"
ANSWER = message(
    call("srvtoolu_s_00_72b1", "python 3.13 new features", "python 3.13 release notes"),
    result(
        "srvtoolu_s_00_72b1",
        [
            hit(
                DOCS,
                title="What's New In Python 3.13",
                snippet="Python 3.13 ships a new interactive interpreter.",
                page_age="2024-10-07T00:00:00+00:00",
                site_name="Python documentation",
                site_icon="https://cdn.deepseek.com/site-icons/python.org",
            ),
            hit(PEP, title="", snippet=None, page_age=None),
        ],
    ),
    call("srvtoolu_s_01_9c41", "python 3.13 jit"),
    result(
        "srvtoolu_s_01_9c41",
        [
            hit(DOCS, title="a duplicate, dropped", snippet="later copy", page_age="2025-01-01"),
            hit(BLOG),
            {"type": "web_search_result", "title": "no url, dropped"},
        ],
    ),
    {"type": "text", "text": FIRST, "citations": [citation(DOCS, FIRST)]},
    {"type": "text", "text": SECOND, "citations": [citation(PEP, SECOND)]},
    {"type": "text", "text": ".\n"},
)


def deepseek(
    replay: ReplayServer, client: httpx.AsyncClient, key: str | None = CANARY, **options: str
) -> DeepSeekSearchProvider:
    return DeepSeekSearchProvider(api_key=key, base_url=replay.url + "/", client=client, **options)


async def test_request_shape(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=ANSWER))
    await deepseek(replay, client).search(SearchRequest("python 3.13", max_results=5))

    sent = replay.requests[0]
    assert (sent.method, sent.path) == ("POST", PATH)
    assert sent.headers["x-api-key"] == CANARY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["content-type"] == "application/json"
    assert "authorization" not in sent.headers
    body = sent.json()
    assert body["model"] == "deepseek-flash"
    assert body["tools"] == [{"type": "deepseek_web_search", "name": "deepseek_web_search"}]
    assert body["thinking"] == {"type": "disabled"}
    assert body["stream"] is False
    assert isinstance(body["max_tokens"], int) and body["max_tokens"] > 0
    assert body["messages"] == [{"role": "user", "content": "python 3.13"}]
    assert "search the web" in body["system"].lower()
    assert "tool_choice" not in body
    assert "temperature" not in body


async def test_max_tokens_and_temperature_come_from_the_request(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json=message()))
    await deepseek(replay, client).search(SearchRequest("q", max_tokens=900, temperature=0.3))
    body = replay.requests[0].json()
    assert (body["max_tokens"], body["temperature"]) == (900, 0.3)


async def test_the_model_is_configurable(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=message()))
    await deepseek(replay, client, model="deepseek-pro").search(SearchRequest("q"))
    assert replay.requests[0].json()["model"] == "deepseek-pro"


async def test_sources_and_answer(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=ANSWER))
    found = await deepseek(replay, client).search(SearchRequest("python 3.13"))

    assert [source.url for source in found.sources] == [DOCS, PEP, BLOG]
    docs, pep, blog = found.sources
    assert docs.title == "What's New In Python 3.13"
    assert docs.snippet == "Python 3.13 ships a new interactive interpreter."
    assert docs.published_at == "2024-10-07T00:00:00+00:00"
    # A result without a snippet gets the words the answer cites from it.
    assert (pep.title, pep.snippet, pep.published_at) == (None, SECOND.strip(), None)
    assert (blog.title, blog.snippet, blog.published_at) == (None, None, None)
    assert found.content == FIRST + SECOND + ".\n"
    assert not found.truncated


async def test_text_before_a_search_is_not_the_answer(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    reply = message(
        {"type": "text", "text": "Let me search for that."},
        call("srvtoolu_s_00_1", "q"),
        result("srvtoolu_s_00_1", [hit(DOCS, title="Docs")]),
        {"type": "text", "text": "The answer."},
    )
    replay.route("POST", PATH, Reply(json=reply))
    found = await deepseek(replay, client).search(SearchRequest("q"))
    assert found.content == "The answer."


async def test_an_answer_without_searching(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    reply = message({"type": "text", "text": "Paris is the capital of France."})
    replay.route("POST", PATH, Reply(json=reply))
    found = await deepseek(replay, client).search(SearchRequest("capital of france"))
    assert found.sources == ()
    assert found.content == "Paris is the capital of France."


async def test_failed_and_empty_searches_are_skipped(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    reply = message(
        call("srvtoolu_s_00_a", "q"),
        result(
            "srvtoolu_s_00_a",
            [{"type": "web_search_tool_result_error", "error_code": "unavailable"}],
        ),
        call("srvtoolu_s_00_b", "q"),
        result(
            "srvtoolu_s_00_b", {"type": "web_search_tool_result_error", "error_code": "unavailable"}
        ),
        call("srvtoolu_s_00_c", "q"),
        result("srvtoolu_s_00_c", []),
        call("srvtoolu_s_00_d", "q"),
        result("srvtoolu_s_00_d", [hit(BLOG, title="Real Python")]),
        {"type": "text", "text": "Found one."},
    )
    replay.route("POST", PATH, Reply(json=reply))
    found = await deepseek(replay, client).search(SearchRequest("q"))
    assert [source.url for source in found.sources] == [BLOG]
    assert found.content == "Found one."


async def test_nothing_found_is_an_empty_result(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    reply = message(
        call("srvtoolu_s_00_a", "q"),
        result(
            "srvtoolu_s_00_a",
            [{"type": "web_search_tool_result_error", "error_code": "unavailable"}],
        ),
        {"type": "text", "text": ""},
    )
    replay.route("POST", PATH, Reply(json=reply))
    found = await deepseek(replay, client).search(SearchRequest("q"))
    assert (found.sources, found.content) == ((), None)


async def test_leading_newlines_before_the_body_are_accepted(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """The service sends newlines while a non-streamed answer is still being generated."""
    replay.route("POST", PATH, Reply(body=b"\n\n\n" + json.dumps(ANSWER).encode()))
    found = await deepseek(replay, client).search(SearchRequest("q"))
    assert len(found.sources) == 3


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert DeepSeekSearchProvider(api_key=CANARY, client=client).available()
    assert not DeepSeekSearchProvider(api_key=None, client=client).available()
    assert not DeepSeekSearchProvider(api_key="", client=client).available()


GENERATION_FAILED = {
    "type": "error",
    "error": {
        "type": "api_error",
        "message": "The model failed to generate a complete response. Please retry.",
    },
    "usage": {"input_tokens": 10, "output_tokens": 0},
}


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            Reply(json={"id": "x", "type": "message", "role": "assistant"}),
            "deepseek: unexpected response shape (no valid 'content')",
        ),
        (
            Reply(json=GENERATION_FAILED),
            "deepseek: the model failed to answer (api_error: The model failed to generate",
        ),
        (
            Reply(json={"type": "error", "error": {"message": "leaked " + CANARY}}),
            "deepseek: the model failed to answer (error: leaked ***)",
        ),
    ],
)
async def test_failures_are_provider_errors_naming_deepseek(
    replay: ReplayServer, client: httpx.AsyncClient, reply: Reply, expected: str
) -> None:
    replay.route("POST", PATH, reply)
    with pytest.raises(WebError) as caught:
        await deepseek(replay, client).search(SearchRequest("q"))
    error = caught.value
    assert error.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert error.provider == "deepseek"
    assert error.message.startswith(expected)
    assert error.status is None
    assert CANARY not in error.message + repr(error) + str(error)


async def test_citations_and_queries(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    """Read as anthropic's are: the answer's citations in order, each search's queries once."""
    replay.route("POST", PATH, Reply(json=ANSWER))
    found = await deepseek(replay, client).search(SearchRequest("python 3.13"))
    assert [(c.url, c.title, c.cited_text) for c in found.citations] == [
        (DOCS, None, FIRST),
        (PEP, None, SECOND.strip()),
    ]
    assert found.queries == (
        "python 3.13 new features",
        "python 3.13 release notes",
        "python 3.13 jit",
    )
