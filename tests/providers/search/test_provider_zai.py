"""Z.AI against a local MCP server replaying ``web_search_prime``: the Streamable HTTP handshake
(``initialize``, its ``Mcp-Session-Id``, ``notifications/initialized``), answers as JSON or as an
event stream, 004's argument-shape fallbacks, and the tool's results as Z.AI sends them (a JSON
list encoded as a JSON string, with ``title``, ``link``, ``content``, ``media``, ``icon``,
``refer`` and ``publish_date``), shaped on Z.AI's MCP server docs and captured answers."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from replay_server import Recorded, ReplayServer, Reply
from webreach.config import build_runtime
from webreach.providers.search.zai import ZaiSearchProvider, ZaiSettings
from webreach.seam import SearchRequest, WebError, WebErrorCode

CANARY = "zai-canary-key-4b1e.9Xq"
PATH = "/api/mcp/web_search_prime/mcp"
SESSION = "c0ffee00-5e55-4a1d-9d1e-2b7f3c0e9a11"
SERVER_VERSION = "2025-03-26"

RESULTS = [
    {
        "refer": "ref_1",
        "title": "What's New In Python 3.13",
        "link": "https://docs.python.org/3/whatsnew/3.13.html",
        "media": "Python documentation",
        "content": "Python 3.13 ships a new interactive interpreter.",
        "icon": "https://sfile.chatglm.cn/searchImage/python_icon.jpg",
        "publish_date": "2024-10-07",
    },
    {
        "refer": "ref_2",
        "title": "PEP 744 &ndash; <b>JIT</b> Compilation",
        "link": "https://peps.python.org/pep-0744/",
        "media": "",
        "content": "",
        "icon": "",
        "publish_date": "",
    },
    {"refer": "ref_3", "title": "no link, dropped", "content": "x"},
    {"refer": "ref_4", "title": "Real Python", "url": "https://realpython.com/python313/"},
]
ENCODED = json.dumps(json.dumps(RESULTS))
"""The tool's text as captured: the list, JSON-encoded as a JSON string."""


def text_result(*texts: str, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": t} for t in texts]}
    if is_error:
        result["isError"] = True
    return result


def rpc_error(code: int, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def sse(*messages: dict[str, Any]) -> bytes:
    return b"".join(b"event: message\ndata: " + json.dumps(m).encode() + b"\n\n" for m in messages)


WEB_SEARCH_PRIME = {
    "name": "webSearchPrime",
    "description": "Search web information, returning page titles, URLs, summaries, site names"
    " and site icons.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "search_query": {"type": "string", "description": "The content to search for"},
            "search_domain_filter": {"type": "string"},
            "search_recency_filter": {
                "type": "string",
                "enum": ["oneDay", "oneWeek", "oneMonth", "oneYear", "noLimit"],
            },
            "content_size": {"type": "string", "enum": ["medium", "high"]},
            "location": {"type": "string", "enum": ["cn", "us"]},
        },
        "required": ["search_query"],
    },
}
"""The tool as Z.AI's remote MCP server lists it (``tools/list``)."""
LEGACY_TOOL = {"name": "web_search_prime", "inputSchema": {"type": "object"}}
"""A server that names the tool the old way and lists no properties: every shape is tried."""


@dataclass
class McpServer:
    """An MCP server on the replay server: it answers ``initialize`` with a session id, accepts
    ``notifications/initialized`` only in that session, and answers each ``tools/call`` with the
    next of ``calls`` (a result, or a JSON-RPC error object when it has ``error``)."""

    replay: ReplayServer
    calls: list[dict[str, Any]] = field(default_factory=list)
    as_events: bool = False
    call_reply: Callable[[Recorded], Reply] | None = None
    tools: list[dict[str, Any]] = field(default_factory=lambda: [WEB_SEARCH_PRIME])

    def __post_init__(self) -> None:
        self.replay.route("POST", PATH, self._answer)

    def messages(self, method: str) -> list[Recorded]:
        return [r for r in self.replay.requests if r.json().get("method") == method]

    def arguments(self) -> list[dict[str, Any]]:
        return [r.json()["params"]["arguments"] for r in self.messages("tools/call")]

    def _reply(self, rid: Any, payload: dict[str, Any], **headers: str) -> Reply:
        message = {"jsonrpc": "2.0", "id": rid}
        message |= payload if "error" in payload else {"result": payload}
        if self.as_events:
            progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}
            return Reply(
                body=sse(progress, message),
                headers={"content-type": "text/event-stream", **headers},
            )
        return Reply(json=message, headers=headers)

    def _answer(self, request: Recorded) -> Reply:
        message = request.json()
        method = message.get("method")
        if method == "initialize":
            result = {
                "protocolVersion": SERVER_VERSION,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "web-search-prime", "version": "1.0.0"},
            }
            return self._reply(message["id"], result, **{"Mcp-Session-Id": SESSION})
        if request.headers.get("mcp-session-id") != SESSION:
            return Reply(400, json=rpc_error(-32000, "Bad Request: No valid session ID provided"))
        if method == "notifications/initialized":
            return Reply(202, body=b"")
        if method == "tools/list":
            return self._reply(message["id"], {"tools": self.tools})
        if self.call_reply is not None:
            return self.call_reply(request)
        return self._reply(message["id"], self.calls.pop(0))


