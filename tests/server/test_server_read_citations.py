"""Pages read from the user's links are numbered like search sources, so 【n】 cites them in
every protocol (DeepSeek's Chat example cites a read page with a ``url_citation``)."""

from __future__ import annotations

from typing import Any

import pytest

from providers_for_tests import ScriptedFetch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from webreach.seam import FetchResult, HtmlBody

ARTICLE_URL = "https://example.com/article"
ARTICLE = FetchResult(
    ARTICLE_URL,
    200,
    HtmlBody(
        "<html><head><title>Release notes</title>"
        '<meta property="article:published_time" content="2026-01-02T08:00:00+01:00">'
        "</head><body><article><h1>Notes</h1>"
        "<p>The new interpreter is faster, with a JIT compiler, better error messages, "
        "and colour in the interactive prompt. Many small things improved as well.</p>"
        "</article></body></html>"
    ),
)
ASK = f"Summarise {ARTICLE_URL}, please."
READ = [{"type": "deepseek_read_url"}]
ANSWER = "It has a JIT compiler."


def read_then_cite(upstream: ScriptedUpstream) -> None:
    upstream.queue(
        Step(calls=[Call("read_link", {"url": ARTICLE_URL})]),
        Step(content=["It has a JIT", " compiler【", "1】."]),
    )


def page_told(upstream: ScriptedUpstream) -> str:
    told = upstream.requests[1]["messages"][-1]
    assert told["role"] == "tool"
    return str(told["content"])


def test_the_model_reads_the_page_number_and_date(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    read_then_cite(upstream)
    openai_client(webreach_url, strict=True).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": ASK}],
        tools=READ,  # type: ignore[list-item]
    )
    page = page_told(upstream)
    assert page.startswith(f"Page: {ARTICLE_URL}\n")
    assert "Source number: [1]" in page
    assert "Published: 2026-01-02T07:00:00Z" in page
    assert "【1】" in page.rsplit("</web_content>", 1)[1]  # told how to cite, outside the page


@pytest.mark.parametrize("stream", [False, True])
def test_chat_cites_a_read_page(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch, stream: bool
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    read_then_cite(upstream)
    client = openai_client(webreach_url, strict=True)
    ask: dict[str, Any] = {
        "model": "m",
        "messages": [{"role": "user", "content": ASK}],
        "tools": READ,
    }
    if stream:
        with client.chat.completions.stream(**ask) as events:
            message = events.get_final_completion().choices[0].message
    else:
        message = client.chat.completions.create(**ask).choices[0].message
    assert message.content == ANSWER
    annotations = message.annotations or []
    assert [
        (a.type, a.url_citation.url, a.url_citation.title, a.url_citation.end_index)
        for a in annotations
    ] == [("url_citation", ARTICLE_URL, "Release notes", len(ANSWER) - 1)]


@pytest.mark.parametrize("stream", [False, True])
def test_responses_cites_a_read_page(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch, stream: bool
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    read_then_cite(upstream)
    client = openai_client(webreach_url, strict=True)
    ask: dict[str, Any] = {"model": "m", "input": ASK, "tools": READ}
    if stream:
        with client.responses.stream(**ask) as events:
            final = events.get_final_response()
    else:
        final = client.responses.create(**ask)
    assert final.output_text == ANSWER
    message = final.output[-1]
    assert message.type == "message"
    (part,) = message.content
    assert part.type == "output_text"
    assert [(a.type, a.url, a.title) for a in part.annotations] == [  # type: ignore[union-attr]
        ("url_citation", ARTICLE_URL, "Release notes")
    ]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    "tool",
    [
        {"type": "web_fetch_20250910", "name": "web_fetch"},
        {"type": "deepseek_read_url", "name": "deepseek_read_url"},
    ],
)
def test_messages_cites_a_read_page(
    upstream: ScriptedUpstream,
    webreach_url: str,
    fetcher: ScriptedFetch,
    stream: bool,
    tool: dict[str, str],
) -> None:
    """Strict SDK parsing for Anthropic's own web fetch; the DeepSeek tool's call block is
    named outside the SDK's types, which DeepSeek's
    documentation says SDKs accept when not strict."""
    fetcher.pages[ARTICLE_URL] = ARTICLE
    read_then_cite(upstream)
    client = anthropic_client(
        webreach_url.removesuffix("/v1"), strict=tool["type"].startswith("web_fetch")
    )
    ask: dict[str, Any] = {
        "model": "m",
        "max_tokens": 512,
        "messages": [{"role": "user", "content": ASK}],
        "tools": [tool],
    }
    if stream:
        with client.messages.stream(**ask) as events:
            final = events.get_final_message()
    else:
        final = client.messages.create(**ask)
    texts = [block for block in final.content if block.type == "text"]
    assert "".join(t.text for t in texts) == ANSWER
    cited = [c for t in texts for c in t.citations or []]
    assert [(c.type, c.url, c.title) for c in cited] == [  # type: ignore[union-attr]
        ("web_search_result_location", ARTICLE_URL, "Release notes")
    ]


def test_a_search_and_a_read_page_have_distinct_numbers(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["python jit"]})]),
        Step(calls=[Call("read_link", {"url": ARTICLE_URL})]),
        Step(content="Searches say so【2】; the notes too【4】."),
    )
    reply = openai_client(webreach_url, strict=True).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": ASK}],
        tools=[{"type": "deepseek_web_search"}, *READ],  # type: ignore[list-item]
    )
    assert "[3] " in str(upstream.requests[1]["messages"][-1]["content"])
    assert "Source number: [4]" in page_told_at(upstream, 2)
    annotations = reply.choices[0].message.annotations or []
    assert [a.url_citation.url for a in annotations] == [
        "https://python-jit.example/2",
        ARTICLE_URL,
    ]


