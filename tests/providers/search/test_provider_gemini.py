"""Gemini against a local server replaying ``generateContent`` answers grounded with Google Search,
shaped like the Gemini API's grounding documentation (``groundingMetadata`` with chunks whose
URIs are ``vertexaisearch`` redirects and whose titles are sites)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from replay_server import ReplayServer, Reply
from webreach.config import build_runtime
from webreach.net import create_client
from webreach.providers.search.gemini import PROVIDER, GeminiSearchProvider, GeminiSettings
from webreach.providers.spec import ProviderContext
from webreach.seam import SearchCitation, SearchRequest, SharedCredential, WebError, WebErrorCode

CANARY = "AIza-gemini-canary-61d0"
MODEL = "gemini-2.5-flash"
PATH = f"/v1beta/models/{MODEL}:generateContent"
REDIRECT = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
ALJAZEERA = REDIRECT + "AUZIYQHx1aljazeera"
UEFA = REDIRECT + "AUZIYQGq2uefa"
BBC = REDIRECT + "AUZIYQEr3bbc"
FIRST = "Spain won Euro 2024, defeating England 2-1 in the final."
SECOND = "This victory marks Spain's record fourth European Championship title."
ANSWER = FIRST + " " + SECOND


def chunk(uri: str, title: str) -> dict[str, Any]:
    return {"web": {"uri": uri, "title": title}}


def support(start: int, text: str, *indices: int) -> dict[str, Any]:
    return {
        "segment": {"startIndex": start, "endIndex": start + len(text), "text": text},
        "groundingChunkIndices": list(indices),
    }


def answer(
    *parts: dict[str, Any], metadata: dict[str, Any] | None = None, finish: str = "STOP"
) -> dict[str, Any]:
    candidate: dict[str, Any] = {
        "content": {"parts": list(parts), "role": "model"},
        "finishReason": finish,
        "index": 0,
    }
    if metadata is not None:
        candidate["groundingMetadata"] = metadata
    return {
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": 12,
            "candidatesTokenCount": 41,
            "totalTokenCount": 53,
            "toolUsePromptTokenCount": 310,
        },
        "modelVersion": MODEL,
        "responseId": "mVEqaNmXLZqPxN8P0ceBuAQ",
    }


GROUNDED = answer(
    {"text": FIRST + " "},
    {"text": SECOND},
    metadata={
        "webSearchQueries": ["UEFA Euro 2024 winner", "who won euro 2024"],
        "searchEntryPoint": {"renderedContent": "<style>.container{}</style><div>...</div>"},
        "groundingChunks": [
            chunk(ALJAZEERA, "aljazeera.com"),
            chunk(UEFA, "uefa.com"),
            chunk(ALJAZEERA, "aljazeera.com"),
            {"retrievedContext": {"uri": "gs://not-a-web-chunk", "title": "x"}},
            chunk(BBC, "bbc.co.uk"),
        ],
        "groundingSupports": [
            support(0, FIRST, 0, 1),
            support(len(FIRST) + 1, SECOND, 1, 4, 3, 17),
        ],
    },
)


def gemini(
    replay: ReplayServer, client: httpx.AsyncClient, key: str | None = CANARY, **options: Any
) -> GeminiSearchProvider:
    return GeminiSearchProvider(api_key=key, base_url=replay.url + "/", client=client, **options)


async def test_request_shape(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=GROUNDED))
    await gemini(replay, client).search(SearchRequest("who won euro 2024", max_results=5))

    sent = replay.requests[0]
    assert (sent.method, sent.path) == ("POST", PATH)
    assert sent.headers["x-goog-api-key"] == CANARY
    assert "authorization" not in sent.headers
    assert CANARY not in sent.raw_query
    body = sent.json()
    assert body["contents"] == [{"role": "user", "parts": [{"text": "who won euro 2024"}]}]
    assert body["tools"] == [{"google_search": {}}]
    instruction = body["systemInstruction"]["parts"][0]["text"]
    assert "search" in instruction.lower() and "sources" in instruction.lower()
    assert "generationConfig" not in body


async def test_max_tokens_and_temperature_pass_through(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json=GROUNDED))
    await gemini(replay, client).search(SearchRequest("q", max_tokens=512, temperature=0.0))
    assert replay.requests[0].json()["generationConfig"] == {
        "maxOutputTokens": 512,
        "temperature": 0.0,
    }


async def test_recency_is_the_tools_time_range(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json=GROUNDED))
    before = datetime.now(UTC).replace(microsecond=0)
    await gemini(replay, client).search(SearchRequest("q", recency="week"))
    after = datetime.now(UTC)

    window = replay.requests[0].json()["tools"][0]["google_search"]["timeRangeFilter"]
    start = datetime.fromisoformat(window["startTime"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(window["endTime"].replace("Z", "+00:00"))
    assert window["startTime"].endswith("Z") and window["endTime"].endswith("Z")
    assert before - timedelta(days=7, seconds=1) <= start <= after - timedelta(days=7)
    assert before <= end <= after


async def test_the_model_and_its_path_are_configurable(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route(
        "POST", "/v1beta/models/gemini-3-flash-preview:generateContent", Reply(json=GROUNDED)
    )
    provider = gemini(replay, client, model="models/gemini-3-flash-preview")
    await provider.search(SearchRequest("q"))
    assert replay.requests[0].path == "/v1beta/models/gemini-3-flash-preview:generateContent"
    assert "gemini-3-flash-preview" in repr(provider)


async def test_answer_sources_citations_and_queries(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json=GROUNDED))
    found = await gemini(replay, client).search(SearchRequest("who won euro 2024"))

    assert found.content == ANSWER
    # The redirect links and site titles are kept as the API gives them, each URL once.
    assert [(s.url, s.title) for s in found.sources] == [
        (ALJAZEERA, "aljazeera.com"),
        (UEFA, "uefa.com"),
        (BBC, "bbc.co.uk"),
    ]
    assert all(s.snippet is None and s.published_at is None for s in found.sources)
    assert found.citations == (
        SearchCitation(ALJAZEERA, "aljazeera.com", FIRST),
        SearchCitation(UEFA, "uefa.com", FIRST),
        SearchCitation(UEFA, "uefa.com", SECOND),
        SearchCitation(BBC, "bbc.co.uk", SECOND),
    )
    assert found.queries == ("UEFA Euro 2024 winner", "who won euro 2024")
    assert found.related == ()


async def test_an_answer_without_searching_has_no_grounding(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json=answer({"text": "Paris."})))
    found = await gemini(replay, client).search(SearchRequest("capital of france"))
    assert (found.sources, found.citations, found.queries) == ((), (), ())
    assert found.content == "Paris."


async def test_thought_parts_are_not_the_answer(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    reply = answer({"text": "Let me think.", "thought": True}, {"text": "Paris."})
    replay.route("POST", PATH, Reply(json=reply))
    found = await gemini(replay, client).search(SearchRequest("q"))
    assert found.content == "Paris."


async def test_domains_are_asked_and_applied_to_the_sites(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """The URLs are redirects, so the seam could not match them: the provider matches the site."""
    assert {"include_domains", "exclude_domains"} <= GeminiSearchProvider.filters
    replay.route("POST", PATH, Reply(json=GROUNDED))
    request = SearchRequest(
        "q", include_domains=("uefa.com", "co.uk"), exclude_domains=("bbc.co.uk",)
    )
    found = await gemini(replay, client).search(request)

    instruction = replay.requests[0].json()["systemInstruction"]["parts"][0]["text"]
    assert "uefa.com, co.uk" in instruction and "bbc.co.uk" in instruction
    assert [s.url for s in found.sources] == [UEFA]
    assert {c.url for c in found.citations} == {UEFA}
    assert found.content == ANSWER


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            {"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": []}},
            "gemini: the query was blocked (SAFETY)",
        ),
        (
            {"candidates": [], "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}},
            "gemini: the query was blocked (PROHIBITED_CONTENT)",
        ),
        (answer(finish="SAFETY"), "gemini: the answer was blocked (SAFETY)"),
        (
            answer({"text": "partial"}, finish="RECITATION"),
            "gemini: the answer was blocked (RECITATION)",
        ),
        ({"candidates": [], "usageMetadata": {}}, "gemini: the model returned no answer"),
        ({"usageMetadata": {}}, "gemini: unexpected response shape (no valid 'candidates')"),
        ({"candidates": "x"}, "gemini: unexpected response shape (no valid 'candidates')"),
        ([1, 2], "gemini: unexpected response shape (no valid 'candidates')"),
    ],
)
async def test_blocked_and_malformed_answers_are_provider_errors(
    replay: ReplayServer, client: httpx.AsyncClient, reply: Any, expected: str
) -> None:
    replay.route("POST", PATH, Reply(json=reply))
    with pytest.raises(WebError) as caught:
        await gemini(replay, client).search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.provider == "gemini"
    assert caught.value.message == expected


async def test_a_truncated_answer_is_kept(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=answer({"text": "Spain won"}, finish="MAX_TOKENS")))
    found = await gemini(replay, client).search(SearchRequest("q", max_tokens=3))
    assert found.content == "Spain won"


KEY_INVALID = {
    "error": {
        "code": 400,
        "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
            }
        ],
    }
}


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            Reply(400, json=KEY_INVALID),
            "gemini: authorization failed (HTTP 400); check the API key",
        ),
        (Reply(403, json={"error": {"code": 403}}), "gemini: authorization failed (HTTP 403)"),
        (
            Reply(429, json={"error": {"code": 429}}, headers={"retry-after": "7"}),
            "gemini: rate limited (HTTP 429), retry after 7 s",
        ),
        (Reply(503, json={"error": {"code": 503}}), "gemini: server error (HTTP 503)"),
        (Reply(400, json={"error": {"code": 400}}), "gemini: request rejected (HTTP 400)"),
        (Reply(body=b"<html>oops"), "gemini: the response is not valid JSON (HTTP 200)"),
    ],
)
async def test_http_failures_are_provider_errors_naming_gemini(
    replay: ReplayServer, client: httpx.AsyncClient, reply: Reply, expected: str
) -> None:
    replay.route("POST", PATH, reply)
    with pytest.raises(WebError) as caught:
        await gemini(replay, client).search(SearchRequest("q"))
    error = caught.value
    assert error.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert error.provider == "gemini"
    assert error.message.startswith(expected)
    assert CANARY not in error.message + repr(error) + str(error)


async def test_the_key_never_appears_in_errors_or_repr(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    provider = gemini(replay, client, key=CANARY)
    assert CANARY not in repr(provider)
    with pytest.raises(WebError) as caught:
        await GeminiSearchProvider(
            api_key=CANARY, base_url="http://127.0.0.1:1", client=client
        ).search(SearchRequest("q"))
    assert CANARY not in caught.value.message + repr(caught.value)


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert GeminiSearchProvider(api_key=CANARY, client=client).available()
    assert not GeminiSearchProvider(api_key=None, client=client).available()
    assert not GeminiSearchProvider(api_key="", client=client).available()


def test_the_settings_and_their_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = GeminiSettings()
    assert settings.gemini_search_model == MODEL
    assert settings.gemini_base_url is None
    monkeypatch.setenv("GEMINI_API_KEY", "from-gemini")
    monkeypatch.setenv("GEMINI_SEARCH_MODEL", "gemini-2.5-pro")
    monkeypatch.setenv("GEMINI_BASE_URL", "http://127.0.0.1:9")
    settings = GeminiSettings()
    assert settings.gemini_api_key is not None
    assert settings.gemini_search_model == "gemini-2.5-pro"
    assert settings.gemini_base_url == "http://127.0.0.1:9"
    assert "from-gemini" not in repr(settings) + str(settings.model_dump())


async def _key_sent(replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> tuple[str, bool]:
    """The key the runtime built from the environment sends, and whether it counts as shared."""
    replay.route("POST", PATH, Reply(json=GROUNDED))
    monkeypatch.setenv("GEMINI_BASE_URL", replay.url)
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "gemini")
    async with build_runtime() as runtime:
        result = await runtime.search(SearchRequest("who won euro 2024"))
    assert result.provider == "gemini"
    assert result.content == ANSWER
    async with create_client(timeout=5) as client:
        context = ProviderContext(
            client=client,
            model_client=client,
            search_timeout=5,
            proxy=None,
            fetch_timeout=5,
            fetch_max_bytes=1024,
            fetch_allow=None,
        )
        provider = PROVIDER.create(GeminiSettings(), context)
    assert isinstance(provider, SharedCredential)
    return replay.requests[-1].headers["x-goog-api-key"], provider.shared_credential()


@pytest.mark.parametrize(
    ("variables", "sent", "shared"),
    [
        ({"GEMINI_API_KEY": "gem"}, "gem", True),
        ({"GOOGLE_API_KEY": "goo"}, "goo", True),
        ({"GEMINI_API_KEY": "gem", "GOOGLE_API_KEY": "goo"}, "goo", True),
        (
            {"GEMINI_SEARCH_API_KEY": "own", "GOOGLE_API_KEY": "goo", "GEMINI_API_KEY": "g"},
            "own",
            False,
        ),
    ],
)
async def test_the_spec_builds_from_the_environment(
    replay: ReplayServer,
    monkeypatch: pytest.MonkeyPatch,
    variables: dict[str, str],
    sent: str,
    shared: bool,
) -> None:
    """``GEMINI_SEARCH_API_KEY`` wins; else ``GOOGLE_API_KEY`` over ``GEMINI_API_KEY``, as the
    official SDKs read them, and such a borrowed key is a shared credential."""
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert await _key_sent(replay, monkeypatch) == (sent, shared)


async def test_the_runtime_waits_for_the_model(replay: ReplayServer) -> None:
    async with create_client(timeout=5) as client:
        provider = gemini(replay, client)
        assert provider.call_timeout() == client.timeout.read


async def test_a_chunk_whose_site_is_unknown_is_on_no_site(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """The site is the ``domain`` when given (Vertex AI), else a title that is a host name,
    else the URL's host unless that is the redirect."""
    direct = "https://docs.python.org/3/whatsnew/3.13.html"
    reply = answer(
        {"text": "Spain."},
        metadata={
            "groundingChunks": [
                chunk(ALJAZEERA, "Euro 2024 final report"),
                chunk(direct, "What's New In Python 3.13"),
                {"web": {"uri": UEFA, "title": "Final", "domain": "uefa.com"}},
            ]
        },
    )
    replay.route("POST", PATH, Reply(json=reply))
    provider = gemini(replay, client)
    kept = await provider.search(SearchRequest("q", include_domains=("python.org", "uefa.com")))
    assert [s.url for s in kept.sources] == [direct, UEFA]
    excluded = await provider.search(SearchRequest("q", exclude_domains=("aljazeera.com",)))
    assert [s.url for s in excluded.sources] == [ALJAZEERA, direct, UEFA]
