"""Searches and fetches with ``live=False`` (a Responses ``external_web_access: false``) answer
from the cache alone: a miss is ``WEB_NOT_CACHED`` and no provider is called, robots.txt
included, without the miss being remembered as "no rules"."""

from __future__ import annotations

import pytest

from providers_for_tests import ScriptedFetch
from server_harness import default_search
from webreach.cache import MemoryStore
from webreach.seam import (
    FetchRequest,
    FetchResult,
    SearchRequest,
    TextBody,
    WebError,
    WebErrorCode,
    WebRuntime,
)

PAGE = "https://site.example/page"


async def test_a_cache_only_search_finds_what_was_searched_and_calls_no_provider() -> None:
    search = default_search()
    runtime = WebRuntime(cache=MemoryStore())
    runtime.register_search_provider(search)
    asked = SearchRequest("iceland population", max_results=3)
    with pytest.raises(WebError) as missed:
        await runtime.search(asked, live=False)
    assert missed.value.code == WebErrorCode.WEB_NOT_CACHED
    assert search.calls == []
    found = await runtime.search(asked)
    again = await runtime.search(asked, live=False)
    assert again.sources == found.sources and len(found.sources) == 3
    assert len(search.calls) == 1
    await runtime.aclose()


async def test_a_cache_only_fetch_needs_the_page_and_its_robots_txt_cached() -> None:
    fetcher = ScriptedFetch(pages={PAGE: FetchResult(PAGE, 200, TextBody("Hello."))})
    runtime = WebRuntime(cache=MemoryStore())
    runtime.register_fetch_provider(fetcher)
    with pytest.raises(WebError) as missed:
        await runtime.fetch(FetchRequest(PAGE), live=False)
    assert missed.value.code == WebErrorCode.WEB_NOT_CACHED
    assert fetcher.calls == []
    await runtime.fetch(FetchRequest(PAGE))
    cached = await runtime.fetch(FetchRequest(PAGE), live=False)
    assert cached.body.content == "Hello."
    with pytest.raises(WebError) as unread:
        await runtime.fetch(FetchRequest(PAGE, obey_robots=True), live=False)
    assert unread.value.code == WebErrorCode.WEB_NOT_CACHED
    assert fetcher.robots_calls == [] and fetcher.calls == [PAGE]
    # the miss was not kept as "no rules": a live fetch still reads robots.txt, and then
    # a cache-only one finds both
    await runtime.fetch(FetchRequest(PAGE, obey_robots=True))
    assert fetcher.robots_calls == ["https://site.example/robots.txt"]
    read = await runtime.fetch(FetchRequest(PAGE, obey_robots=True), live=False)
    assert read.body.content == "Hello."
    assert fetcher.robots_calls == ["https://site.example/robots.txt"]
    await runtime.aclose()
