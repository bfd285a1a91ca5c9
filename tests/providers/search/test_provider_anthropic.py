"""Anthropic against a local server replaying Messages responses with ``web_search`` blocks,
shaped like the web search tool's documentation (``server_tool_use``, ``web_search_tool_result``,
text blocks with ``web_search_result_location`` citations, error results)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from replay_server import ReplayServer, Reply
from webreach.config import build_runtime
from webreach.providers.search.anthropic import (
    PROVIDER,
    AnthropicSearchProvider,
    AnthropicSettings,
)
from webreach.providers.spec import ProviderContext
from webreach.seam import SearchCitation, SearchRequest, SharedCredential, WebError, WebErrorCode

CANARY = "sk-ant-canary-0b7d41"
GENERAL = "sk-ant-general-canary-9e21"
PATH = "/v1/messages"
WIKI = "https://en.wikipedia.org/wiki/Claude_Shannon"
BRITANNICA = "https://www.britannica.com/biography/Claude-Shannon"
MIT = "https://news.mit.edu/2001/shannon"


def call(tool_id: str, query: str) -> dict[str, Any]:
    return {
        "type": "server_tool_use",
        "id": tool_id,
        "name": "web_search",
        "input": {"query": query},
    }


def result(tool_id: str, content: Any) -> dict[str, Any]:
    return {"type": "web_search_tool_result", "tool_use_id": tool_id, "content": content}


def hit(url: str, title: str, page_age: str | None = None) -> dict[str, Any]:
    return {
        "type": "web_search_result",
        "url": url,
        "title": title,
        "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y...",
        "page_age": page_age,
    }


def cite(url: str, title: str, text: str) -> dict[str, Any]:
    return {
        "type": "web_search_result_location",
        "url": url,
        "title": title,
        "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm..",
        "cited_text": text,
    }


def message(*blocks: dict[str, Any], stop_reason: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_01Xq2bWJf7mN8s3vK4tL9pRz",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5-20251001",
        "content": list(blocks),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 6039,
            "output_tokens": 931,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "server_tool_use": {"web_search_requests": 2},
            "service_tier": "standard",
        },
    }


BORN = "Claude Shannon was born on April 30, 1916, in Petoskey, Michigan"
WORK = "he founded information theory with his 1948 paper"
ANSWER = message(
    {"type": "text", "text": "I'll search for when Claude Shannon was born."},
    call("srvtoolu_01WYG3ziw53XMcoyKL4XcZmE", "claude shannon birth date"),
    result(
        "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
        [
            hit(WIKI, "Claude Shannon - Wikipedia", "April 30, 2025"),
            hit(BRITANNICA, "Claude Shannon | Biography & Facts | Britannica", "2 weeks ago"),
        ],
    ),
    call("srvtoolu_01B3c9d8e7f6a5b4c3d2e1f0", "claude shannon information theory 1948"),
    result(
        "srvtoolu_01B3c9d8e7f6a5b4c3d2e1f0",
        [hit(WIKI, "a later copy, dropped", "2025-05-01"), hit(MIT, "MIT News", None)],
    ),
    {"type": "text", "text": "Based on the search results, "},
    {
        "type": "text",
        "text": BORN,
        "citations": [
            cite(WIKI, "Claude Shannon - Wikipedia", "Claude Elwood Shannon (April 30, 1916 –")
        ],
    },
    {"type": "text", "text": ", and "},
    {
        "type": "text",
        "text": WORK,
        "citations": [
            cite(MIT, "MIT News", "his 1948 paper founded the field"),
            cite(MIT, "MIT News", "his 1948 paper founded the field"),
        ],
    },
    {"type": "text", "text": "."},
)


def anthropic(
    replay: ReplayServer, client: httpx.AsyncClient, key: str | None = CANARY, **options: Any
) -> AnthropicSearchProvider:
    return AnthropicSearchProvider(api_key=key, base_url=replay.url + "/", client=client, **options)


async def test_request_shape(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=ANSWER))
    await anthropic(replay, client).search(SearchRequest("claude shannon", max_results=5))

    sent = replay.requests[0]
    assert (sent.method, sent.path) == ("POST", PATH)
    assert sent.headers["x-api-key"] == CANARY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["content-type"] == "application/json"
    assert "authorization" not in sent.headers
    body = sent.json()
    assert body["model"] == "claude-haiku-4-5"
    assert body["max_tokens"] == 4096
    assert "temperature" not in body
    assert "stream" not in body
    assert body["messages"] == [{"role": "user", "content": "claude shannon"}]
    assert "search the web" in body["system"].lower()
    assert body["tools"] == [{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}]


async def test_max_tokens_temperature_and_model_are_sent(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json=ANSWER))
    provider = anthropic(replay, client, model="claude-sonnet-4-5")
    await provider.search(SearchRequest("q", max_tokens=800, temperature=0.2))
    body = replay.requests[0].json()
    assert (body["model"], body["max_tokens"], body["temperature"]) == (
        "claude-sonnet-4-5",
        800,
        0.2,
    )


async def test_a_zero_temperature_is_sent(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=ANSWER))
    await anthropic(replay, client).search(SearchRequest("q", temperature=0))
    assert replay.requests[0].json()["temperature"] == 0


async def test_filters_go_into_the_tool(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=ANSWER))
    provider = anthropic(replay, client)
    await provider.search(
        SearchRequest("q", include_domains=("wikipedia.org", "mit.edu"), country="de")
    )
    await provider.search(SearchRequest("q", exclude_domains=("britannica.com",)))
    await provider.search(SearchRequest("q", recency="week", language="de"))

    allowed, blocked, neither = (request.json()["tools"][0] for request in replay.requests)
    assert allowed["allowed_domains"] == ["wikipedia.org", "mit.edu"]
    assert "blocked_domains" not in allowed
    assert allowed["user_location"] == {"type": "approximate", "country": "DE"}
    assert blocked["blocked_domains"] == ["britannica.com"]
    assert "allowed_domains" not in blocked and "user_location" not in blocked
    assert neither == {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
    assert provider.filters == frozenset({"include_domains", "exclude_domains", "country"})


async def test_excluded_domains_beside_an_allow_list_are_applied_to_the_answer(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """The tool takes one list: the allow list goes, the excluded sites are removed here."""
    replay.route("POST", PATH, Reply(json=ANSWER))
    request = SearchRequest(
        "q", include_domains=("wikipedia.org", "mit.edu"), exclude_domains=("news.mit.edu",)
    )
    found = await anthropic(replay, client).search(request)
    tool = replay.requests[0].json()["tools"][0]
    assert tool["allowed_domains"] == ["wikipedia.org", "mit.edu"]
    assert "blocked_domains" not in tool
    assert MIT not in [s.url for s in found.sources] + [c.url for c in found.citations]


async def test_the_answer_maps_to_sources_citations_and_queries(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json=ANSWER))
    found = await anthropic(replay, client).search(SearchRequest("claude shannon"))

    assert [s.url for s in found.sources] == [WIKI, BRITANNICA, MIT]
    wiki, britannica, mit = found.sources
    # Anthropic's results carry no snippet: the words the answer cites from one stand in.
    assert (wiki.title, wiki.published_at, wiki.snippet) == (
        "Claude Shannon - Wikipedia",
        "April 30, 2025",
        "Claude Elwood Shannon (April 30, 1916 –",
    )
    assert britannica.snippet is None
    assert britannica.published_at == "2 weeks ago"
    assert (mit.title, mit.published_at) == ("MIT News", None)
    assert found.content == f"Based on the search results, {BORN}, and {WORK}."
    assert found.citations == (
        SearchCitation(
            WIKI, "Claude Shannon - Wikipedia", "Claude Elwood Shannon (April 30, 1916 –"
        ),
        SearchCitation(MIT, "MIT News", "his 1948 paper founded the field"),
    )
    assert found.queries == (
        "claude shannon birth date",
        "claude shannon information theory 1948",
    )
    assert found.related == ()
    assert not found.truncated


async def test_an_answer_cut_at_max_tokens_is_truncated(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    reply = message(
        call("srvtoolu_1", "q"),
        result("srvtoolu_1", [hit(WIKI, "Wiki")]),
        {"type": "text", "text": "Claude Shannon was"},
        stop_reason="max_tokens",
    )
    replay.route("POST", PATH, Reply(json=reply))
    found = await anthropic(replay, client).search(SearchRequest("q", max_tokens=20))
    assert found.truncated
    assert found.content == "Claude Shannon was"


async def test_a_failed_search_beside_a_good_one_is_dropped(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    reply = message(
        call("srvtoolu_a", "q"),
        result("srvtoolu_a", [hit(WIKI, "Wiki")]),
        call("srvtoolu_b", "q more"),
        result(
            "srvtoolu_b",
            {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
        ),
        {"type": "text", "text": "Found it."},
    )
    replay.route("POST", PATH, Reply(json=reply))
    found = await anthropic(replay, client).search(SearchRequest("q"))
    assert [s.url for s in found.sources] == [WIKI]
    assert found.content == "Found it."
    assert found.queries == ("q", "q more")


@pytest.mark.parametrize("code", ["too_many_requests", "max_uses_exceeded", "unavailable"])
async def test_searches_that_all_failed_are_an_error(
    replay: ReplayServer, client: httpx.AsyncClient, code: str
) -> None:
    """An answer written when every search failed comes from memory, not from the web."""
    reply = message(
        call("srvtoolu_a", "q"),
        result("srvtoolu_a", {"type": "web_search_tool_result_error", "error_code": code}),
        {"type": "text", "text": "I could not search, but from memory: 1916."},
    )
    replay.route("POST", PATH, Reply(json=reply))
    with pytest.raises(WebError) as caught:
        await anthropic(replay, client).search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.provider == "anthropic"
    assert caught.value.message == f"anthropic: the web search failed ({code})"


async def test_an_answer_without_searching(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=message({"type": "text", "text": "Hello."})))
    found = await anthropic(replay, client).search(SearchRequest("hi"))
    assert (found.sources, found.content, found.citations, found.queries) == ((), "Hello.", (), ())


async def test_404_names_the_model_or_endpoint(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    not_found = {
        "type": "error",
        "error": {"type": "not_found_error", "message": "model: claude-nope"},
    }
    replay.route("POST", PATH, Reply(404, json=not_found))
    with pytest.raises(WebError) as caught:
        await anthropic(replay, client, model="claude-nope").search(SearchRequest("q"))
    assert (
        caught.value.message == "anthropic: web search returned 404 (model or endpoint not found)"
    )
    assert (caught.value.provider, caught.value.status) == ("anthropic", 404)


OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


@pytest.mark.parametrize(
    ("reply", "expected", "status"),
    [
        (Reply(401, json={"type": "error"}), "anthropic: authorization failed (HTTP 401)", 401),
        (Reply(403, json={"type": "error"}), "anthropic: authorization failed (HTTP 403)", 403),
        (
            Reply(429, json={"type": "error"}, headers={"retry-after": "30"}),
            "anthropic: rate limited (HTTP 429), retry after 30 s",
            429,
        ),
        (Reply(529, json=OVERLOADED), "anthropic: server error (HTTP 529)", 529),
        (Reply(body=b"<html>"), "anthropic: the response is not valid JSON (HTTP 200)", 200),
        (
            Reply(json={"id": "msg_1", "type": "message"}),
            "anthropic: unexpected response shape (no valid 'content')",
            None,
        ),
        (
            Reply(json={"type": "error", "error": {"type": "api_error", "message": CANARY}}),
            "anthropic: the model failed to answer (api_error: ***)",
            None,
        ),
    ],
)
async def test_failures_are_provider_errors_naming_anthropic(
    replay: ReplayServer,
    client: httpx.AsyncClient,
    reply: Reply,
    expected: str,
    status: int | None,
) -> None:
    replay.route("POST", PATH, reply)
    with pytest.raises(WebError) as caught:
        await anthropic(replay, client).search(SearchRequest("q"))
    error = caught.value
    assert error.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert error.provider == "anthropic"
    assert error.message.startswith(expected)
    assert error.status == status
    assert CANARY not in error.message + repr(error) + str(error)
    if status == 429:
        assert error.retry_after == 30


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert AnthropicSearchProvider(api_key=CANARY, client=client).available()
    assert not AnthropicSearchProvider(api_key=None, client=client).available()
    assert not AnthropicSearchProvider(api_key="", client=client).available()
    assert CANARY not in repr(AnthropicSearchProvider(api_key=CANARY, client=client))


def built(client: httpx.AsyncClient) -> AnthropicSearchProvider:
    """The provider as its spec builds it from the environment."""
    context = ProviderContext(
        client=client,
        model_client=client,
        search_timeout=5,
        proxy=None,
        fetch_timeout=5,
        fetch_max_bytes=1024,
        fetch_allow=None,
    )
    provider = PROVIDER.create(AnthropicSettings(), context)
    assert isinstance(provider, AnthropicSearchProvider)
    return provider


async def test_settings_the_search_key_wins_and_the_general_key_is_shared(
    replay: ReplayServer, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay.route("POST", PATH, Reply(json=ANSWER))
    assert not built(client).available()
    assert not built(client).shared_credential()

    monkeypatch.setenv("ANTHROPIC_BASE_URL", replay.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", GENERAL)
    general = built(client)
    assert general.available()
    assert isinstance(general, SharedCredential) and general.shared_credential()
    await general.search(SearchRequest("one"))

    monkeypatch.setenv("ANTHROPIC_SEARCH_API_KEY", CANARY)
    own = built(client)
    assert own.available() and not own.shared_credential()
    await own.search(SearchRequest("two"))

    assert [r.headers["x-api-key"] for r in replay.requests] == [GENERAL, CANARY]
    assert GENERAL not in repr(general) + repr(AnthropicSettings())
    assert CANARY not in repr(own)


async def test_through_the_runtime_with_the_search_base_url_and_model(
    replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay.route("POST", PATH, Reply(json=ANSWER))
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "anthropic")
    monkeypatch.setenv("ANTHROPIC_SEARCH_BASE_URL", replay.url + "/")
    async with build_runtime() as runtime:
        with pytest.raises(WebError) as caught:
            await runtime.search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_CONFIGURED_UNAVAILABLE

    monkeypatch.setenv("ANTHROPIC_SEARCH_API_KEY", CANARY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ANTHROPIC_SEARCH_MODEL", "claude-sonnet-4-5")
    async with build_runtime() as runtime:
        result = await runtime.search(SearchRequest("claude shannon"))
    assert result.provider == "anthropic"
    assert result.citations and result.queries
    sent = replay.requests[0]
    assert (sent.path, sent.json()["model"]) == (PATH, "claude-sonnet-4-5")


def test_settings_defaults() -> None:
    settings = AnthropicSettings()
    assert settings.anthropic_search_model == "claude-haiku-4-5"
    assert settings.anthropic_search_api_key is None and settings.anthropic_api_key is None
    assert settings.anthropic_search_base_url is None and settings.anthropic_base_url is None
    assert AnthropicSearchProvider.default_base_url == "https://api.anthropic.com"


FIRST_HALF = message(
    {"type": "text", "text": "I'll search for when Claude Shannon was born."},
    call("srvtoolu_01WYG3ziw53XMcoyKL4XcZmE", "claude shannon birth date"),
    result("srvtoolu_01WYG3ziw53XMcoyKL4XcZmE", [hit(WIKI, "Claude Shannon - Wikipedia")]),
    stop_reason="pause_turn",
)
SECOND_HALF = message(
    call("srvtoolu_01B3c9d8e7f6a5b4c3d2e1f0", "claude shannon information theory 1948"),
    result("srvtoolu_01B3c9d8e7f6a5b4c3d2e1f0", [hit(MIT, "MIT News")]),
    {"type": "text", "text": WORK, "citations": [cite(MIT, "MIT News", "his 1948 paper")]},
)


def in_turns(*answers: Reply) -> Any:
    """Each request gets the next answer; the last one repeats."""
    served = iter(answers)
    last: list[Reply] = []

    def respond(_: Any) -> Reply:
        last[:] = [next(served, last[0] if last else answers[-1])]
        return last[0]

    return respond


async def test_a_paused_turn_is_continued_with_what_it_said(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, in_turns(Reply(json=FIRST_HALF), Reply(json=SECOND_HALF)))
    found = await anthropic(replay, client).search(SearchRequest("claude shannon"))
    first, second = (request.json() for request in replay.requests)
    assert second["messages"] == [
        first["messages"][0],
        {"role": "assistant", "content": FIRST_HALF["content"]},
    ]
    assert second["tools"] == first["tools"] and second["model"] == first["model"]
    assert [s.url for s in found.sources] == [WIKI, MIT]
    assert [c.url for c in found.citations] == [MIT]
    assert found.queries == (
        "claude shannon birth date",
        "claude shannon information theory 1948",
    )
    assert not found.truncated


async def test_a_turn_that_stays_paused_is_cut_after_three_continuations(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json=FIRST_HALF))
    found = await anthropic(replay, client).search(SearchRequest("claude shannon"))
    assert len(replay.requests) == 4
    assert len(replay.requests[-1].json()["messages"][1]["content"]) == 3 * 3
    assert found.truncated
    assert [s.url for s in found.sources] == [WIKI]


async def test_a_failed_continuation_leaves_what_the_paused_turn_found(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    failed = Reply(status=500, json={"type": "error", "error": {"type": "api_error"}})
    replay.route("POST", PATH, in_turns(Reply(json=FIRST_HALF), failed))
    found = await anthropic(replay, client).search(SearchRequest("claude shannon"))
    assert len(replay.requests) == 2
    assert found.truncated and [s.url for s in found.sources] == [WIKI]


async def test_cited_text_entities_are_decoded_and_cited_words_become_snippets(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """Anthropic's ``cited_text`` keeps the page's HTML entities; the words are decoded once
    and each cited source's snippet joins what was cited from it, in the answer's order."""
    page = "https://weather.example/today"
    answer = message(
        result("srvtoolu_01", [hit(page, "Today&#x27;s forecast &amp; more", "June 30, 2025")]),
        {
            "type": "text",
            "text": "Sunny",
            "citations": [
                cite(page, "Today&#x27;s forecast", "Today&#x27;s high is 25&nbsp;&deg;C."),
                cite(page, "Today&#x27;s forecast", "Winds &lt;10 km/h &amp; calm."),
            ],
        },
        {"type": "text", "text": ", and calm."},
    )
    replay.route("POST", PATH, Reply(json=answer))
    found = await anthropic(replay, client).search(SearchRequest("weather"))

    (source,) = found.sources
    assert source.title == "Today's forecast & more"
    assert source.snippet == "Today's high is 25 °C. … Winds <10 km/h & calm."
    assert [c.cited_text for c in found.citations] == [
        "Today's high is 25 °C.",
        "Winds <10 km/h & calm.",
    ]
    assert found.citations[0].title == "Today's forecast"
