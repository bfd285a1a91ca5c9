"""What every reverse image search provider shares with the search providers: failures are
``WEB_PROVIDER_ERROR`` naming the provider, the key never leaks (not even from SerpApi's query
string), cancellation closes the connection. Each runs against a local replay server."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from image_search_replies import IMAGE_URL
from replay_server import ReplayServer, Reply
from webreach.net import create_client
from webreach.providers.image_search.google_lens import GoogleLensImageSearchProvider
from webreach.providers.image_search.google_vision import GoogleVisionImageSearchProvider
from webreach.seam import ImageSearchProvider, ImageSearchRequest, ImageUrl, WebError, WebErrorCode

REQUEST = ImageSearchRequest(ImageUrl(IMAGE_URL))
_PAGE = "https://example.org/page"

Opened = list[Any]
"""What a test opened (providers, clients), closed after it."""


@dataclass(frozen=True)
class Case:
    id: str
    method: str
    path: str
    ok: Any
    """A minimal valid answer with one match."""
    shape_key: str
    """What a missing-field answer's error names."""

    @property
    def canary(self) -> str:
        return f"{self.id}-canary-key-71c4e2"

    def make(self, base: str, opened: Opened, timeout: float = 5.0) -> ImageSearchProvider:
        if self.id == "google_lens":
            lens = GoogleLensImageSearchProvider(
                api_key=self.canary, base_url=base, timeout=timeout
            )
            opened.append(lens)
            return lens
        client = create_client(timeout=timeout)
        opened.append(client)
        return GoogleVisionImageSearchProvider(api_key=self.canary, base_url=base, client=client)


CASES = [
    Case(
        "google_lens",
        "GET",
        "/search.json",
        {"search_metadata": {"status": "Success"}, "visual_matches": [{"link": _PAGE}]},
        "search_metadata",
    ),
    Case(
        "google_vision",
        "POST",
        "/v1/images:annotate",
        {"responses": [{"webDetection": {"pagesWithMatchingImages": [{"url": _PAGE}]}}]},
        "responses",
    ),
]


@pytest.fixture(params=CASES, ids=[case.id for case in CASES])
def case(request: pytest.FixtureRequest) -> Case:
    chosen: Case = request.param
    return chosen


@pytest.fixture
async def opened() -> AsyncIterator[Opened]:
    things: Opened = []
    yield things
    for thing in things:
        await thing.aclose()


@pytest.fixture
def provider(case: Case, replay: ReplayServer, opened: Opened) -> ImageSearchProvider:
    return case.make(replay.url, opened)


async def test_the_minimal_answer_is_one_match(
    case: Case, replay: ReplayServer, provider: ImageSearchProvider
) -> None:
    replay.route(case.method, case.path, Reply(json=case.ok))
    result = await provider.image_search(REQUEST)
    assert [match.url for match in result.matches] == [_PAGE]


FAILURES = [
    pytest.param(Reply(401, json={"error": "x"}), "authorization failed (HTTP 401)", id="401"),
    pytest.param(Reply(403, json={}), "authorization failed (HTTP 403)", id="403"),
    pytest.param(
        Reply(429, json={}, headers={"retry-after": "2"}),
        "rate limited (HTTP 429), retry after 2 s",
        id="429-retry-after",
    ),
    pytest.param(Reply(429, json={}), "rate limited (HTTP 429)", id="429"),
    pytest.param(Reply(500, json={}), "server error (HTTP 500)", id="500"),
    pytest.param(Reply(body=b"<html>oops</html>"), "the response is not valid JSON", id="bad-json"),
    pytest.param(Reply(json=["not", "an", "object"]), "unexpected response shape", id="not-object"),
]


@pytest.mark.parametrize(("reply", "expected"), FAILURES)
async def test_failures_are_provider_errors_naming_the_provider(
    case: Case, replay: ReplayServer, provider: ImageSearchProvider, reply: Reply, expected: str
) -> None:
    replay.route(case.method, case.path, reply)
    with pytest.raises(WebError) as caught:
        await provider.image_search(REQUEST)
    error = caught.value
    assert error.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert error.provider == case.id
    assert error.message.startswith(f"{case.id}: {expected}")
    if reply.status >= 400:
        assert error.status == reply.status
    if "retry-after" in reply.headers:
        assert error.retry_after == 2.0


