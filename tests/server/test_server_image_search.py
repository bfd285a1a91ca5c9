"""Image search: a user message with images and ``deepseek_web_search`` declared gives the model
an ``image_search`` function. Its calls have kind ``image_search`` (``deep_image_search`` when
thinking), empty ``queries``, sources with ``image_url``, and count in ``tool_image_search``;
read here through the official SDKs in every protocol.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from providers_for_tests import ScriptedFetch, ScriptedSearch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from server_harness import LiveServer
from webreach.seam import (
    ImageBytes,
    ImageMatch,
    ImageSearchResult,
    ImageUrl,
    WebError,
    WebErrorCode,
    WebRuntime,
)
from webreach.server import ServerSettings, create_app
from webreach.testing import ScriptedImageSearch
from webreach.tools import ToolOptions

PHOTO = "https://images.example/tower.jpg"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
FOUND = ImageSearchResult(
    matches=(
        ImageMatch(
            "https://travel.example/paris",
            "Eiffel Tower at dusk",
            image_url="https://travel.example/img/eiffel.jpg",
            snippet="The tower from the Trocadéro.",
        ),
        ImageMatch("https://wiki.example/Eiffel_Tower", "Eiffel Tower"),
    ),
    content="Eiffel Tower",
)
ASK = "Where was this photo taken?"
SEARCH_IMAGE = Step(calls=[Call("image_search", {"image": 1})])
ANSWER = Step(content="It is the Eiffel Tower in Paris【1】.")


@pytest.fixture
def images() -> ScriptedImageSearch:
    return ScriptedImageSearch("lens", answers={PHOTO: FOUND})


@pytest.fixture
def image_url(
    upstream: ScriptedUpstream,
    search: ScriptedSearch,
    fetcher: ScriptedFetch,
    images: ScriptedImageSearch,
) -> Iterator[str]:
    config = ServerSettings(upstream_base_url=upstream.url)
    runtime = WebRuntime()
    runtime.register_search_provider(search)
    runtime.register_fetch_provider(fetcher)
    runtime.register_image_search_provider(images)
    with LiveServer(create_app(config, runtime, ToolOptions(), keepalive_seconds=0.2)) as server:
        yield server.url + "/v1"


def chat_request(**extra: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": ASK},
                    {"type": "image_url", "image_url": {"url": PHOTO}},
                ],
            }
        ],
        "tools": [{"type": "deepseek_web_search"}],
        **extra,
    }


def offered(upstream: ScriptedUpstream) -> dict[str, Any]:
    return {t["function"]["name"]: t["function"] for t in upstream.requests[0].get("tools", [])}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_chat_image_search_is_a_call_with_empty_queries_and_image_sources(
    image_url: str, upstream: ScriptedUpstream, images: ScriptedImageSearch, stream: bool
) -> None:
    upstream.queue(SEARCH_IMAGE, ANSWER)
    client = openai_client(image_url)
    if stream:
        with client.chat.completions.stream(**chat_request()) as events:
            for _ in events:
                pass
            completion = events.current_completion_snapshot
    else:
        completion = client.chat.completions.create(**chat_request())
    message = completion.choices[0].message
    assert message.content == "It is the Eiffel Tower in Paris."
    (step,) = (message.model_extra or {})["server_tool_calls"]
    (call,) = step["calls"]
    assert call["kind"] == "image_search"
    assert call["action"] == {"type": "search", "queries": [], "query": ""}
    assert call["status"] == "completed"
    first, second = call["sources"]
    assert first["image_url"] == "https://travel.example/img/eiffel.jpg"
    assert first["title"] == "Eiffel Tower at dusk"
    assert "image_url" not in second
    assert message.annotations is not None
    assert message.annotations[0].url_citation.url == "https://travel.example/paris"
    assert completion.usage is not None
    used = (completion.usage.model_extra or {})["server_tool_use"]
    assert (used["tool_image_search"], used["tool_search"]) == (1, 0)
    assert used["web_search_requests"] == 1
    assert images.calls[0].image == ImageUrl(PHOTO)
    assert offered(upstream)["image_search"]["parameters"]["properties"]["image"]["maximum"] == 1
    told = upstream.requests[1]["messages"][-1]["content"]
    assert "Eiffel Tower at dusk" in told
    assert "https://travel.example/img/eiffel.jpg" in told


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_messages_image_given_as_bytes_is_searched_as_bytes(
    image_url: str, upstream: ScriptedUpstream, images: ScriptedImageSearch, stream: bool
) -> None:
    images.answers[ImageBytes(PNG, "image/png")] = FOUND
    upstream.queue(SEARCH_IMAGE, ANSWER)
    client = anthropic_client(image_url.removesuffix("/v1"), strict=True)
    request: dict[str, Any] = {
        "model": "m",
        "max_tokens": 256,
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": "image/png",
                            "data": base64.b64encode(PNG).decode(),
                        },
                    },
                    {"type": "text", "text": ASK},
                ],
            }
        ],
        "tools": [{"type": "deepseek_web_search", "name": "web_search"}],
    }
    if stream:
        with client.messages.stream(**request) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**request)
    use, result = message.content[0], message.content[1]
    assert use.type == "server_tool_use"
    assert use.input == {"action": "search", "queries": []}
    assert (use.model_extra or {})["kind"] == "image_search"
    assert result.type == "web_search_tool_result"
    assert (result.model_extra or {})["kind"] == "image_search"
    assert isinstance(result.content, list)
    assert (result.content[0].model_extra or {})["image_url"] == (
        "https://travel.example/img/eiffel.jpg"
    )
    counted = message.usage.server_tool_use
    assert counted is not None
    assert (counted.model_extra or {})["tool_image_search"] == 1
    assert images.calls[0].image == ImageBytes(PNG, "image/png")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_responses_deep_image_search_with_thinking(
    image_url: str, upstream: ScriptedUpstream, stream: bool
) -> None:
    upstream.queue(SEARCH_IMAGE, ANSWER)
    client = openai_client(image_url)
    request: dict[str, Any] = {
        "model": "m",
        "input": [
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": ASK},
                    {"type": "input_image", "image_url": PHOTO, "detail": "auto"},
                ],
            }
        ],
        "tools": [{"type": "deepseek_web_search"}],
        "reasoning": {"effort": "high"},
    }
    if stream:
        with client.responses.stream(**request) as events:
            response = events.get_final_response()
    else:
        response = client.responses.create(**request)
    call = response.output[0]
    assert call.type == "web_search_call"
    extra = call.model_extra or {}
    assert extra["kind"] == "deep_image_search"
    action = call.action.model_dump()
    assert action["queries"] == []
    assert action["sources"][0]["image_url"] == "https://travel.example/img/eiffel.jpg"
    assert response.usage is not None
    assert (response.usage.model_extra or {})["server_tool_use"]["tool_image_search"] == 1


def test_a_failed_or_empty_image_search_is_not_billed(
    image_url: str, upstream: ScriptedUpstream, images: ScriptedImageSearch
) -> None:
    images.answers[PHOTO] = WebError(WebErrorCode.WEB_PROVIDER_ERROR, "lens: HTTP 500")
    upstream.queue(SEARCH_IMAGE, Step(content="I could not find it."))
    client = openai_client(image_url)
    message = client.chat.completions.create(**chat_request()).choices[0].message
    (step,) = (message.model_extra or {})["server_tool_calls"]
    call = step["calls"][0]
    assert call["status"] == "failed"
    assert call["error"] == {"code": "unavailable"}
    assert "image search failed" in upstream.requests[1]["messages"][-1]["content"]
    images.answers[PHOTO] = ImageSearchResult(matches=())
    upstream.queue(SEARCH_IMAGE, Step(content="Nothing."))
    completion = client.chat.completions.create(**chat_request())
    assert completion.usage is not None
    # Nothing billed: DeepSeek omits server_tool_use when all its counts are 0.
    assert "server_tool_use" not in (completion.usage.model_extra or {})
    (step,) = (completion.choices[0].message.model_extra or {})["server_tool_calls"]
    assert step["calls"][0]["sources"] == []


@pytest.mark.parametrize(
    "request_changes",
    [
        {"tools": [{"type": "web_search"}]},
        {"messages": [{"role": "user", "content": ASK}]},
        {"tool_choice": "none"},
    ],
    ids=["another search tool", "no image", "tools off"],
)
def test_no_image_search_is_offered_without_an_image_and_deepseek_web_search(
    image_url: str, upstream: ScriptedUpstream, request_changes: dict[str, Any]
) -> None:
    upstream.queue(Step(content="An answer."))
    client = openai_client(image_url)
    client.chat.completions.create(**chat_request(**request_changes))
    assert "image_search" not in offered(upstream)


def test_no_image_search_is_offered_when_no_provider_is_ready(
    webreach_url: str, upstream: ScriptedUpstream
) -> None:
    upstream.queue(Step(content="An answer."))
    client = openai_client(webreach_url)
    client.chat.completions.create(**chat_request())
    assert set(offered(upstream)) == {"web_search"}
