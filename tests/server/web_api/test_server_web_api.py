"""Search and fetch over HTTP, and Open WebUI's external search and loader, against real servers.

The server runs for real (uvicorn on 127.0.0.1) with the real Exa provider in front of a replay
server and the real ``http`` fetcher reading pages from a local server, so keys, limits, the
SSRF guard and the cache are the ones a deployment has; the client is plain httpx.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from _servers import Exchange, LocalServer, respond
from replay_server import Recorded, ReplayServer, Reply
from server_harness import LiveServer, exa_and_http_runtime
from webreach.cache import MemoryStore
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.server.web_api import replies
from webreach.tools import ToolOptions

KEY = "web-key"
OPTIONS = ToolOptions(search_max_queries=3, search_max_results=5, fetch_max_chars=150)
ARTICLE = (
    "<html><head><title>Release notes</title></head><body><nav>Home · Blog</nav><article>"
    "<h1>What is new</h1><p>The <b>bold</b> change is a <a href='/docs'>documented</a> one.</p>"
    + "".join(
        f"<p>Paragraph {n} says something about the release in plain words.</p>" for n in range(8)
    )
    + "</article></body></html>"
)
OPEN_WEBUI = {"User-Agent": "Open WebUI (https://github.com/open-webui/open-webui) RAG Bot"}


def exa_answer(request: Recorded) -> Reply:
    """Five results per query on the query's own host; the third has no title."""
    slug = "-".join(request.json()["query"].split())
    results = [
        {"url": f"https://{slug}.example/{n}", "title": f"{slug} {n}", "highlights": [f"On {n}."]}
        for n in range(1, 6)
    ]
    del results[2]["title"]
    return Reply(json={"results": results})


@dataclass
class Stack:
    client: httpx.AsyncClient
    replay: ReplayServer
    pages: LocalServer

    def page(self, path: str) -> str:
        return self.pages.url(path)

    def searches(self) -> list[dict[str, Any]]:
        return [r.json() for r in self.replay.requests if r.path == "/search"]

    def fetches(self, path: str) -> int:
        return sum(1 for r in self.pages.requests if r.target == path)


async def html(exchange: Exchange) -> None:
    await respond(exchange, 200, ARTICLE.encode(), {"Content-Type": "text/html; charset=utf-8"})


@pytest.fixture
async def stack(replay: ReplayServer) -> AsyncIterator[Stack]:
    replay.route("POST", "/search", exa_answer)
    runtime = exa_and_http_runtime(replay.url)
    config = ServerSettings(upstream_base_url="http://127.0.0.1:9", server_api_keys=KEY)
    async with LocalServer(routes={"/article": html, "/other": html}) as pages:
        with LiveServer(create_app(config, runtime, OPTIONS, store=MemoryStore())) as server:
            headers = {"Authorization": f"Bearer {KEY}"}
            async with httpx.AsyncClient(base_url=server.url, headers=headers) as client_:
                yield Stack(client_, replay, pages)


def conforms(body: Any, model: type[BaseModel], document: dict[str, Any] | None = None) -> None:
    """The body is exactly what the reply model declares (and, with ``jsonschema``, what the
    served OpenAPI document says)."""
    if isinstance(body, list):
        for item in body:
            model.model_validate(item, strict=True)
    else:
        model.model_validate(body, strict=True)
    if document is not None:
        jsonschema = pytest.importorskip("jsonschema")
        schema = {**document["components"]["schemas"][model.__name__]}
        schema["$defs"] = document["components"]["schemas"]
        text = json.dumps(schema).replace("#/components/schemas/", "#/$defs/")
        for item in body if isinstance(body, list) else [body]:
            jsonschema.validate(item, json.loads(text))


# -- search ----------------------------------------------------------------------------------


