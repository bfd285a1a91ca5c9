"""Google Lens through SerpApi against a local server replaying responses shaped like SerpApi's
documented Google Lens API."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable

import pytest

from image_search_replies import (
    IMAGE_URL,
    LENS_BAD_KEY,
    LENS_FAILED,
    LENS_NO_RESULTS,
    LENS_OUT_OF_SEARCHES,
    LENS_RESPONSE,
)
from replay_server import ReplayServer, Reply
from webreach.providers.image_search.google_lens import GoogleLensImageSearchProvider
from webreach.seam import ImageBytes, ImageSearchRequest, ImageUrl, WebError, WebErrorCode

CANARY = "serpapi-canary-key-3f9a0c"
REQUEST = ImageSearchRequest(ImageUrl(IMAGE_URL))

Make = Callable[..., GoogleLensImageSearchProvider]


@pytest.fixture
async def lens(replay: ReplayServer) -> AsyncIterator[Make]:
    made: list[GoogleLensImageSearchProvider] = []

    def make(
        key: str | None = CANARY, base_url: str | None = None
    ) -> GoogleLensImageSearchProvider:
        provider = GoogleLensImageSearchProvider(
            api_key=key, base_url=base_url or replay.url + "/", timeout=5
        )
        made.append(provider)
        return provider

    yield make
    for provider in made:
        await provider.aclose()


async def test_request_shape_and_mapping(replay: ReplayServer, lens: Make) -> None:
    replay.route("GET", "/search.json", Reply(json=LENS_RESPONSE))
    result = await lens().image_search(REQUEST)

    sent = replay.requests[0]
    assert sent.query["engine"] == ["google_lens"]
    assert sent.query["url"] == [IMAGE_URL]
    assert sent.query["api_key"] == [CANARY]  # SerpApi takes its key there only
    assert sent.headers["user-agent"].startswith("webreach/")
    assert sent.headers["accept"] == "application/json"

    wikipedia, official, britannica = result.matches  # duplicates and link-less items dropped
    assert wikipedia.url == "https://en.wikipedia.org/wiki/Eiffel_Tower"
    assert wikipedia.title == "Eiffel Tower - Wikipedia"
    assert (
        wikipedia.image_url == "https://upload.wikimedia.org/wikipedia/commons/8/85/Tour_Eiffel.jpg"
    )
    assert wikipedia.thumbnail_url == "https://encrypted-tbn1.gstatic.com/images?q=tbn:ANd9GcR1"
    assert wikipedia.snippet is None  # Lens has none; nothing is invented
    assert official.title == "Tour Eiffel & Champ de Mars"
    assert britannica.url == "https://www.britannica.com/topic/Eiffel-Tower-Paris-France"
    assert (britannica.title, britannica.image_url, britannica.thumbnail_url) == (None, None, None)
    assert result.content is None
    assert not result.truncated


async def test_no_results_is_an_empty_result(replay: ReplayServer, lens: Make) -> None:
    replay.route("GET", "/search.json", Reply(json=LENS_NO_RESULTS))
    assert (await lens().image_search(REQUEST)).matches == ()
    replay.route("GET", "/search.json", Reply(json={"search_metadata": {"status": "Success"}}))
    assert (await lens().image_search(REQUEST)).matches == ()


async def test_a_failed_search_is_a_provider_error_with_serpapis_reason(
    replay: ReplayServer, lens: Make
) -> None:
    replay.route("GET", "/search.json", Reply(json=LENS_FAILED))
    with pytest.raises(WebError) as caught:
        await lens().image_search(REQUEST)
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.message == (
        "google_lens: the search failed (We couldn't get valid results for this search. "
        "Please try again later.)"
    )


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (Reply(401, json=LENS_BAD_KEY), "google_lens: authorization failed (HTTP 401); check"),
        (
            Reply(429, json=LENS_OUT_OF_SEARCHES, headers={"retry-after": "3600"}),
            "google_lens: rate limited (HTTP 429), retry after 3600 s",
        ),
        (Reply(503, json=LENS_FAILED), "google_lens: server error (HTTP 503)"),
    ],
)
async def test_serpapis_documented_error_statuses(
    replay: ReplayServer, lens: Make, reply: Reply, expected: str
) -> None:
    replay.route("GET", "/search.json", reply)
    with pytest.raises(WebError) as caught:
        await lens().image_search(REQUEST)
    assert caught.value.message.startswith(expected)
    assert caught.value.status == reply.status


async def test_bytes_are_refused_before_any_request(replay: ReplayServer, lens: Make) -> None:
    with pytest.raises(WebError) as caught:
        await lens().image_search(ImageSearchRequest(ImageBytes(b"\x89PNG", "image/png")))
    assert caught.value.code == WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE
    assert caught.value.message.startswith("google_lens: takes an image URL only, not bytes")
    assert not replay.requests


async def test_the_key_in_the_query_never_reaches_httpx_log_lines(
    replay: ReplayServer, lens: Make, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    replay.route("GET", "/search.json", Reply(json=LENS_RESPONSE))
    await lens().image_search(REQUEST)
    assert "HTTP Request: GET" in caplog.text  # httpx logged the URL, without the key
    assert "engine=google_lens" in caplog.text
    assert CANARY not in caplog.text


async def test_available_only_with_a_key(lens: Make) -> None:
    assert lens().available()
    assert not lens(None).available()
    assert not lens("").available()
    assert CANARY not in repr(lens())


async def test_the_cache_scope_is_the_endpoint(lens: Make) -> None:
    assert lens(base_url="http://127.0.0.1:1/").cache_scope() != lens().cache_scope()
    assert CANARY not in lens().cache_scope()
