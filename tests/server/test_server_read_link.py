"""URL reading: the model reads the links of the last user message; pages come back sealed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers_for_tests import ScriptedFetch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from sdk_clients import openai_client as client
from server_harness import LiveServer
from webreach.seam import FetchResult, HtmlBody, TextBody, WebError, WebErrorCode, WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

ARTICLE_URL = "https://example.com/article"
ARTICLE = FetchResult(
    ARTICLE_URL,
    200,
    HtmlBody(
        "<html><head><title>Release notes</title></head><body><article><h1>Notes</h1>"
        "<p>The new interpreter is faster, with a JIT compiler, better error messages, "
        "and colour in the interactive prompt. Many small things improved as well.</p>"
        "</article></body></html>"
    ),
)
READ = [{"type": "deepseek_read_url"}]
ASK = [{"role": "user", "content": f"Summarise {ARTICLE_URL}, please."}]


def read_step(url: str = ARTICLE_URL) -> Step:
    return Step(calls=[Call("read_link", {"url": url})])


def calls_of(reply: Any) -> list[dict[str, Any]]:
    return [
        c
        for step in reply.choices[0].message.model_extra["server_tool_calls"]
        for c in step["calls"]
    ]


def test_a_link_of_the_last_message_is_read_and_sealed(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(read_step(), Step(content="It is about a faster interpreter."))
    reply = client(webreach_url).chat.completions.create(model="m", messages=ASK, tools=READ)  # type: ignore[arg-type]

    assert reply.choices[0].message.content == "It is about a faster interpreter."
    (call,) = calls_of(reply)
    assert call["type"] == "deepseek_read_url"
    assert call["kind"] == "read_link"
    assert call["action"] == {"type": "read_link", "url": ARTICLE_URL}
    assert call["status"] == "completed"
    assert call["page"] == {"url": ARTICLE_URL, "title": "Release notes", "published_at": None}
    assert call["signature"]
    assert "JIT compiler" not in json.dumps(reply.model_dump())  # the page travels sealed only
    usage = reply.usage
    assert usage is not None
    assert usage.model_extra["server_tool_use"]["web_fetch_requests"] == 1
    assert usage.model_extra["server_tool_use"]["tool_fetch"] == 1

    first, second = upstream.requests
    assert [t["function"]["name"] for t in first["tools"]] == ["read_link"]
    page = second["messages"][-1]["content"]
    assert page.startswith(f"Page: {ARTICLE_URL}")
    assert "JIT compiler" in page
    assert '<web_content source="read_link">' in page


def test_a_later_round_restores_the_page_from_its_signature(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(read_step(), Step(content="A faster interpreter."))
    first = client(webreach_url).chat.completions.create(model="m", messages=ASK, tools=READ)  # type: ignore[arg-type]
    reply = first.choices[0].message.model_dump(exclude_none=True)

    def second_round(signature_edit: Any = None) -> dict[str, Any]:
        sent = json.loads(json.dumps(reply))
        if signature_edit is not None:
            signature_edit(sent["server_tool_calls"][0]["calls"][0])
        history = [*ASK, sent, {"role": "user", "content": "Quote its first sentence."}]
        client(webreach_url).chat.completions.create(model="m", messages=history, tools=READ)  # type: ignore[arg-type]
        return upstream.requests[-1]

    restored = second_round()
    assert "JIT compiler" in restored["messages"][0]["content"]
    assert restored["messages"][0]["content"].startswith(ASK[0]["content"])
    assert "server_tool_calls" not in restored["messages"][1]
    assert fetcher.calls == [ARTICLE_URL]  # restored, not fetched again

    def tamper(call: dict[str, Any]) -> None:
        call["signature"] = call["signature"][:-8] + "AAAAAAAA"

    assert "JIT compiler" not in json.dumps(second_round(tamper)["messages"])
    # A client that drops the signature gets the page from the store, by the call's id.
    assert "JIT compiler" in json.dumps(
        second_round(lambda call: call.pop("signature"))["messages"]
    )
    assert fetcher.calls == [ARTICLE_URL]


def test_a_foreign_key_restores_nothing(upstream: ScriptedUpstream, fetcher: ScriptedFetch) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE

    def serve(key: str) -> LiveServer:
        runtime = WebRuntime()
        runtime.register_fetch_provider(fetcher)
        config = ServerSettings(upstream_base_url=upstream.url, signing_key=key)
        return LiveServer(create_app(config, runtime, ToolOptions()))

    upstream.queue(read_step(), Step(content="ok"))
    with serve("key-a" * 8) as a:
        first = client(a.url + "/v1").chat.completions.create(model="m", messages=ASK, tools=READ)  # type: ignore[arg-type]
    history = [
        *ASK,
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "user", "content": "And then?"},
    ]
    with serve("key-a" * 8) as same:
        client(same.url + "/v1").chat.completions.create(model="m", messages=history, tools=READ)  # type: ignore[arg-type]
    assert "JIT compiler" in upstream.requests[-1]["messages"][0]["content"]
    with serve("key-b" * 8) as other:
        reply = client(other.url + "/v1").chat.completions.create(
            model="m", messages=history, tools=READ
        )  # type: ignore[arg-type]
    assert reply.choices[0].message.content
    assert "JIT compiler" not in upstream.requests[-1]["messages"][0]["content"]


@pytest.mark.parametrize(
    ("page", "url", "code"),
    [
        (ARTICLE, "https://elsewhere.example/", "url_not_allowed"),
        (WebError(WebErrorCode.WEB_BLOCKED_URL, "private address"), ARTICLE_URL, "url_not_allowed"),
        (WebError(WebErrorCode.WEB_FETCH_TIMEOUT, "too slow"), ARTICLE_URL, "url_not_accessible"),
        (FetchResult(ARTICLE_URL, 404, TextBody("gone")), ARTICLE_URL, "url_not_accessible"),
    ],
)
def test_failed_reads_are_results_not_failures(
    upstream: ScriptedUpstream,
    webreach_url: str,
    fetcher: ScriptedFetch,
    page: FetchResult | WebError,
    url: str,
    code: str,
) -> None:
    fetcher.pages[ARTICLE_URL] = page
    upstream.queue(read_step(url), Step(content="I could not read it."))
    reply = client(webreach_url).chat.completions.create(model="m", messages=ASK, tools=READ)  # type: ignore[arg-type]
    (call,) = calls_of(reply)
    assert call["status"] == "failed"
    assert call["error"] == {"code": code}
    assert "signature" not in call
    assert upstream.requests[1]["messages"][-1]["content"].startswith("ERROR:")
    if url != ARTICLE_URL:
        assert fetcher.calls == []
    assert reply.usage is not None
    assert "server_tool_use" not in (reply.usage.model_extra or {})  # nothing billed


def test_no_link_no_reading_tool(upstream: ScriptedUpstream, webreach_url: str) -> None:
    client(webreach_url).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "Hello there"}],
        tools=READ,  # type: ignore[arg-type]
    )
    assert "tools" not in upstream.requests[0]


def test_only_the_last_user_message_counts(upstream: ScriptedUpstream, webreach_url: str) -> None:
    history = [
        *ASK,
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Thanks"},
    ]
    client(webreach_url).chat.completions.create(model="m", messages=history, tools=READ)  # type: ignore[arg-type]
    assert "tools" not in upstream.requests[0]


def test_deep_search_does_not_read_links_separately(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    client(webreach_url).chat.completions.create(
        model="m",
        messages=ASK,
        tools=[{"type": "deepseek_web_search"}, *READ],  # type: ignore[list-item]
        extra_body={"thinking": {"type": "enabled"}},
    )
    names = [t["function"]["name"] for t in upstream.requests[0]["tools"]]
    assert names == ["web_search", "open_page", "find_in_page"]


def test_tool_choice_none_turns_reading_off(upstream: ScriptedUpstream, webreach_url: str) -> None:
    client(webreach_url).chat.completions.create(
        model="m",
        messages=ASK,
        tools=READ,
        tool_choice="none",  # type: ignore[arg-type]
    )
    assert all(t["function"]["name"] != "read_link" for t in upstream.requests[0].get("tools", []))


def test_messages_web_fetch_reads_a_link_for_strict_clients(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:

    fetcher.pages[ARTICLE_URL] = ARTICLE
    for strict in (False, True):
        upstream.queue(read_step(), Step(content="A faster interpreter."))
        messages = anthropic_client(webreach_url.removesuffix("/v1"), strict=strict)
        with messages.messages.stream(
            model="m",
            max_tokens=512,
            messages=[{"role": "user", "content": ASK[0]["content"]}],
            tools=[{"type": "web_fetch_20250910", "name": "web_fetch"}],  # type: ignore[list-item]
        ) as stream:
            final = stream.get_final_message()
        kinds = [block.type for block in final.content]
        assert kinds == ["server_tool_use", "web_fetch_tool_result", "text"]
        use, result = final.content[0], final.content[1]
        assert use.name == "web_fetch"  # type: ignore[union-attr]
        assert result.model_extra["kind"] == "read_link"  # type: ignore[union-attr]
        assert result.model_extra["signature"]  # type: ignore[union-attr]
        assert final.usage.server_tool_use is not None
        assert final.usage.server_tool_use.web_fetch_requests == 1


def test_responses_read_link_item(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(read_step(), Step(content="A faster interpreter."))
    strict = openai_client(webreach_url, strict=True)
    with strict.responses.stream(
        model="m",
        input=ASK[0]["content"],
        tools=[{"type": "deepseek_read_url"}],  # type: ignore[list-item]
    ) as stream:
        final = stream.get_final_response()
    call = final.output[0]
    assert call.type == "web_search_call"
    data = call.model_dump()
    assert data["kind"] == "read_link"
    assert data["action"]["type"] == "open_page"
    assert data["page"]["title"] == "Release notes"
    assert data["signature"]
    assert final.output_text == "A faster interpreter."


def test_a_page_cut_by_a_fetch_limit_names_it_to_the_model(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    by = "2,000,000 characters (WEBREACH_FETCH_MAX_BODY_CHARS)"
    fetcher.pages[ARTICLE_URL] = FetchResult(
        ARTICLE_URL, 200, TextBody("The first part."), truncated=True, truncated_by=by
    )
    upstream.queue(read_step(), Step(content="Read."))
    client(webreach_url).chat.completions.create(model="m", messages=ASK, tools=READ)  # type: ignore[arg-type]
    page = upstream.requests[1]["messages"][-1]["content"]
    assert f"[The page is longer than the fetch limit of {by}; only its first part is shown.]" in (
        page
    )