async def test_search_runs_the_tool_and_answers_its_structured_result(stack: Stack) -> None:
    reply = await stack.client.post(
        "/v1/search", json={"queries": ["python news", "python news", "asyncio"]}
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    document = (await stack.client.get("/v1/openapi.json")).json()
    conforms(body, replies.SearchResult, document)
    assert body["queries"] == ["python news", "asyncio"]  # exact repeats run once
    assert [s["url"] for s in body["sources"]][:3] == [
        "https://python-news.example/1",
        "https://asyncio.example/1",
        "https://python-news.example/2",
    ]  # merged round-robin by rank
    assert len(body["sources"]) == OPTIONS.search_max_results and body["truncated"] is True
    assert body["provider"] == "exa"
    assert sorted(s["query"] for s in stack.searches()) == ["asyncio", "python news"]
    assert "web;dur=" in reply.headers["server-timing"]


async def test_search_takes_one_query_and_a_smaller_max_results(stack: Stack) -> None:
    reply = await stack.client.post("/v1/search", json={"query": " rust ", "max_results": 2})
    assert reply.status_code == 200
    assert reply.json()["queries"] == ["rust"]
    assert [s["snippet"] for s in reply.json()["sources"]] == ["On 1.", "On 2."]
    assert stack.searches()[0]["numResults"] == 2  # the provider is asked for no more


async def test_a_repeated_search_is_answered_from_the_cache(stack: Stack) -> None:
    first = await stack.client.post("/v1/search", json={"query": "cached"})
    second = await stack.client.post("/v1/search", json={"queries": ["cached"]})
    assert first.json() == second.json()
    assert len(stack.searches()) == 1


async def test_a_failing_provider_is_a_bad_gateway_and_its_rate_limit_a_429(stack: Stack) -> None:
    stack.replay.route("POST", "/search", Reply(500, json={"error": "boom"}))
    failed = await stack.client.post("/v1/search", json={"query": "x"})
    assert failed.status_code == 502
    assert failed.json()["error"]["code"] == "WEB_PROVIDER_ERROR"
    assert failed.json()["error"]["provider"] == "exa"
    # A wait past the search's deadline is not waited for: the 429 reaches the client at once.
    stack.replay.route("POST", "/search", Reply(429, json={}, headers={"retry-after": "700"}))
    asked = len(stack.replay.requests)
    limited = await stack.client.post("/v1/search", json={"query": "y"})
    assert limited.status_code == 429
    assert limited.headers["retry-after"] == "700"
    conforms(limited.json(), replies.Error)
    assert len(stack.replay.requests) == asked + 1


# -- fetch -----------------------------------------------------------------------------------


async def test_fetch_reads_markdown_in_pieces_from_start(stack: Stack) -> None:
    pieces: list[str] = []
    start: int | None = 0
    document = (await stack.client.get("/v1/openapi.json")).json()
    while start is not None:
        reply = await stack.client.post(
            "/v1/fetch", json={"url": stack.page("/article"), "start": start}
        )
        assert reply.status_code == 200, reply.text
        body = reply.json()
        conforms(body, replies.FetchResult, document)
        assert body["start"] == start and len(body["content"]) <= OPTIONS.fetch_max_chars
        pieces.append(body["content"])
        start = body["next_start"]
    assert len(pieces) > 2
    whole = "".join(pieces)
    assert len(whole) == body["total_chars"]
    assert whole.startswith("# What is new\n\nThe **bold** change is a [documented](")
    assert "Home · Blog" not in whole  # reader mode, as the tool reads it
    assert body["title"] == "Release notes" and body["format"] == "markdown"
    assert stack.fetches("/article") == 1  # later pieces come from the cache


async def test_fetch_as_text_drops_the_markup_and_as_raw_returns_the_body(stack: Stack) -> None:
    url = stack.page("/article")
    text = (await stack.client.post("/v1/fetch", json={"url": url, "format": "text"})).json()
    assert text["format"] == "text"
    assert text["content"].startswith("What is new\n\nThe bold change is a documented one.")
    assert "**" not in text["content"] and "](" not in text["content"]
    raw = (
        await stack.client.post("/v1/fetch", json={"url": url, "format": "raw", "start": 6})
    ).json()
    assert raw["format"] == "raw" and raw["kind"] == "html" and raw["title"] is None
    assert raw["content"] == ARTICLE[6 : 6 + len(raw["content"])]
    assert raw["content"].startswith("<head><title>Release notes</title>")
    assert raw["total_chars"] == len(ARTICLE)


async def test_fetch_of_a_private_address_is_refused_by_the_guard(stack: Stack) -> None:
    for url in ("http://10.1.2.3/admin", "http://169.254.169.254/latest/meta-data/"):
        reply = await stack.client.post("/v1/fetch", json={"url": url})
        assert reply.status_code == 403
        error = reply.json()["error"]
        assert error["code"] == "WEB_BLOCKED_URL" and error["param"] == "url"
    invalid = await stack.client.post("/v1/fetch", json={"url": "ftp://files.example/a"})
    assert invalid.status_code == 400
    assert invalid.json()["error"]["code"] == "WEB_INVALID_URL"


async def test_fetch_max_age_reads_again(stack: Stack) -> None:
    url = stack.page("/other")
    # 3600.0 is the integer JSON Schema says it is (Schemathesis sends such numbers).
    for body in ({"url": url}, {"url": url, "max_age": 3600.0}, {"url": url, "max_age": 0}):
        reply = await stack.client.post("/v1/fetch", json=body)
        assert reply.status_code == 200, reply.text
    assert stack.fetches("/other") == 2  # the cached copy served the second, not the third
    bad = await stack.client.post("/v1/fetch", json={"url": url, "max_age": -1})
    assert bad.status_code == 400
    assert bad.json()["error"]["param"] == "max_age"


async def test_a_start_past_the_end_names_start(stack: Stack) -> None:
    reply = await stack.client.post(
        "/v1/fetch", json={"url": stack.page("/article"), "start": 10**6}
    )
    assert reply.status_code == 400
    assert reply.json()["error"] == {
        "code": "INVALID_ARGUMENTS",
        "message": reply.json()["error"]["message"],
        "param": "start",
    }
    assert "past the end of the page" in reply.json()["error"]["message"]


# -- keys and bad bodies ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/v1/search", "/v1/fetch", "/openwebui/search", "/openwebui/loader"]
)
async def test_every_endpoint_needs_one_of_the_servers_keys(stack: Stack, path: str) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"x-api-key": "wrong"}):
        async with httpx.AsyncClient(base_url=str(stack.client.base_url)) as anonymous:
            reply = await anonymous.post(path, json={"query": "x"}, headers=headers)
        assert reply.status_code == 401
        assert reply.json() == {
            "error": {"code": "UNAUTHORIZED", "message": "invalid or missing API key"}
        }
    assert stack.searches() == [] and stack.pages.requests == []
    keyed = await stack.client.post(
        "/v1/search", json={"query": "x"}, headers={"Authorization": "", "x-api-key": KEY}
    )
    assert keyed.status_code == 200