async def test_a_missing_field_names_it(
    case: Case, replay: ReplayServer, provider: ImageSearchProvider
) -> None:
    replay.route(case.method, case.path, Reply(json={"unrelated": []}))
    with pytest.raises(WebError) as caught:
        await provider.image_search(REQUEST)
    assert caught.value.message == (
        f"{case.id}: unexpected response shape (no valid {case.shape_key!r})"
    )


async def test_an_echoed_key_never_reaches_messages_repr_or_logs(
    case: Case,
    replay: ReplayServer,
    provider: ImageSearchProvider,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    echo: dict[str, Any] = {"error": f"invalid key {case.canary}", "detail": case.canary}
    for status in (200, 400, 401, 429, 500):
        replay.route(case.method, case.path, Reply(status, json=echo))
        with pytest.raises(WebError) as caught:
            await provider.image_search(REQUEST)
        error = caught.value
        assert case.canary not in error.message + repr(error) + str(error)
    # An error text inside a 200 answer (SerpApi's "error", Vision's per-image error) too.
    failed: dict[str, Any] = {
        "search_metadata": {"status": "Error"},
        "error": f"bad {case.canary}",
        "responses": [{"error": {"code": 3, "message": f"bad {case.canary}"}}],
    }
    replay.route(case.method, case.path, Reply(json=failed))
    with pytest.raises(WebError) as caught:
        await provider.image_search(REQUEST)
    assert "***" in caught.value.message
    assert case.canary not in caught.value.message
    assert case.canary not in repr(provider)
    assert "HTTP Request:" in caplog.text  # httpx did log each request's URL
    assert case.canary not in caplog.text


async def test_the_key_travels_where_the_service_documents_it(
    case: Case, replay: ReplayServer, provider: ImageSearchProvider
) -> None:
    replay.route(case.method, case.path, Reply(json=case.ok))
    await provider.image_search(REQUEST)
    sent = replay.requests[0]
    in_query = case.canary in repr(sent.query)
    in_headers = any(case.canary in value for value in sent.headers.values())
    # SerpApi takes it as the api_key parameter only; Google in the X-Goog-Api-Key header.
    assert (in_query, in_headers) == ((True, False) if case.id == "google_lens" else (False, True))
    assert case.canary not in sent.path + sent.body.decode()


async def test_unreachable_endpoint(case: Case, opened: Opened) -> None:
    with pytest.raises(WebError) as caught:
        await case.make("http://127.0.0.1:9", opened).image_search(REQUEST)
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.provider == case.id
    assert caught.value.message == f"{case.id}: request failed (connection refused by 127.0.0.1:9)"
    assert case.canary not in repr(caught.value)


async def test_timeout_is_a_provider_error(
    case: Case, replay: ReplayServer, opened: Opened
) -> None:
    gate = threading.Event()
    replay.route(case.method, case.path, Reply(json=case.ok, hold=gate))
    try:
        with pytest.raises(WebError) as caught:
            await case.make(replay.url, opened, timeout=0.2).image_search(REQUEST)
    finally:
        gate.set()
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.message == f"{case.id}: the request timed out"


async def test_cancellation_closes_the_connection(
    case: Case, replay: ReplayServer, provider: ImageSearchProvider
) -> None:
    gate = threading.Event()
    replay.route(case.method, case.path, Reply(json=case.ok, hold=gate))
    task = asyncio.create_task(provider.image_search(REQUEST))
    while not replay.requests:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(500):
        if replay.disconnects:
            break
        await asyncio.sleep(0.01)
    gate.set()
    assert replay.disconnects == 1


def test_every_case_is_a_built_in_provider() -> None:
    from webreach.config import discover_providers

    assert {case.id for case in CASES} == {spec.id for spec in discover_providers("image_search")}
