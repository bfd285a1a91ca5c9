"""OpenAI against a local server replaying Responses answers with ``web_search``, shaped like the
web search guide and the Responses API reference (``web_search_call`` items whose ``action``
lists its queries and, with ``include``, its sources; a message whose ``output_text`` carries
``url_citation`` annotations)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from replay_server import Recorded, ReplayServer, Reply
from webreach.config import build_runtime
from webreach.providers.search.openai import PROVIDER, OpenAISearchProvider, OpenAISettings
from webreach.providers.spec import ProviderContext
from webreach.seam import SearchCitation, SearchRequest, SharedCredential, WebError, WebErrorCode

CANARY = "sk-proj-canary-51c0ad"
GENERAL = "sk-general-canary-7f3e"
PATH = "/responses"
AP = "https://apnews.com/article/nasa-artemis-moon-launch"
REUTERS = "https://www.reuters.com/science/nasa-artemis-ii-2026-04-01/"
NASA = "https://www.nasa.gov/mission/artemis-ii/"
PLANETARY = "https://www.planetary.org/space-missions/artemis"

SENTENCE = "NASA launched Artemis II on April 1, 2026, sending four astronauts around the Moon."
LINK_AP = " ([apnews.com](" + AP + "?utm_source=openai))"
SECOND = " It was the first crewed lunar flight since 1972."
LINK_REUTERS = " ([reuters.com](" + REUTERS + "?utm_source=openai))"
TEXT = SENTENCE + LINK_AP + SECOND + LINK_REUTERS


def annotation(url: str, title: str, start: int, end: int) -> dict[str, Any]:
    return {
        "type": "url_citation",
        "start_index": start,
        "end_index": end,
        "url": url,
        "title": title,
    }


def response(*output: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": "resp_68c1a9e2f0b48190a3c2e4d5b6a7c8d9",
        "object": "response",
        "created_at": 1764600000,
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "model": "gpt-5.4-mini-2026-03-17",
        "output": list(output),
        "tools": [{"type": "web_search", "search_context_size": "high"}],
        "usage": {
            "input_tokens": 8121,
            "output_tokens": 212,
            "total_tokens": 8333,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 64},
        },
        **extra,
    }


def search_call(call_id: str, *queries: str, sources: list[str] | None = None) -> dict[str, Any]:
    action: dict[str, Any] = {"type": "search", "query": queries[0], "queries": list(queries)}
    if sources is not None:
        action["sources"] = [{"type": "url", "url": url} for url in sources]
    return {"type": "web_search_call", "id": call_id, "status": "completed", "action": action}


def answer(text: str, *annotations: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_68c1a9f4c2e08190b1d2e3f4a5b6c7d8",
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [
            {"type": "output_text", "text": text, "annotations": list(annotations), "logprobs": []}
        ],
    }


AP_START = TEXT.index(LINK_AP) + 1
SECOND_START = TEXT.index(SECOND) + 1
ANSWER = response(
    {"id": "rs_68c1a9e3", "type": "reasoning", "summary": []},
    search_call(
        "ws_68c1a9e4",
        "Artemis II launch date",
        "Artemis II crew moon flyby",
        sources=[NASA, AP + "?utm_source=openai", PLANETARY],
    ),
    {
        "type": "web_search_call",
        "id": "ws_68c1a9e5",
        "status": "completed",
        "action": {"type": "open_page", "url": REUTERS},
    },
    search_call(
        "ws_68c1a9e6", "Artemis II first crewed lunar flight since 1972", sources=[REUTERS]
    ),
    answer(
        TEXT,
        annotation(
            AP + "?utm_source=openai",
            "NASA's Artemis II launches | AP News",
            AP_START,
            AP_START + len(LINK_AP) - 1,
        ),
        annotation(REUTERS + "?utm_source=openai", "Artemis II | Reuters", SECOND_START, len(TEXT)),
    ),
)


def openai(
    replay: ReplayServer, client: httpx.AsyncClient, key: str | None = CANARY, **options: Any
) -> OpenAISearchProvider:
    return OpenAISearchProvider(api_key=key, base_url=replay.url + "/", client=client, **options)


async def test_request_shape(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=ANSWER))
    await openai(replay, client).search(SearchRequest("artemis ii", max_results=5))

    sent = replay.requests[0]
    assert (sent.method, sent.path) == ("POST", PATH)
    assert sent.headers["authorization"] == f"Bearer {CANARY}"
    assert sent.headers["content-type"] == "application/json"
    body = sent.json()
    assert body["model"] == "gpt-5.4-mini"
    assert body["input"] == "artemis ii"
    assert "search the web" in body["instructions"].lower()
    assert body["tools"] == [{"type": "web_search", "search_context_size": "high"}]
    assert body["tool_choice"] == "required"
    assert body["include"] == ["web_search_call.action.sources"]
    assert body["store"] is False
    assert "stream" not in body
    assert "max_output_tokens" not in body and "temperature" not in body


async def test_filters_max_tokens_and_temperature(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json=ANSWER))
    request = SearchRequest(
        "q",
        include_domains=("nasa.gov", "apnews.com"),
        exclude_domains=("reuters.com",),
        country="us",
        recency="week",
        language="en",
        max_tokens=1500,
        temperature=0.3,
    )
    provider = openai(replay, client, model="gpt-4.1-mini")
    await provider.search(request)
    body = replay.requests[0].json()
    assert body["model"] == "gpt-4.1-mini"
    assert body["tools"] == [
        {
            "type": "web_search",
            "search_context_size": "high",
            "filters": {"allowed_domains": ["nasa.gov", "apnews.com"]},
            "user_location": {"type": "approximate", "country": "US"},
        }
    ]
    assert (body["max_output_tokens"], body["temperature"]) == (1500, 0.3)
    assert provider.filters == frozenset({"include_domains", "country"})


async def test_sources_and_citations_are_kept_within_the_allowed_domains(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json=ANSWER))
    found = await openai(replay, client).search(SearchRequest("q", include_domains=("nasa.gov",)))
    assert [s.url for s in found.sources] == [NASA]


async def test_a_refused_temperature_is_dropped(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """The reasoning models take only their default temperature: asked again without it."""
    refused = {
        "error": {
            "message": "Unsupported parameter: 'temperature' is not supported with this model.",
            "type": "invalid_request_error",
            "param": "temperature",
            "code": "unsupported_parameter",
        }
    }

    def reply(request: Recorded) -> Reply:
        return Reply(400, json=refused) if "temperature" in request.json() else Reply(json=ANSWER)

    replay.route("POST", PATH, reply)
    found = await openai(replay, client).search(SearchRequest("q", temperature=0.2))
    assert found.content == TEXT
    first, second = (request.json() for request in replay.requests)
    assert first["temperature"] == 0.2
    assert "temperature" not in second
    assert {k: v for k, v in first.items() if k != "temperature"} == second


async def test_a_400_without_a_temperature_is_not_retried(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(400, json={"error": {"message": "bad"}}))
    with pytest.raises(WebError) as caught:
        await openai(replay, client).search(SearchRequest("q"))
    assert caught.value.message.startswith("openai: request rejected (HTTP 400)")
    assert len(replay.requests) == 1


async def test_the_answer_maps_to_sources_citations_and_queries(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json=ANSWER))
    found = await openai(replay, client).search(SearchRequest("artemis ii"))

    assert found.content == TEXT
    # The cited pages in the answer's order, then the other pages the searches consulted;
    # OpenAI's utm_source=openai is dropped, so the cited and the searched AP page are one.
    assert [s.url for s in found.sources] == [AP, REUTERS, NASA, PLANETARY]
    ap, reuters, nasa, planetary = found.sources
    assert ap.title == "NASA's Artemis II launches | AP News"
    assert reuters.title == "Artemis II | Reuters"
    assert (nasa.title, nasa.snippet, nasa.published_at) == (None, None, None)
    assert planetary.title is None
    assert found.citations == (
        # A span that is only the link cites no words; one over the sentence cites it.
        SearchCitation(AP, "NASA's Artemis II launches | AP News", None),
        SearchCitation(REUTERS, "Artemis II | Reuters", SECOND.strip() + LINK_REUTERS),
    )
    assert found.queries == (
        "Artemis II launch date",
        "Artemis II crew moon flyby",
        "Artemis II first crewed lunar flight since 1972",
    )
    assert found.related == ()
    assert not found.truncated


async def test_a_citation_with_bad_indices_has_no_cited_text(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    reply = response(answer("Short.", annotation(NASA, "NASA", 3, 400)))
    replay.route("POST", PATH, Reply(json=reply))
    found = await openai(replay, client).search(SearchRequest("q"))
    assert found.citations == (SearchCitation(NASA, "NASA", None),)


async def test_without_annotations_the_answers_links_are_the_sources(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    text = (
        "See [NASA's Artemis II page](https://www.nasa.gov/mission/artemis-ii/) and "
        "[Wikipedia](https://en.wikipedia.org/wiki/Artemis_II_(mission)). "
        "AP reported it: https://apnews.com/article/nasa-artemis-moon-launch. "
        "Again: https://www.nasa.gov/mission/artemis-ii/, and (https://example.org/a?b=c)."
    )
    replay.route("POST", PATH, Reply(json=response(search_call("ws_1", "artemis"), answer(text))))
    found = await openai(replay, client).search(SearchRequest("q"))
    assert [(s.url, s.title) for s in found.sources] == [
        (NASA, "NASA's Artemis II page"),
        ("https://en.wikipedia.org/wiki/Artemis_II_(mission)", "Wikipedia"),
        (AP, None),
        ("https://example.org/a?b=c", None),
    ]
    assert found.citations == ()
    assert found.queries == ("artemis",)


async def test_an_older_action_with_only_query(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    call = {
        "type": "web_search_call",
        "id": "ws_1",
        "status": "completed",
        "action": {"type": "search", "query": "artemis ii"},
    }
    replay.route("POST", PATH, Reply(json=response(call, answer("Nothing cited."))))
    found = await openai(replay, client).search(SearchRequest("q"))
    assert found.queries == ("artemis ii",)
    assert (found.sources, found.content) == ((), "Nothing cited.")


async def test_an_answer_cut_at_max_output_tokens_is_truncated(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    reply = response(
        search_call("ws_1", "q", sources=[NASA]),
        answer("NASA launched"),
        status="incomplete",
        incomplete_details={"reason": "max_output_tokens"},
    )
    replay.route("POST", PATH, Reply(json=reply))
    found = await openai(replay, client).search(SearchRequest("q", max_tokens=16))
    assert found.truncated
    assert found.content == "NASA launched"
    assert [s.url for s in found.sources] == [NASA]


async def test_no_message_is_an_empty_result(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json=response(search_call("ws_1", "q"))))
    found = await openai(replay, client).search(SearchRequest("q"))
    assert (found.sources, found.content, found.citations) == ((), None, ())
    assert not found.has_content()


async def test_404_names_the_model_or_endpoint(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    missing = {
        "error": {
            "message": "The model `gpt-nope` does not exist or you do not have access to it.",
            "type": "invalid_request_error",
            "param": None,
            "code": "model_not_found",
        }
    }
    replay.route("POST", PATH, Reply(404, json=missing))
    with pytest.raises(WebError) as caught:
        await openai(replay, client, model="gpt-nope").search(SearchRequest("q"))
    assert caught.value.message == "openai: web search returned 404 (model or endpoint not found)"
    assert caught.value.status == 404


FAILED = response(
    status="failed", error={"code": "server_error", "message": "The model failed " + CANARY}
)


@pytest.mark.parametrize(
    ("reply", "expected", "status"),
    [
        (Reply(401, json={"error": {}}), "openai: authorization failed (HTTP 401)", 401),
        (Reply(403, json={"error": {}}), "openai: authorization failed (HTTP 403)", 403),
        (
            Reply(429, json={"error": {}}, headers={"retry-after": "12"}),
            "openai: rate limited (HTTP 429), retry after 12 s",
            429,
        ),
        (Reply(500, json={"error": {}}), "openai: server error (HTTP 500)", 500),
        (Reply(body=b"not json"), "openai: the response is not valid JSON (HTTP 200)", 200),
        (
            Reply(json={"id": "resp_1", "object": "response"}),
            "openai: unexpected response shape (no valid 'output')",
            None,
        ),
        (Reply(json=FAILED), "openai: the model failed to answer (server_error: The model", None),
    ],
)
async def test_failures_are_provider_errors_naming_openai(
    replay: ReplayServer,
    client: httpx.AsyncClient,
    reply: Reply,
    expected: str,
    status: int | None,
) -> None:
    replay.route("POST", PATH, reply)
    with pytest.raises(WebError) as caught:
        await openai(replay, client).search(SearchRequest("q"))
    error = caught.value
    assert error.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert error.provider == "openai"
    assert error.message.startswith(expected)
    assert error.status == status
    assert CANARY not in error.message + repr(error) + str(error)
    if status == 429:
        assert error.retry_after == 12


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert OpenAISearchProvider(api_key=CANARY, client=client).available()
    assert not OpenAISearchProvider(api_key=None, client=client).available()
    assert not OpenAISearchProvider(api_key="", client=client).available()
    assert CANARY not in repr(OpenAISearchProvider(api_key=CANARY, client=client))


def built(client: httpx.AsyncClient) -> OpenAISearchProvider:
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
    provider = PROVIDER.create(OpenAISettings(), context)
    assert isinstance(provider, OpenAISearchProvider)
    return provider


async def test_settings_the_search_key_wins_and_the_general_key_is_shared(
    replay: ReplayServer, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay.route("POST", PATH, Reply(json=ANSWER))
    assert not built(client).available()
    assert not built(client).shared_credential()

    monkeypatch.setenv("OPENAI_BASE_URL", replay.url)
    monkeypatch.setenv("OPENAI_API_KEY", GENERAL)
    general = built(client)
    assert general.available()
    assert isinstance(general, SharedCredential) and general.shared_credential()
    await general.search(SearchRequest("one"))

    monkeypatch.setenv("OPENAI_SEARCH_API_KEY", CANARY)
    own = built(client)
    assert own.available() and not own.shared_credential()
    await own.search(SearchRequest("two"))

    assert [r.headers["authorization"] for r in replay.requests] == [
        f"Bearer {GENERAL}",
        f"Bearer {CANARY}",
    ]
    assert GENERAL not in repr(general) + repr(OpenAISettings())


async def test_through_the_runtime_with_the_search_base_url_and_model(
    replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay.route("POST", "/v1/responses", Reply(json=ANSWER))
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "openai")
    monkeypatch.setenv("OPENAI_SEARCH_BASE_URL", replay.url + "/v1")
    async with build_runtime() as runtime:
        with pytest.raises(WebError) as caught:
            await runtime.search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_CONFIGURED_UNAVAILABLE

    monkeypatch.setenv("OPENAI_SEARCH_API_KEY", CANARY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_SEARCH_MODEL", "gpt-5.4")
    async with build_runtime() as runtime:
        result = await runtime.search(SearchRequest("artemis ii"))
    assert result.provider == "openai"
    assert result.citations and result.queries
    sent = replay.requests[0]
    assert (sent.path, sent.json()["model"]) == ("/v1/responses", "gpt-5.4")


def test_settings_defaults() -> None:
    settings = OpenAISettings()
    assert settings.openai_search_model == "gpt-5.4-mini"
    assert settings.openai_search_api_key is None and settings.openai_api_key is None
    assert settings.openai_search_base_url is None and settings.openai_base_url is None
    assert OpenAISearchProvider.default_base_url == "https://api.openai.com/v1"