def test_a_read_page_found_by_the_search_keeps_its_number(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    found = "https://python-jit.example/2"
    fetcher.pages[found] = FetchResult(found, 200, ARTICLE.body)
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["python jit"]})]),
        Step(calls=[Call("read_link", {"url": found})]),
        Step(content="The notes say so【2】."),
    )
    reply = openai_client(webreach_url, strict=True).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": f"Read {found} and search too."}],
        tools=[{"type": "deepseek_web_search"}, *READ],  # type: ignore[list-item]
    )
    assert "Source number: [2]" in page_told_at(upstream, 2)
    annotations = reply.choices[0].message.annotations or []
    assert [a.url_citation.url for a in annotations] == [found]


def test_deep_search_numbers_the_pages_it_opens(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(
        Step(reasoning="Search.", calls=[Call("web_search", {"queries": ["python jit"]})]),
        Step(
            reasoning="Open.",
            calls=[
                Call("open_page", {"url": ARTICLE_URL}),
                Call("find_in_page", {"url": ARTICLE_URL, "pattern": "JIT"}),
            ],
        ),
        Step(reasoning="Enough.", content="It has a JIT【4】."),
    )
    reply = openai_client(webreach_url, strict=True).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "Is Python faster? Check the notes."}],
        tools=[{"type": "deepseek_web_search"}],  # type: ignore[list-item]
        extra_body={"thinking": {"type": "enabled"}},
    )
    told = [m["content"] for m in upstream.requests[2]["messages"] if m["role"] == "tool"]
    assert "Source number: [4]" in told[1]
    assert "Published: 2026-01-02T07:00:00Z" in told[1]
    assert "Source number: [4]" in told[2]
    annotations = reply.choices[0].message.annotations or []
    assert [a.url_citation.url for a in annotations] == [ARTICLE_URL]


def page_told_at(upstream: ScriptedUpstream, request: int) -> str:
    told = upstream.requests[request]["messages"][-1]
    assert told["role"] == "tool"
    return str(told["content"])