@pytest.mark.parametrize(
    ("path", "body", "param", "words"),
    [
        ("/v1/search", {}, "queries", "Field required"),
        ("/v1/search", {"queries": []}, "queries", "array of 1 to 3 strings"),
        ("/v1/search", {"queries": ["a", "b", "c", "d"]}, "queries", "at most 3 queries"),
        ("/v1/search", {"queries": ["a", " "]}, "queries", "non-empty string"),
        ("/v1/search", {"query": 5}, "query", "non-empty string"),
        ("/v1/search", {"query": "a", "queries": ["b"]}, "query", "not both"),
        ("/v1/search", {"query": "a", "max_results": 6}, "max_results", "at most 5"),
        ("/v1/search", {"query": "a", "max_results": "2"}, "max_results", "positive integer"),
        ("/v1/search", {"query": "a", "maxResults": 2}, "maxResults", "unknown field"),
        ("/v1/fetch", {"start": 0}, "url", "Field required"),
        ("/v1/fetch", {"url": ""}, "url", "non-empty"),
        ("/v1/fetch", {"url": "https://a.example/", "start": -1}, "start", "non-negative"),
        ("/v1/fetch", {"url": "https://a.example/", "format": "html"}, "format", "`raw`"),
        ("/openwebui/search", {"query": "a", "count": 0}, "count", "positive integer"),
        ("/openwebui/loader", {"urls": "https://a.example/"}, "urls", "array of strings"),
        ("/openwebui/loader", {"urls": ["https://a.example/"] * 21}, "urls", "at most 20"),
    ],
)
async def test_a_bad_body_is_a_400_naming_the_field(
    stack: Stack, path: str, body: dict[str, Any], param: str, words: str
) -> None:
    reply = await stack.client.post(path, json=body)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["code"] == "INVALID_ARGUMENTS" and error["param"] == param
    assert words in error["message"]
    assert stack.searches() == [] and stack.pages.requests == []


@pytest.mark.parametrize(
    ("content", "words"),
    [(b"{not json", "not valid JSON"), (b"[1, 2]", "must be a JSON object"), (b"", "not valid")],
)
async def test_a_body_that_is_not_a_json_object_is_a_400(
    stack: Stack, content: bytes, words: str
) -> None:
    reply = await stack.client.post("/v1/search", content=content)
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == "INVALID_ARGUMENTS"
    assert words in reply.json()["error"]["message"]


# -- Open WebUI ------------------------------------------------------------------------------


async def test_open_webui_external_search_gets_links_titles_and_snippets(stack: Stack) -> None:
    reply = await stack.client.post(
        "/openwebui/search", json={"query": "open webui", "count": 4}, headers=OPEN_WEBUI
    )
    assert reply.status_code == 200
    hits = reply.json()
    conforms(hits, replies.OpenWebUISearchResult)
    assert [hit["link"] for hit in hits] == [
        f"https://open-webui.example/{n}" for n in (1, 2, 3, 4)
    ]
    assert hits[0] == {
        "link": "https://open-webui.example/1",
        "title": "open-webui 1",
        "snippet": "On 1.",
    }
    assert hits[2]["title"] == "open-webui.example"  # no title: the host, never null
    many = await stack.client.post("/openwebui/search", json={"query": "more", "count": 50})
    assert len(many.json()) == OPTIONS.search_max_results  # cut, not refused


async def test_open_webui_external_loader_reads_whole_pages(stack: Stack) -> None:
    urls = [
        stack.page("/article"),
        "http://10.0.0.7/",
        stack.page("/other"),
        stack.page("/article"),
    ]
    reply = await stack.client.post("/openwebui/loader", json={"urls": urls}, headers=OPEN_WEBUI)
    assert reply.status_code == 200, reply.text
    documents = reply.json()
    conforms(documents, replies.OpenWebUIDocument)
    assert [d["metadata"] for d in documents] == [
        {"source": stack.page("/article"), "title": "Release notes"},
        {"source": stack.page("/other"), "title": "Release notes"},
    ]  # the private address left out, the repeat read once
    whole = documents[0]["page_content"]
    assert len(whole) > OPTIONS.fetch_max_chars and whole.rstrip().endswith("plain words.")
    assert stack.fetches("/article") == 1
    refused = await stack.client.post("/openwebui/loader", json={"urls": [urls[1]]})
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "WEB_BLOCKED_URL"


# -- the document ----------------------------------------------------------------------------


