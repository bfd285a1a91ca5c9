"""Deep search: with thinking on, the model searches, opens pages and finds text in them."""

from __future__ import annotations

import json
from typing import Any

from providers_for_tests import ScriptedFetch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import openai_client
from test_server_read_link import ARTICLE, ARTICLE_URL
from webreach.seam import WebError, WebErrorCode

THINK = {"thinking": {"type": "enabled"}}
WEB = [{"type": "deepseek_web_search"}]
ASK = [{"role": "user", "content": "Is the new Python interpreter faster? Check the notes."}]


def calls_of(reply: Any) -> list[dict[str, Any]]:
    steps = reply.choices[0].message.model_extra["server_tool_calls"]
    return [call for step in steps for call in step["calls"]]


def test_search_open_and_find_in_one_answer(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(
        Step(reasoning="Search first.", calls=[Call("web_search", {"queries": ["python jit"]})]),
        Step(
            reasoning="Open the notes.",
            calls=[
                Call("open_page", {"url": ARTICLE_URL}),
                Call("find_in_page", {"url": ARTICLE_URL, "pattern": "JIT"}),
            ],
        ),
        Step(reasoning="Enough.", content="Yes, it has a JIT【1】."),
    )
    client = openai_client(webreach_url)
    reply = client.chat.completions.create(model="m", messages=ASK, tools=WEB, extra_body=THINK)  # type: ignore[arg-type]

    assert [t["function"]["name"] for t in upstream.requests[0]["tools"]] == [
        "web_search",
        "open_page",
        "find_in_page",
    ]
    search, opened, found = calls_of(reply)
    assert {c["kind"] for c in (search, opened, found)} == {"deep_search"}
    assert search["action"]["type"] == "search"
    assert opened["action"] == {"type": "open_page", "url": ARTICLE_URL}
    assert opened["page"] == {"url": ARTICLE_URL, "title": "Release notes", "published_at": None}
    assert found["action"] == {"type": "find_in_page", "url": ARTICLE_URL, "pattern": "JIT"}
    assert found["page"]["title"] is None
    assert "signature" not in opened and "signature" not in found
    steps = reply.choices[0].message.model_extra["server_tool_calls"]
    assert [s["reasoning_content"] for s in steps] == ["Search first.", "Open the notes."]
    assert reply.choices[0].message.model_extra["reasoning_content"] == "Enough."

    tool_texts = [m["content"] for m in upstream.requests[2]["messages"] if m["role"] == "tool"]
    assert "JIT compiler" in tool_texts[1]  # the opened page
    assert "1 match(es) of 'JIT'" in tool_texts[2]
    assert fetcher.calls == [ARTICLE_URL]  # finding reuses the opened page

    usage = reply.usage
    assert usage is not None
    assert usage.model_extra["server_tool_use"] == {
        "web_search_requests": 1,
        "web_fetch_requests": 2,
        "tool_search": 1,
        "tool_fetch": 1,
        "tool_image_search": 0,
    }


def test_a_page_that_cannot_be_opened_is_unavailable(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    fetcher.pages[ARTICLE_URL] = WebError(WebErrorCode.WEB_BLOCKED_URL, "private")
    upstream.queue(Step(calls=[Call("open_page", {"url": ARTICLE_URL})]), Step(content="Sorry."))
    client = openai_client(webreach_url)
    reply = client.chat.completions.create(model="m", messages=ASK, tools=WEB, extra_body=THINK)  # type: ignore[arg-type]
    (call,) = calls_of(reply)
    assert call["status"] == "failed"
    assert call["error"] == {"code": "unavailable"}


def test_responses_deep_search_items_parse_strictly(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(
        Step(calls=[Call("open_page", {"url": ARTICLE_URL})]),
        Step(calls=[Call("find_in_page", {"url": ARTICLE_URL, "pattern": "faster"})]),
        Step(content="It is faster."),
    )
    strict = openai_client(webreach_url, strict=True)
    with strict.responses.stream(
        model="m",
        input=ASK[0]["content"],
        tools=[{"type": "web_search"}],  # type: ignore[list-item]
        reasoning={"effort": "high"},
    ) as stream:
        final = stream.get_final_response()
    items = [json.loads(item.model_dump_json()) for item in final.output]
    web = [item for item in items if item["type"] == "web_search_call"]
    assert [item["action"]["type"] for item in web] == ["open_page", "find_in_page"]
    assert {item["kind"] for item in web} == {"deep_search"}
    assert web[1]["action"]["pattern"] == "faster"
    assert final.output_text == "It is faster."
