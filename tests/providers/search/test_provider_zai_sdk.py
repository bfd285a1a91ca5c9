"""Z.AI on the ``mcp`` SDK's client: its HTTP goes through the provider's own httpx client, an
HTTP error keeps its status, ``Retry-After`` and Z.AI's words wherever in the session it comes,
what the SDK could not tie to the request is still read, and without the ``mcp`` extra the
provider says which command adds it."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from replay_server import Recorded, ReplayServer, Reply
from webreach.config import build_runtime
from webreach.net import create_client
from webreach.net.client import USER_AGENT
from webreach.providers.search.zai import ZaiSearchProvider
from webreach.seam import SearchRequest, WebError, WebErrorCode

CANARY = "zai-canary-key-77c1.Qp"
PATH = "/api/mcp/web_search_prime/mcp"
SESSION = "5e55-10n"
TOOL = {
    "name": "webSearchPrime",
    "inputSchema": {"type": "object", "properties": {"search_query": {"type": "string"}}},
}
LEGACY_TOOL = {"name": "web_search_prime", "inputSchema": {"type": "object"}}
RESULTS = json.dumps(json.dumps([{"title": "Python", "link": "https://www.python.org/"}]))


def answer(rid: Any, result: dict[str, Any]) -> Reply:
    return Reply(json={"jsonrpc": "2.0", "id": rid, "result": result})


def found(rid: Any) -> Reply:
    return answer(rid, {"content": [{"type": "text", "text": RESULTS}]})


class Server:
    """Z.AI's handshake, then each ``tools/call`` answered by the next of ``calls`` (a function
    of the request's id)."""

    def __init__(
        self,
        replay: ReplayServer,
        *calls: Any,
        tools: list[dict[str, Any]] | None = None,
        version: str = "2025-03-26",
    ) -> None:
        self.calls = list(calls)
        self.tools = tools or [TOOL]
        self.version = version
        self.replay = replay
        replay.route("POST", PATH, self.respond)

    def arguments(self) -> list[dict[str, Any]]:
        sent = [r.json() for r in self.replay.requests]
        return [m["params"]["arguments"] for m in sent if m.get("method") == "tools/call"]

    def respond(self, request: Recorded) -> Reply:
        message = request.json()
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            result = {
                "protocolVersion": self.version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "web-search-prime", "version": "1.0.0"},
            }
            reply = answer(rid, result)
            reply.headers["Mcp-Session-Id"] = SESSION
            return reply
        if method == "notifications/initialized":
            return Reply(202, body=b"")
        if method == "tools/list":
            return answer(rid, {"tools": self.tools})
        reply: Reply = self.calls.pop(0)(rid)
        return reply


