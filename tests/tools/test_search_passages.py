"""``web_search`` at medium / high: the top pages' passages, within the budget and the deadline;
provider answers capped; the server's quick search quotes passages in its citations."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

import pytest

from _servers import Exchange, LocalServer, respond
from providers_for_tests import register_owned
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client
from webreach.providers.fetch.http import HttpFetchProvider
from webreach.seam import FetchResult, HtmlBody, SearchResult, SearchSource, WebRuntime
from webreach.testing import ScriptedFetch, ScriptedSearch
from webreach.tools import ToolOptions, web_search_tool
from webreach.tools.search.tool import ANSWER_CHARS, ANSWERS_CHARS, SearchToolResult, format_search

QUERY = "volcano eruption reykjanes lava"
FACT = "The lava field covered 4.2 square kilometres by the end of the first week."


def article(paragraphs: int = 60, fact_at: int = 40) -> bytes:
    body = []
    for n in range(paragraphs):
        text = f"Paragraph {n} on lava talks about fishing quotas, weather and municipal budgets."
        if n == fact_at:
            text = f"The Reykjanes volcano eruption sent lava towards the town. {FACT}"
        body.append(f"<p>{text}</p>")
    head = "<html><head><title>Eruption</title></head><body><article><h1>Eruption</h1>"
    return f"{head}{''.join(body)}</article></body></html>".encode()


def page(body: bytes, content_type: str = "text/html; charset=utf-8", status: int = 200):  # type: ignore[no-untyped-def]
    async def route(exchange: Exchange) -> None:
        await respond(exchange, status, body, {"Content-Type": content_type})

    return route


async def never(exchange: Exchange) -> None:
    await asyncio.sleep(3600)


@pytest.fixture
async def site() -> AsyncIterator[LocalServer]:
    routes = {
        "/article": page(article()),
        "/long": page(article(400, 1000)),
        "/slow": never,
        "/image": page(b"\x89PNG\r\n\x1a\n" + b"0" * 100, "image/png"),
        "/broken": page(b"gone", "text/plain", 500),
    }
    for n in range(8):
        routes[f"/long{n}"] = page(article(300, 150))
    async with LocalServer(routes) as server:
        yield server


def found(server: LocalServer, *paths: str) -> SearchResult:
    return SearchResult(
        tuple(
            SearchSource(server.url(p), f"Page {p}", f"Snippet of {p} about the eruption.")
            for p in paths
        )
    )


async def run(
    server: LocalServer, result: SearchResult, size: str, deadline: float = 3.0
) -> tuple[str, SearchToolResult]:
    search = ScriptedSearch(answers={QUERY: result})
    async with WebRuntime() as runtime:
        runtime.register_search_provider(search)
        register_owned(runtime, HttpFetchProvider(allow=["127.0.0.1"]))
        options = ToolOptions(search_context_size=size, search_page_timeout=deadline)  # type: ignore[arg-type]
        out = await web_search_tool(runtime, options).execute({"queries": [QUERY]})
    assert isinstance(out.data, SearchToolResult)
    return out.text, out.data


async def test_medium_adds_the_pages_most_relevant_passage(site: LocalServer) -> None:
    text, data = await run(site, found(site, "/article", "/long"), "medium")
    assert FACT in text
    assert "From the page:" in text
    assert len(text) <= 12_000
    assert data.passages[site.url("/article")][0].text.count(FACT) == 1
    assert "Snippet of /article" in text  # the snippet stays beside the passages


async def test_low_reads_no_page_and_prints_what_it_always_did(site: LocalServer) -> None:
    result = found(site, "/article", "/long")
    text, data = await run(site, result, "low")
    assert site.requests == []
    assert data.passages == {}
    plain = SearchToolResult((QUERY,), None, result.sources, False, "scripted")
    assert text == format_search(plain)
    assert FACT not in text


@pytest.mark.parametrize(("size", "budget"), [("medium", 12_000), ("high", 24_000)])
async def test_the_budget_holds_for_the_whole_output(
    site: LocalServer, size: str, budget: int
) -> None:
    paths = [f"/long{n}" for n in range(8)]
    text, data = await run(site, found(site, *paths), size)
    assert len(data.passages) == (5 if size == "medium" else 8)
    assert budget * 0.8 < len(text) <= budget
    shown = [
        p
        for p in paths
        if f"{site.url(p)}\n    Snippet of {p} about the eruption.\n    From the page:" in text
    ]
    assert len(shown) == len(data.passages)  # every page read got its best passage


async def test_failed_slow_and_unreadable_pages_keep_their_snippets(site: LocalServer) -> None:
    started = time.monotonic()
    text, data = await run(
        site, found(site, "/slow", "/image", "/broken", "/article"), "medium", deadline=1.0
    )
    assert time.monotonic() - started < 8  # the page that never answers did not hold it
    assert set(data.passages) == {site.url("/article")}
    for path in ("/slow", "/image", "/broken"):
        assert f"Snippet of {path} about the eruption." in text
    assert FACT in text


async def test_a_debug_line_says_how_long_the_reads_took_against_their_deadline(
    site: LocalServer, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="webreach.tools"):
        await run(site, found(site, "/article", "/broken"), "medium", deadline=2.5)
    (line,) = [r for r in caplog.records if getattr(r, "event", None) == "passages_read"]
    fields = line.fields  # type: ignore[attr-defined]
    assert (fields["pages"], fields["read"], fields["deadline_s"]) == (2, 1, 2.5)
    assert fields["late_s"] == max(0.0, round(fields["seconds"] - 2.5, 4))


async def test_passages_come_through_the_cache_and_scripted_fetchers() -> None:
    url = "https://a.example/"
    fetch = ScriptedFetch(pages={url: FetchResult(url, 200, HtmlBody(article().decode()))})
    search = ScriptedSearch(answers={QUERY: SearchResult((SearchSource(url, "A"),))})
    async with WebRuntime() as runtime:
        runtime.register_search_provider(search)
        runtime.register_fetch_provider(fetch)
        out = await web_search_tool(runtime).execute({"queries": [QUERY]})
    assert FACT in out.text
    assert fetch.calls == [url]
    assert out.data.to_json()["sources"][0]["passages"]


async def test_provider_answers_are_capped() -> None:
    long = "A sentence of a generated answer.\n" * 500  # 17,000 characters
    search = ScriptedSearch(
        answers={q: SearchResult((), content=f"{q}: {long}") for q in ("one", "two", "three")}
    )
    async with WebRuntime() as runtime:
        runtime.register_search_provider(search)
        tool = web_search_tool(runtime, ToolOptions(search_context_size="low"))
        single = await tool.execute({"queries": ["one"]})
        several = await tool.execute({"queries": ["one", "two", "three"]})
    assert isinstance(single.data, SearchToolResult) and single.data.content is not None
    assert len(single.data.content) <= ANSWER_CHARS
    assert "[Answer cut to 4,000 of its 17,004 characters.]" in single.text
    assert isinstance(several.data, SearchToolResult) and several.data.content is not None
    answers = several.data.content.split("### ")[1:]
    assert len(answers) == 3
    assert sum(len(a.split("\n\n", 1)[1]) for a in answers) <= ANSWERS_CHARS
    assert all("[Answer cut to 2,666 of its" in a for a in answers)


# --- the server's quick search -------------------------------------------------------------

PASSAGE_URL = "https://iceland-eruption.example/1"


@pytest.fixture
def server_options() -> ToolOptions:
    return ToolOptions(search_context_size="medium")


@pytest.fixture
def fetcher() -> ScriptedFetch:
    return ScriptedFetch(
        pages={PASSAGE_URL: FetchResult(PASSAGE_URL, 200, HtmlBody(article().decode()))}
    )


@pytest.mark.parametrize("stream", [False, True])
def test_a_quick_search_reads_passages_and_cites_them(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch, stream: bool
) -> None:
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["iceland eruption"]})]),
        Step(content=["The lava covered 4.2 km²", "【1】."]),
    )
    client = anthropic_client(webreach_url.removesuffix("/v1"))
    args = {
        "model": "m",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": "How big is the lava field?"}],
        "tools": [{"type": "web_search_20250305", "name": "web_search"}],
    }
    if stream:
        with client.messages.stream(**args) as events:  # type: ignore[arg-type]
            message = events.get_final_message()
    else:
        message = client.messages.create(**args)  # type: ignore[arg-type]
    tool_text = upstream.requests[1]["messages"][-1]["content"]
    assert FACT in tool_text and "From the page:" in tool_text
    cited = [b for b in message.content if b.type == "text" and b.citations]
    assert cited, message.content
    citation = cited[0].citations[0]
    assert citation.url == PASSAGE_URL
    assert "The Reykjanes volcano eruption sent lava towards the town." in citation.cited_text
    assert citation.cited_text.rstrip("…") in " ".join(tool_text.split())  # from a passage
    assert fetcher.calls[0] == PASSAGE_URL


async def test_passages_show_a_pages_words_without_its_link_urls() -> None:
    linked = (
        "<html><head><title>Eruption</title></head><body><article><h1>Eruption</h1>"
        + "<p>Paragraph on fishing quotas and municipal budgets.</p>" * 5
        + '<p>The Reykjanes volcano eruption: the <a href="/maps/lava-field-2024">lava field</a>'
        " covered 4.2 square kilometres by the end of the first week.</p>"
        "</article></body></html>"
    ).encode()
    async with LocalServer({"/linked": page(linked)}) as server:
        text, data = await run(server, found(server, "/linked"), "medium")
    sentence = "the lava field covered 4.2 square kilometres by the end of the first week."
    assert sentence in " ".join(text.split())  # one run of words, as the page reads
    assert "lava-field-2024" not in text  # a link's URL costs the budget and says nothing
    assert "](" not in data.passages[server.url("/linked")][0].text
