"""Cloud Vision web detection against a local server replaying responses shaped like the
documented ``images:annotate`` API."""

from __future__ import annotations

import base64

import httpx
import pytest

from image_search_replies import (
    IMAGE_URL,
    VISION_BAD_KEY,
    VISION_IMAGE_ERROR,
    VISION_NOTHING_FOUND,
    VISION_QUOTA,
    VISION_RESPONSE,
    google_error,
)
from replay_server import ReplayServer, Reply
from webreach.providers.image_search.google_vision import (
    MAX_IMAGE_BYTES,
    GoogleVisionImageSearchProvider,
)
from webreach.seam import (
    ImageBytes,
    ImageSearchRequest,
    ImageSearchResult,
    ImageUrl,
    WebError,
    WebErrorCode,
)

CANARY = "AIza-vision-canary-key-8d2e71"
PATH = "/v1/images:annotate"
REQUEST = ImageSearchRequest(ImageUrl(IMAGE_URL), max_results=5)
JPEG = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 4


def vision(
    replay: ReplayServer, client: httpx.AsyncClient, key: str | None = CANARY
) -> GoogleVisionImageSearchProvider:
    return GoogleVisionImageSearchProvider(api_key=key, base_url=replay.url + "/", client=client)


async def search(
    replay: ReplayServer, client: httpx.AsyncClient, reply: Reply, request: ImageSearchRequest
) -> ImageSearchResult:
    replay.route("POST", PATH, reply)
    return await vision(replay, client).image_search(request)


async def test_request_by_url_and_mapping(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=VISION_RESPONSE))
    result = await vision(replay, client).image_search(REQUEST)

    sent = replay.requests[0]
    assert sent.headers["x-goog-api-key"] == CANARY
    assert "key" not in sent.query
    assert sent.json() == {
        "requests": [
            {
                "image": {"source": {"imageUri": IMAGE_URL}},
                "features": [{"type": "WEB_DETECTION", "maxResults": 5}],
            }
        ]
    }

    wikipedia, official, travel = result.matches  # the duplicate and the url-less page dropped
    assert wikipedia.url == "https://en.wikipedia.org/wiki/Eiffel_Tower"
    assert wikipedia.title == "Eiffel Tower - Wikipedia"  # pageTitle's <b> removed
    assert (
        wikipedia.image_url == "https://upload.wikimedia.org/wikipedia/commons/8/85/Tour_Eiffel.jpg"
    )
    assert official.title == "Official website | Eiffel Tower & more"
    assert official.image_url == "https://www.toureiffel.paris/te.jpg"  # a partial match
    assert (travel.title, travel.image_url) == (None, None)
    assert (wikipedia.snippet, wikipedia.thumbnail_url) == (None, None)  # Vision has neither
    assert result.content == "eiffel tower"  # the best-guess label


async def test_bytes_are_sent_as_base64_content(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json=VISION_RESPONSE))
    await vision(replay, client).image_search(ImageSearchRequest(ImageBytes(JPEG, "image/jpeg")))
    (sent,) = replay.requests[0].json()["requests"]
    assert sent["image"] == {"content": base64.b64encode(JPEG).decode()}
    assert sent["features"] == [{"type": "WEB_DETECTION"}]  # no max_results, no count


async def test_too_large_bytes_are_refused_before_sending(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    image = ImageBytes(b"\0" * (MAX_IMAGE_BYTES + 1), "image/png")
    with pytest.raises(WebError) as caught:
        await vision(replay, client).image_search(ImageSearchRequest(image))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert "too large to send (7.0 MiB; at most 7 MiB as bytes, or give its URL)" in str(
        caught.value
    )
    assert not replay.requests


@pytest.mark.parametrize(
    "answer",
    [VISION_NOTHING_FOUND, {"responses": [{}]}, {"responses": [{"webDetection": {"x": 1}}]}],
)
async def test_nothing_found_is_an_empty_result(
    replay: ReplayServer, client: httpx.AsyncClient, answer: object
) -> None:
    result = await search(replay, client, Reply(json=answer), REQUEST)
    assert result.matches == ()
    assert result.content is None


async def test_an_image_vision_cannot_read_is_a_provider_error_saying_why(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    with pytest.raises(WebError) as caught:
        await search(replay, client, Reply(json=VISION_IMAGE_ERROR), REQUEST)
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.message == (
        "google_vision: the image could not be searched (We can not access the URL currently. "
        "Please download the content and pass it in.)"
    )


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # Google refuses a bad key with 400, not 401: still "check the API key".
        (Reply(400, json=VISION_BAD_KEY), "google_vision: authorization failed (HTTP 400)"),
        (
            Reply(400, json=google_error(400, "INVALID_ARGUMENT", "Bad feature.", "BAD_REQUEST")),
            "google_vision: request rejected (HTTP 400)",
        ),
        (Reply(400, body=b"not json"), "google_vision: request rejected (HTTP 400)"),
        (
            Reply(
                403,
                json=google_error(
                    403, "PERMISSION_DENIED", "Cloud Vision API has not been used.", "DISABLED"
                ),
            ),
            "google_vision: authorization failed (HTTP 403)",
        ),
        (
            Reply(429, json=VISION_QUOTA, headers={"retry-after": "30"}),
            "google_vision: rate limited (HTTP 429), retry after 30 s",
        ),
    ],
)
async def test_googles_error_bodies(
    replay: ReplayServer, client: httpx.AsyncClient, reply: Reply, expected: str
) -> None:
    with pytest.raises(WebError) as caught:
        await search(replay, client, reply, REQUEST)
    assert caught.value.message.startswith(expected)
    assert caught.value.status == reply.status


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        ({"responses": []}, "no answer in 'responses'"),
        ({"responses": ["x"]}, "no answer in 'responses'"),
        ({"responses": [{"webDetection": []}]}, "no valid 'webDetection'"),
        (
            {"responses": [{"webDetection": {"pagesWithMatchingImages": {}}}]},
            "no valid 'pagesWithMatchingImages'",
        ),
    ],
)
async def test_a_malformed_answer_names_what_is_wrong(
    replay: ReplayServer, client: httpx.AsyncClient, answer: object, named: str
) -> None:
    with pytest.raises(WebError) as caught:
        await search(replay, client, Reply(json=answer), REQUEST)
    assert caught.value.message == f"google_vision: unexpected response shape ({named})"


def test_available_only_with_a_key(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    assert vision(replay, client).available()
    assert not vision(replay, client, None).available()
    assert not vision(replay, client, "").available()
    assert CANARY not in repr(vision(replay, client)) + vision(replay, client).cache_scope()