@pytest.fixture
def released() -> Iterator[threading.Event]:
    """An answer held until the test ends."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
async def quick() -> AsyncIterator[httpx.AsyncClient]:
    async with create_client(timeout=0.5) as client:
        yield client


def zai(replay: ReplayServer, client: httpx.AsyncClient) -> ZaiSearchProvider:
    return ZaiSearchProvider(api_key=CANARY, base_url=replay.url, client=client)


async def test_every_request_goes_through_the_providers_client(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """Its headers and event hooks apply; nothing but the four POSTs is sent (no GET stream
    for server messages, no DELETE at the end)."""
    Server(replay, found)
    hooked: list[str] = []

    async def hook(request: httpx.Request) -> None:
        hooked.append(json.loads(request.content).get("method"))

    client.event_hooks["request"].append(hook)
    result = await zai(replay, client).search(SearchRequest("python"))

    assert [s.url for s in result.sources] == ["https://www.python.org/"]
    methods = ["initialize", "notifications/initialized", "tools/list", "tools/call"]
    assert hooked == methods
    assert [(r.method, r.json().get("method")) for r in replay.requests] == [
        ("POST", m) for m in methods
    ]
    assert {r.headers["user-agent"] for r in replay.requests} == {USER_AGENT}


async def test_a_rate_limited_call_keeps_its_status_and_retry_after(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    limited = Reply(
        429,
        json={"error": {"message": f"Too many requests for {CANARY}"}},
        headers={"Retry-After": "7"},
    )
    server = Server(replay, lambda _rid: limited, found)
    with pytest.raises(WebError) as caught:
        await zai(replay, client).search(SearchRequest("q"))
    error = caught.value
    assert error.message == "zai: Too many requests for *** (HTTP 429, retry after 7 s)"
    assert (error.code, error.provider, error.status, error.retry_after) == (
        WebErrorCode.WEB_PROVIDER_ERROR,
        "zai",
        429,
        7,
    )
    assert len(server.arguments()) == 1


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (403, "zai: authorization failed; check the API key (HTTP 403)"),
        (503, "zai: server error (HTTP 503)"),
    ],
)
async def test_the_listing_refused_keeps_its_status(
    replay: ReplayServer, client: httpx.AsyncClient, status: int, expected: str
) -> None:
    def refusing(request: Recorded) -> Reply:
        if request.json().get("method") == "tools/list":
            return Reply(status, body=b"<html>no</html>", headers={"content-type": "text/html"})
        return server.respond(request)

    server = Server(replay)
    replay.route("POST", PATH, refusing)
    with pytest.raises(WebError) as caught:
        await zai(replay, client).search(SearchRequest("q"))
    assert (caught.value.message, caught.value.status) == (expected, status)


async def test_a_gateways_refusal_about_arguments_moves_to_the_next_shape(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """``{"success": false}`` is no JSON-RPC message; it still answers the call it came for."""
    refused = Reply(json={"success": False, "code": 1214, "msg": "Missing required parameter"})
    server = Server(replay, lambda _rid: refused, found, tools=[LEGACY_TOOL])
    result = await zai(replay, client).search(SearchRequest("q"))
    assert len(result.sources) == 1
    assert [sorted(a) for a in server.arguments()] == [
        ["count", "search_query"],
        ["count", "search_engine", "search_query"],
    ]


async def test_an_error_without_a_numeric_code_is_reported_without_one(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    def refused(rid: Any) -> Reply:
        return Reply(json={"jsonrpc": "2.0", "id": rid, "error": {"code": "1000", "message": "No"}})

    Server(replay, refused)
    with pytest.raises(WebError) as caught:
        await zai(replay, client).search(SearchRequest("q"))
    assert caught.value.message == "zai: No"


async def test_the_answer_in_a_batch_is_read(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    def batch(rid: Any) -> Reply:
        other = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}
        return Reply(json=[other, found(rid).json])

    Server(replay, batch)
    result = await zai(replay, client).search(SearchRequest("q"))
    assert [s.url for s in result.sources] == ["https://www.python.org/"]


async def test_a_call_never_answered_times_out(
    replay: ReplayServer, quick: httpx.AsyncClient, released: threading.Event
) -> None:
    """The provider client's timeout bounds the call (the SDK's own is not set)."""
    Server(replay, lambda _rid: Reply(hold=released))
    with pytest.raises(WebError) as caught:
        await zai(replay, quick).search(SearchRequest("q"))
    assert caught.value.message == "zai: the request timed out"


async def test_a_protocol_version_the_sdk_does_not_speak_is_a_provider_error(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    Server(replay, version="1999-01-01")
    with pytest.raises(WebError) as caught:
        await zai(replay, client).search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.message.startswith("zai: the MCP session failed (")
    assert "1999-01-01" in caught.value.message


@pytest.fixture
def without_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the ``mcp`` extra were not installed: the SDK cannot be imported."""
    monkeypatch.setitem(sys.modules, "mcp", None)


@pytest.mark.usefixtures("without_the_sdk")
async def test_without_the_sdk_it_says_which_extra_adds_it(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    provider = zai(replay, client)
    assert not provider.available()
    reason = provider.unavailable_reason()
    assert reason is not None
    assert reason.startswith("the mcp package is not installed: pip install ")
    assert "[mcp]" in reason
    with pytest.raises(WebError) as caught:
        await provider.search(SearchRequest("q"))
    assert caught.value.message == f"zai: {reason}"
    assert replay.requests == []

    keyless = ZaiSearchProvider(api_key=None, client=client)
    assert not keyless.available()
    assert keyless.unavailable_reason() is None  # the key is what to set first


@pytest.mark.usefixtures("without_the_sdk")
async def test_without_the_sdk_the_configured_provider_names_the_extra(
    replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZAI_API_KEY", CANARY)
    monkeypatch.setenv("ZAI_BASE_URL", replay.url)
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "zai")
    async with build_runtime() as runtime:
        with pytest.raises(WebError) as caught:
            await runtime.search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_CONFIGURED_UNAVAILABLE
    assert "the mcp package is not installed: pip install " in caught.value.message
    assert "[mcp]" in caught.value.message
    assert CANARY not in caught.value.message
    assert replay.requests == []


async def test_nothing_follows_a_refused_notification(
    replay: ReplayServer, client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """The SDK carries on after a failed notification; the search stops there, with the
    server's reason, and the SDK logs no error of its own."""

    def refusing(request: Recorded) -> Reply:
        if request.json().get("method") == "notifications/initialized":
            return Reply(403, json={"error": {"message": "Key suspended"}})
        return server.respond(request)

    server = Server(replay)
    replay.route("POST", PATH, refusing)
    with pytest.raises(WebError) as caught:
        await zai(replay, client).search(SearchRequest("q"))
    assert (caught.value.message, caught.value.status) == ("zai: Key suspended (HTTP 403)", 403)
    assert [r.json().get("method") for r in replay.requests] == [
        "initialize",
        "notifications/initialized",
    ]
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == []
