"""Brave against a local server that replays responses shaped like Brave's Web Search API."""

from __future__ import annotations

import httpx
import pytest

from replay_server import ReplayServer, Reply
from webreach.providers._plain_text import plain_text
from webreach.providers.search.brave import BraveSearchProvider
from webreach.seam import SearchRequest, WebError, WebErrorCode

CANARY = "brave-canary-key-3f9a21"
PATH = "/res/v1/web/search"

BRAVE_RESPONSE = {
    "query": {
        "original": "python 3.13",
        "show_strict_warning": False,
        "is_navigational": False,
        "spellcheck_off": True,
        "country": "us",
        "more_results_available": True,
    },
    "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": False}]},
    "type": "search",
    "web": {
        "type": "search",
        "family_friendly": True,
        "results": [
            {
                "title": "What&#x27;s New In <strong>Python</strong> 3.13",
                "url": "https://docs.python.org/3/whatsnew/3.13.html",
                "is_source_local": False,
                "description": "This article explains the new features in <strong>Python</strong>"
                " 3.13, compared to 3.12. Python 3.13 was released on October 7, 2024.",
                "page_age": "2024-10-07T00:00:00",
                "age": "October 7, 2024",
                "language": "en",
                "family_friendly": True,
                "type": "search_result",
                "subtype": "generic",
                "meta_url": {
                    "scheme": "https",
                    "netloc": "docs.python.org",
                    "hostname": "docs.python.org",
                },
            },
            {
                "title": "Python Release Python 3.13.0",
                "url": "https://www.python.org/downloads/release/python-3130/",
                "description": "Python 3.13.0 is the newest major release &amp; the first"
                " with a JIT.",
                "age": "3 weeks ago",
                "type": "search_result",
            },
            {"url": "https://realpython.com/python313-new-features/", "type": "search_result"},
            {"title": "dropped: no url", "type": "search_result"},
        ],
    },
}


def brave(replay: ReplayServer, client: httpx.AsyncClient) -> BraveSearchProvider:
    return BraveSearchProvider(api_key=CANARY, base_url=replay.url + "/", client=client)


async def test_request_shape(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("GET", PATH, Reply(json=BRAVE_RESPONSE))
    await brave(replay, client).search(SearchRequest("python 3.13", max_results=5))

    sent = replay.requests[0]
    assert (sent.method, sent.path) == ("GET", PATH)
    assert sent.query == {"q": ["python 3.13"], "count": ["5"]}
    assert sent.headers["x-subscription-token"] == CANARY
    assert sent.headers["accept"] == "application/json"
    assert sent.headers["user-agent"].startswith("webreach/")
    assert sent.body == b""


async def test_mapping_strips_highlighting_and_keeps_missing_fields_empty(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("GET", PATH, Reply(json=BRAVE_RESPONSE))
    result = await brave(replay, client).search(SearchRequest("python 3.13"))

    first, second, third = result.sources
    assert first.url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert first.title == "What's New In Python 3.13"
    assert first.snippet == (
        "This article explains the new features in Python 3.13, compared to 3.12."
        " Python 3.13 was released on October 7, 2024."
    )
    assert first.published_at == "2024-10-07T00:00:00"
    assert second.snippet == "Python 3.13.0 is the newest major release & the first with a JIT."
    assert second.published_at == "3 weeks ago"
    assert third.url == "https://realpython.com/python313-new-features/"
    assert (third.title, third.snippet, third.published_at) == (None, None, None)
    assert result.content is None


async def test_count_is_capped_at_brave_maximum(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("GET", PATH, Reply(json=BRAVE_RESPONSE))
    await brave(replay, client).search(SearchRequest("q", max_results=50))
    assert replay.requests[0].query["count"] == ["20"]


async def test_no_max_results_sends_no_count(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("GET", PATH, Reply(json=BRAVE_RESPONSE))
    await brave(replay, client).search(SearchRequest("q"))
    assert "count" not in replay.requests[0].query


async def test_no_web_section_means_nothing_found(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    nothing = {"query": {"original": "zxqv qqq"}, "mixed": {"type": "mixed"}, "type": "search"}
    replay.route("GET", PATH, Reply(json=nothing))
    result = await brave(replay, client).search(SearchRequest("zxqv qqq"))
    assert result.sources == ()


@pytest.mark.parametrize(
    "payload",
    [{"query": {"original": "q"}}, {"type": "search", "web": {"type": "search"}}],
    ids=["not-a-search-response", "web-without-results"],
)
async def test_a_malformed_response_is_a_provider_error(
    replay: ReplayServer, client: httpx.AsyncClient, payload: dict[str, object]
) -> None:
    replay.route("GET", PATH, Reply(json=payload))
    with pytest.raises(WebError) as caught:
        await brave(replay, client).search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.message.startswith("brave: unexpected response shape")


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert BraveSearchProvider(api_key=CANARY, client=client).available()
    assert not BraveSearchProvider(api_key=None, client=client).available()
    assert not BraveSearchProvider(api_key="", client=client).available()


@pytest.mark.parametrize(
    ("marked", "plain"),
    [
        ("<strong>Python</strong> 3.13", "Python 3.13"),
        ("<b class='hl'>a</b><br/>b <em>c</em>", "ab c"),
        ("Tom &amp; Jerry&#x27;s", "Tom & Jerry's"),
        ("write &lt;b&gt; for bold", "write <b> for bold"),
        ("a <div>block</div> <script>x</script>", "a <div>block</div> <script>x</script>"),
        ("  spread\n\tout  ", "spread out"),
    ],
)
def test_plain_text_removes_only_simple_inline_markup(marked: str, plain: str) -> None:
    assert plain_text(marked) == plain
