"""DuckDuckGo (keyless, via ``ddgs``), with the library call replaced at its boundary."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

from webreach.providers.search.duckduckgo import DuckDuckGoSearchProvider
from webreach.seam import SearchRequest, WebError, WebErrorCode

ROWS = [
    {
        "title": "Python 3.13",
        "href": "https://www.python.org/downloads/release/python-3130/",
        "body": "Python 3.13.0 is the newest major release.",
    },
    {"title": "", "href": "https://example.org/no-title", "body": ""},
    {"title": "no href", "body": "dropped"},
]


async def test_maps_rows_and_runs_off_the_event_loop() -> None:
    seen: dict[str, Any] = {}

    def text_search(query: str, max_results: int) -> list[dict[str, Any]]:
        seen.update(query=query, max_results=max_results, thread=threading.current_thread())
        return ROWS

    provider = DuckDuckGoSearchProvider(text_search=text_search)
    result = await provider.search(SearchRequest("python", max_results=3))

    assert seen["query"] == "python" and seen["max_results"] == 3
    assert seen["thread"] is not threading.main_thread()
    first, second = result.sources
    assert (first.url, first.title, first.snippet) == (
        "https://www.python.org/downloads/release/python-3130/",
        "Python 3.13",
        "Python 3.13.0 is the newest major release.",
    )
    assert (second.title, second.snippet, second.published_at) == (None, None, None)
    assert provider.available()


async def test_no_results_is_an_empty_result_not_an_error() -> None:
    def text_search(query: str, max_results: int) -> list[dict[str, Any]]:
        raise DDGSException("No results found.")

    result = await DuckDuckGoSearchProvider(text_search=text_search).search(SearchRequest("q"))
    assert result.sources == ()


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (RatelimitException("202 Ratelimit"), "duckduckgo: rate limited"),
        (TimeoutException("timed out"), "duckduckgo: the search timed out"),
        (DDGSException("boom"), "duckduckgo: search failed (DDGSException: boom)"),
        (
            OSError("network is unreachable"),
            "duckduckgo: the search engines could not be reached (no connection;",
        ),
        (
            # what ddgs 9 raises offline: its HTTP client's text, naming the engine it last tried
            DDGSException(
                "DNSError: DNSError('error sending request for url (https://www.startpage.com/"
                "sp/search) > error resolving DNS > DNS error: no records found for Query')"
            ),
            "duckduckgo: the search engines could not be reached "
            "(DNS lookup failed; is this machine offline?)",
        ),
        (
            DDGSException("ConnectError: error sending request: Connection refused (os error 111)"),
            "duckduckgo: the search engines could not be reached (no connection;",
        ),
        (
            DDGSException("ConnectError: invalid peer certificate: UnknownIssuer"),
            "duckduckgo: the search engines could not be reached (the TLS handshake failed)",
        ),
    ],
)
async def test_library_failures_are_provider_errors(error: Exception, message: str) -> None:
    def text_search(query: str, max_results: int) -> list[dict[str, Any]]:
        raise error

    with pytest.raises(WebError) as caught:
        await DuckDuckGoSearchProvider(text_search=text_search).search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.provider == "duckduckgo"
    assert caught.value.message.startswith(message)