async def test_the_openapi_document_is_valid_and_states_this_servers_bounds(stack: Stack) -> None:
    async with httpx.AsyncClient(base_url=str(stack.client.base_url)) as anonymous:
        reply = await anonymous.get("/v1/openapi.json")  # served without a key
    assert reply.status_code == 200
    document = reply.json()
    assert document["openapi"] == "3.1.0"
    paths = document["paths"]
    assert set(paths) == {"/v1/search", "/v1/fetch", "/openwebui/search", "/openwebui/loader"}
    schemas = document["components"]["schemas"]
    for path, item in paths.items():
        operation = item["post"]
        assert {"200", "400", "401", "429"} <= set(operation["responses"]), path
        assert "RATE_LIMITED" in operation["responses"]["429"]["description"], path
        request = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert request.removeprefix("#/components/schemas/") in schemas
    refs = set(_refs(document))
    assert refs and all(ref.removeprefix("#/components/schemas/") in schemas for ref in refs)
    search = schemas["SearchRequest"]
    queries = search["properties"]["queries"]  # one of `queries` and `query`: never null
    assert queries["maxItems"] == OPTIONS.search_max_queries
    assert search["properties"]["max_results"]["anyOf"][0]["maximum"] == 5
    assert search["additionalProperties"] is False
    assert schemas["FetchRequest"]["properties"]["format"]["enum"] == ["markdown", "text", "raw"]
    assert set(document["components"]["securitySchemes"]) == {"bearer", "apiKey"}
    try:
        from openapi_spec_validator import validate
    except ImportError:
        return
    validate(document)


def _refs(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [value["$ref"]] if isinstance(value.get("$ref"), str) else []
        return found + [ref for child in value.values() for ref in _refs(child)]
    if isinstance(value, list):
        return [ref for child in value for ref in _refs(child)]
    return []


async def test_a_tool_turned_off_is_a_404_and_the_document_needs_no_keys_then() -> None:
    runtime = WebRuntime()
    options = ToolOptions(fetch_enabled=False)
    config = ServerSettings(upstream_base_url="http://127.0.0.1:9")
    with LiveServer(create_app(config, runtime, options)) as server:
        async with httpx.AsyncClient(base_url=server.url) as client:
            reply = await client.post("/v1/fetch", json={"url": "https://a.example/"})
            document = (await client.get("/v1/openapi.json")).json()
    assert reply.status_code == 404
    assert reply.json()["error"]["code"] == "NOT_ENABLED"
    assert "WEBREACH_FETCH_ENABLED" in reply.json()["error"]["message"]
    assert "securitySchemes" not in document["components"] and "security" not in document
    assert "401" not in document["paths"]["/v1/search"]["post"]["responses"]


async def test_the_document_names_every_refusal_a_keyless_server_makes() -> None:
    """A keyless server refuses what a browser page could send (415, a foreign Origin's 403,
    a rebound Host's 421); its document says so, and a keyed server's names the 415 only."""
    config = ServerSettings(upstream_base_url="http://127.0.0.1:9")
    with LiveServer(create_app(config, WebRuntime(), OPTIONS)) as server:
        async with httpx.AsyncClient(base_url=server.url) as client:
            document = (await client.get("/v1/openapi.json")).json()
            plain = await client.post(
                "/v1/search", content=b'{"query": "x"}', headers={"content-type": "text/plain"}
            )
            foreign = await client.post(
                "/v1/search", json={"query": "x"}, headers={"origin": "https://evil.example"}
            )
            rebound = await client.post(
                "/v1/search", json={"query": "x"}, headers={"host": "rebound.example:80"}
            )
    for path, item in document["paths"].items():
        responses = item["post"]["responses"]
        assert {"403", "415", "421"} <= set(responses), path
        assert "Origin" in responses["403"]["description"], path
        assert "401" not in responses, path
    fetch = document["paths"]["/v1/fetch"]["post"]["responses"]["403"]["description"]
    assert "SSRF" in fetch and "Origin" in fetch  # both of fetch's 403s are named
    assert [plain.status_code, foreign.status_code, rebound.status_code] == [415, 403, 421]
    keyed = ServerSettings(upstream_base_url="http://127.0.0.1:9", server_api_keys=KEY)
    with LiveServer(create_app(keyed, WebRuntime(), OPTIONS)) as server:
        async with httpx.AsyncClient(base_url=server.url) as client:
            responses = (await client.get("/v1/openapi.json")).json()["paths"]["/v1/search"]
    assert {"401", "415"} <= set(responses["post"]["responses"])
    assert "421" not in responses["post"]["responses"]