def zai(
    replay: ReplayServer, client: httpx.AsyncClient, key: str | None = CANARY
) -> ZaiSearchProvider:
    return ZaiSearchProvider(api_key=key, base_url=replay.url + "/", client=client)


async def test_the_handshake_and_the_call(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    server = McpServer(replay, calls=[text_result(ENCODED)])
    await zai(replay, client).search(SearchRequest("python 3.13", max_results=5))

    assert [r.json().get("method") for r in replay.requests] == [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
    ]
    for sent in replay.requests:
        assert (sent.method, sent.path) == ("POST", PATH)
        assert sent.headers["authorization"] == f"Bearer {CANARY}"
        assert sent.headers["accept"] == "application/json, text/event-stream"
        assert sent.headers["content-type"] == "application/json"
        assert sent.json()["jsonrpc"] == "2.0"
    initialize, initialized, listing, call = replay.requests
    assert "mcp-session-id" not in initialize.headers
    params = initialize.json()["params"]
    assert params["protocolVersion"] and params["capabilities"] == {}
    assert params["clientInfo"]["name"] == "webreach"
    assert "id" not in initialized.json()
    assert initialized.headers["mcp-session-id"] == SESSION
    assert listing.headers["mcp-session-id"] == SESSION
    assert call.headers["mcp-session-id"] == SESSION
    assert call.headers["mcp-protocol-version"] == SERVER_VERSION
    assert call.json()["params"]["name"] == "webSearchPrime"
    assert call.json()["id"] != initialize.json()["id"]
    # Z.AI's documented argument, and only what the tool's schema lists (no ``count``).
    assert server.arguments() == [{"search_query": "python 3.13"}]


async def test_results_map_to_sources(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    McpServer(replay, calls=[text_result(ENCODED)])
    found = await zai(replay, client).search(SearchRequest("python 3.13"))

    assert [s.url for s in found.sources] == [
        "https://docs.python.org/3/whatsnew/3.13.html",
        "https://peps.python.org/pep-0744/",
        "https://realpython.com/python313/",
    ]
    docs, pep, real = found.sources
    assert docs.title == "What's New In Python 3.13"
    assert docs.snippet == "Python 3.13 ships a new interactive interpreter."
    assert docs.published_at == "2024-10-07"
    assert (pep.title, pep.snippet, pep.published_at) == ("PEP 744 – JIT Compilation", None, None)
    assert (real.title, real.snippet, real.published_at) == ("Real Python", None, None)
    assert found.content is None
    assert (found.citations, found.related, found.queries) == ((), (), ())


async def test_a_plain_json_list_and_a_results_object_are_read_too(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    McpServer(
        replay,
        calls=[
            text_result(json.dumps(RESULTS[:1])),
            text_result(json.dumps({"request_id": "r1", "search_result": RESULTS[1:2]})),
        ],
    )
    provider = zai(replay, client)
    first = await provider.search(SearchRequest("q"))
    second = await provider.search(SearchRequest("q"))
    assert [s.url for s in first.sources] == [RESULTS[0]["link"]]
    assert [s.url for s in second.sources] == [RESULTS[1]["link"]]


async def test_free_text_is_the_answer(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    McpServer(replay, calls=[text_result("Python 3.13 was released on 7 October 2024.")])
    found = await zai(replay, client).search(SearchRequest("q"))
    assert found.sources == ()
    assert found.content == "Python 3.13 was released on 7 October 2024."


async def test_an_empty_list_is_an_empty_result(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    McpServer(replay, calls=[text_result(json.dumps("[]"))])
    found = await zai(replay, client).search(SearchRequest("q"))
    assert (found.sources, found.content) == ((), None)
    assert not found.has_content()


@pytest.mark.parametrize(
    ("request_", "count"),
    [
        (SearchRequest("q"), 10),
        (SearchRequest("q", max_results=3), 3),
        (SearchRequest("q", max_results=3, num_search_results=7), 7),
        (SearchRequest("q", max_results=80), 50),
    ],
)
async def test_count_is_the_breadth(
    replay: ReplayServer, client: httpx.AsyncClient, request_: SearchRequest, count: int
) -> None:
    server = McpServer(replay, calls=[text_result(ENCODED)], tools=[LEGACY_TOOL])
    found = await zai(replay, client).search(request_)
    assert server.arguments()[0]["count"] == count
    assert len(found.sources) == min(count, 3)


async def test_more_results_than_asked_are_cut(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    McpServer(replay, calls=[text_result(ENCODED)])
    found = await zai(replay, client).search(SearchRequest("q", max_results=2))
    assert len(found.sources) == 2


async def test_answers_as_an_event_stream(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    """The server may answer any request as ``text/event-stream``; a notification it sends
    before the answer is passed over."""
    server = McpServer(replay, calls=[text_result(ENCODED)], as_events=True)
    found = await zai(replay, client).search(SearchRequest("q"))
    assert len(found.sources) == 3
    assert server.messages("tools/call")[0].headers["mcp-session-id"] == SESSION


async def test_recency_and_one_domain_are_passed(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    assert ZaiSearchProvider.filters == frozenset({"recency"})
    server = McpServer(replay, calls=[text_result(ENCODED), text_result(ENCODED)])
    provider = zai(replay, client)
    await provider.search(SearchRequest("q", recency="week", include_domains=("python.org",)))
    await provider.search(SearchRequest("q", recency="day", include_domains=("a.com", "b.com")))
    first, second = server.arguments()
    assert first["search_recency_filter"] == "oneWeek"
    assert first["search_domain_filter"] == "python.org"
    assert second["search_recency_filter"] == "oneDay"
    assert "search_domain_filter" not in second


async def test_each_argument_shape_fallback_step(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """Z.AI's documented shape first; a JSON-RPC "invalid params" and a tool error saying an
    argument is missing both move on. The shape that worked is asked first from then on."""
    server = McpServer(
        replay,
        tools=[LEGACY_TOOL],
        calls=[
            rpc_error(-32602, "Invalid params"),
            text_result(
                "MCP error -32602: Missing required argument: search_engine", is_error=True
            ),
            text_result(ENCODED),
            text_result(ENCODED),
        ],
    )
    provider = zai(replay, client)
    found = await provider.search(SearchRequest("python 3.13", recency="month"))
    assert len(found.sources) == 3
    assert server.arguments() == [
        {"search_query": "python 3.13", "count": 10, "search_recency_filter": "oneMonth"},
        {
            "search_query": "python 3.13",
            "search_engine": "search-prime",
            "count": 10,
            "search_recency_filter": "oneMonth",
        },
        {"query": "python 3.13", "count": 10, "search_recency_filter": "oneMonth"},
    ]
    assert len(server.messages("initialize")) == 1  # one session for every attempt

    await provider.search(SearchRequest("again"))
    assert server.arguments()[-1] == {"query": "again", "count": 10}


async def test_the_second_shape_answering_ends_the_fallbacks(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    server = McpServer(
        replay,
        tools=[LEGACY_TOOL],
        calls=[
            text_result('Invalid arguments: "search_engine" is required', is_error=True),
            text_result(ENCODED),
        ],
    )
    found = await zai(replay, client).search(SearchRequest("q"))
    assert len(found.sources) == 3
    assert [sorted(a) for a in server.arguments()] == [
        ["count", "search_query"],
        ["count", "search_engine", "search_query"],
    ]


async def test_the_last_shapes_error_is_the_one_raised(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    McpServer(
        replay,
        tools=[LEGACY_TOOL],
        calls=[rpc_error(-32602, f"Invalid params {n}") for n in range(3)],
    )
    with pytest.raises(WebError) as caught:
        await zai(replay, client).search(SearchRequest("q"))
    assert caught.value.message == "zai: Invalid params 2 (MCP error -32602)"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            text_result("Search quota exceeded for today", is_error=True),
            "zai: Search quota exceeded for today",
        ),
        (text_result(is_error=True), "zai: the search failed"),
        (rpc_error(-32000, "quota exceeded"), "zai: quota exceeded (MCP error -32000)"),
        (
            rpc_error(-401, "Api key not found, please get your apikey"),
            "zai: Api key not found, please get your apikey (MCP error -401)",
        ),
    ],
)
async def test_other_errors_do_not_fall_back(
    replay: ReplayServer, client: httpx.AsyncClient, reply: dict[str, Any], expected: str
) -> None:
    server = McpServer(replay, calls=[reply, text_result(ENCODED), text_result(ENCODED)])
    with pytest.raises(WebError) as caught:
        await zai(replay, client).search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert caught.value.provider == "zai"
    assert caught.value.message == expected
    assert len(server.arguments()) == 1


async def test_an_http_failure_of_the_call_does_not_fall_back(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    server = McpServer(replay, call_reply=lambda _r: Reply(500, json={"error": "upstream"}))
    with pytest.raises(WebError) as caught:
        await zai(replay, client).search(SearchRequest("q"))
    assert caught.value.message == "zai: upstream (HTTP 500)"
    assert caught.value.status == 500
    assert len(server.arguments()) == 1


@pytest.mark.parametrize(
    ("reply", "expected", "status"),
    [
        (
            Reply(401, json={"error": {"code": "1000", "message": "Authentication failed"}}),
            "zai: Authentication failed (HTTP 401)",
            401,
        ),
        (Reply(401, body=b""), "zai: authorization failed; check the API key (HTTP 401)", 401),
        (
            Reply(
                429, json={"code": 1302, "msg": "Rate limit reached"}, headers={"retry-after": "3"}
            ),
            "zai: Rate limit reached (HTTP 429, retry after 3 s)",
            429,
        ),
        (Reply(502, body=b"<html>Bad Gateway</html>"), "zai: server error (HTTP 502)", 502),
        (
            Reply(json={"success": False, "code": 1113, "msg": "Insufficient balance"}),
            "zai: Insufficient balance (MCP error 1113)",
            None,
        ),
        (
            Reply(json={"jsonrpc": "2.0", "id": None, **rpc_error(-32600, "Invalid Request")}),
            "zai: Invalid Request (MCP error -32600)",
            None,
        ),
        (Reply(body=b"not json"), "zai: the response is not valid JSON", None),
        (
            Reply(json={"jsonrpc": "2.0", "id": 1}),
            "zai: unexpected response shape (no valid 'result')",
            None,
        ),
        (
            Reply(json={"jsonrpc": "2.0", "id": 999, "result": {}}),
            "zai: the answer is not a JSON-RPC response",
            None,
        ),
        (
            Reply(
                body=sse({"jsonrpc": "2.0", "method": "notifications/progress"}),
                headers={"content-type": "text/event-stream"},
            ),
            "zai: the event stream ended without an answer",
            None,
        ),
    ],
)
async def test_failures_keep_zais_own_message(
    replay: ReplayServer, client: httpx.AsyncClient, reply: Reply, expected: str, status: int | None
) -> None:
    replay.route("POST", PATH, reply)
    with pytest.raises(WebError) as caught:
        await zai(replay, client).search(SearchRequest("q"))
    error = caught.value
    assert error.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert error.provider == "zai"
    assert error.message == expected
    assert error.status == status
    if status == 429:
        assert error.retry_after == 3


async def test_a_session_the_server_refuses_is_an_error(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """Without the session id a server that requires one refuses the call (as Z.AI does)."""

    def forgetful(request: Recorded) -> Reply:
        message = request.json()
        if message.get("method") == "initialize":
            result = {
                "protocolVersion": SERVER_VERSION,
                "capabilities": {},
                "serverInfo": {"name": "web-search-prime", "version": "1.0.0"},
            }
            return Reply(json={"jsonrpc": "2.0", "id": message["id"], "result": result})
        return Reply(400, json=rpc_error(-32000, "Bad Request: No valid session ID provided"))

    replay.route("POST", PATH, forgetful)
    with pytest.raises(WebError) as caught:
        await zai(replay, client).search(SearchRequest("q"))
    assert caught.value.message == "zai: Bad Request: No valid session ID provided (HTTP 400)"


async def test_the_key_never_appears_in_errors_or_repr(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    McpServer(
        replay,
        calls=[
            text_result(f"quota exceeded for key {CANARY}", is_error=True),
            rpc_error(-32000, f"bad key {CANARY}"),
        ],
    )
    provider = zai(replay, client)
    assert CANARY not in repr(provider)
    for expected in ("zai: quota exceeded for key ***", "zai: bad key *** (MCP error -32000)"):
        with pytest.raises(WebError) as caught:
            await provider.search(SearchRequest("q"))
        assert caught.value.message == expected
        assert CANARY not in repr(caught.value) + str(caught.value)
    replay.route("POST", PATH, Reply(401, json={"message": f"key {CANARY} refused"}))
    with pytest.raises(WebError) as caught:
        await provider.search(SearchRequest("q"))
    assert caught.value.message == "zai: key *** refused (HTTP 401)"


async def test_an_unreachable_endpoint_is_a_provider_error(client: httpx.AsyncClient) -> None:
    provider = ZaiSearchProvider(api_key=CANARY, base_url="http://127.0.0.1:1", client=client)
    with pytest.raises(WebError) as caught:
        await provider.search(SearchRequest("q"))
    assert caught.value.message.startswith("zai: request failed (")
    assert CANARY not in caught.value.message


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert ZaiSearchProvider(api_key=CANARY, client=client).available()
    assert not ZaiSearchProvider(api_key=None, client=client).available()
    assert not ZaiSearchProvider(api_key="", client=client).available()


def test_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ZaiSettings().zai_api_key is None
    assert ZaiSettings().zai_base_url is None
    monkeypatch.setenv("ZAI_API_KEY", CANARY)
    monkeypatch.setenv("ZAI_BASE_URL", "https://open.bigmodel.cn")
    settings = ZaiSettings()
    assert settings.zai_api_key is not None
    assert settings.zai_api_key.get_secret_value() == CANARY
    assert settings.zai_base_url == "https://open.bigmodel.cn"
    assert CANARY not in repr(settings) + str(settings.model_dump())


async def test_the_spec_builds_from_the_environment(
    replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = McpServer(replay, calls=[text_result(ENCODED)])
    monkeypatch.setenv("ZAI_API_KEY", CANARY)
    monkeypatch.setenv("ZAI_BASE_URL", replay.url)
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "zai")
    async with build_runtime() as runtime:
        result = await runtime.search(SearchRequest("python 3.13", max_results=2))
    assert result.provider == "zai"
    assert [s.url for s in result.sources] == [r["link"] for r in RESULTS[:2]]
    assert server.messages("tools/call")[0].headers["authorization"] == f"Bearer {CANARY}"


async def test_the_listed_tool_is_called_once_listed_per_session(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """Whatever the server names its search tool, the one it lists is called; recency and one
    domain go in the documented fields the schema lists."""
    renamed = {**WEB_SEARCH_PRIME, "name": "web-search-prime"}
    server = McpServer(replay, calls=[text_result(ENCODED), text_result(ENCODED)], tools=[renamed])
    provider = zai(replay, client)
    await provider.search(SearchRequest("q", recency="week", include_domains=("python.org",)))
    await provider.search(SearchRequest("again"))
    assert [c.json()["params"]["name"] for c in server.messages("tools/call")] == [
        "web-search-prime"
    ] * 2
    assert len(server.messages("tools/list")) == len(server.messages("initialize")) == 2
    assert server.arguments()[0] == {
        "search_query": "q",
        "search_recency_filter": "oneWeek",
        "search_domain_filter": "python.org",
    }


async def test_a_server_without_a_search_tool_is_a_provider_error(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    listed = [
        {"name": name, "inputSchema": {"type": "object"}}
        for name in ("image_analysis", "read_page")
    ]
    server = McpServer(replay, tools=listed)
    with pytest.raises(WebError) as caught:
        await zai(replay, client).search(SearchRequest("q"))
    assert caught.value.message == (
        "zai: the MCP server offers no web search tool (tools: image_analysis, read_page)"
    )
    assert server.messages("tools/call") == []
