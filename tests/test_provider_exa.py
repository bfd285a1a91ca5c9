"""Exa against a local server that replays responses shaped like Exa's documented API."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator

import httpx
import pytest

from replay_server import ReplayServer, Reply
from webreach.net import create_client
from webreach.providers.search.exa import ExaSearchProvider
from webreach.seam import SearchRequest, WebError, WebErrorCode

CANARY = "exa-canary-key-7c1d9e"

EXA_RESPONSE = {
    "requestId": "b5947044c4b78efa9552a7c89b306d95",
    "resolvedSearchType": "neural",
    "results": [
        {
            "id": "https://docs.python.org/3/whatsnew/3.13.html",
            "title": "What's New In Python 3.13",
            "url": "https://docs.python.org/3/whatsnew/3.13.html",
            "publishedDate": "2024-10-07T00:00:00.000Z",
            "author": None,
            "score": 0.41,
            "highlights": ["Python 3.13 ships a new interactive interpreter.", "second"],
            "highlightScores": [0.62, 0.2],
        },
        {
            "id": "https://realpython.com/python313-new-features/",
            "title": "",
            "url": "https://realpython.com/python313-new-features/",
            "highlights": [],
        },
        {"id": "no-url", "title": "dropped: no url"},
    ],
    "costDollars": {"total": 0.005},
}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with create_client(timeout=5) as client:
        yield client


def exa(
    replay: ReplayServer, client: httpx.AsyncClient, key: str | None = CANARY
) -> ExaSearchProvider:
    return ExaSearchProvider(api_key=key, base_url=replay.url + "/", client=client)


async def test_request_shape_and_mapping(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    result = await exa(replay, client).search(SearchRequest("python 3.13", max_results=5))

    sent = replay.requests[0]
    assert sent.headers["x-api-key"] == CANARY
    assert sent.headers["user-agent"].startswith("webreach/")
    body = sent.json()
    assert body["query"] == "python 3.13"
    assert body["numResults"] == 5
    assert "highlights" in body["contents"]

    first, second = result.sources
    assert first.url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert first.title == "What's New In Python 3.13"
    assert first.snippet == "Python 3.13 ships a new interactive interpreter."
    assert first.published_at == "2024-10-07T00:00:00.000Z"
    assert (second.title, second.snippet, second.published_at) == (None, None, None)
    assert result.content is None


async def test_no_max_results_sends_no_count(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", "/search", Reply(json={"results": []}))
    result = await exa(replay, client).search(SearchRequest("q"))
    assert "numResults" not in replay.requests[0].json()
    assert result.sources == ()


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert ExaSearchProvider(api_key=CANARY, client=client).available()
    assert not ExaSearchProvider(api_key=None, client=client).available()
    assert not ExaSearchProvider(api_key="", client=client).available()


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (Reply(401, json={"error": "bad key " + CANARY}), "exa: authorization failed (HTTP 401)"),
        (Reply(403, json={}), "exa: authorization failed (HTTP 403)"),
        (
            Reply(429, json={}, headers={"retry-after": "2"}),
            "exa: rate limited (HTTP 429), retry after 2 s",
        ),
        (Reply(429, json={}), "exa: rate limited (HTTP 429)"),
        (Reply(500, json={}), "exa: server error (HTTP 500)"),
        (Reply(400, json={}), "exa: request rejected (HTTP 400)"),
        (Reply(body=b"<html>oops</html>"), "exa: the response is not valid JSON"),
        (Reply(json={"data": []}), "exa: unexpected response shape (no valid 'results')"),
        (Reply(json=["not", "an", "object"]), "exa: unexpected response shape"),
    ],
)
async def test_failures_are_provider_errors_naming_exa(
    replay: ReplayServer, client: httpx.AsyncClient, reply: Reply, expected: str
) -> None:
    replay.route("POST", "/search", reply)
    with pytest.raises(WebError) as caught:
        await exa(replay, client).search(SearchRequest("q"))
    error = caught.value
    assert error.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert error.provider == "exa"
    assert error.message.startswith(expected)
    if reply.status >= 400:
        assert error.status == reply.status
    if "retry-after" in reply.headers:
        assert error.retry_after == 2.0
    assert CANARY not in error.message + repr(error) + str(error)


async def test_unreachable_endpoint(client: httpx.AsyncClient) -> None:
    provider = ExaSearchProvider(api_key=CANARY, base_url="http://127.0.0.1:9", client=client)
    with pytest.raises(WebError) as caught:
        await provider.search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.message.startswith("exa: request failed (ConnectError")


async def test_timeout_is_a_provider_error(replay: ReplayServer) -> None:
    gate = threading.Event()
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE, hold=gate))
    try:
        async with create_client(timeout=0.2) as short:
            with pytest.raises(WebError) as caught:
                await exa(replay, short).search(SearchRequest("q"))
    finally:
        gate.set()
    assert caught.value.message == "exa: the request timed out"


async def test_cancellation_closes_the_connection(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    gate = threading.Event()
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE, hold=gate))
    task = asyncio.create_task(exa(replay, client).search(SearchRequest("q")))
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


async def test_the_key_never_reaches_logs_or_repr(
    replay: ReplayServer, client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    replay.route("POST", "/search", Reply(500, json={"echo": CANARY}))
    provider = exa(replay, client)
    with pytest.raises(WebError):
        await provider.search(SearchRequest("q"))
    assert CANARY not in repr(provider)
    assert CANARY not in caplog.text
