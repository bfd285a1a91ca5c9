"""Open WebUI's external search and loader, driven by requests built the way Open WebUI builds
them (``retrieval/web/external.py`` and ``retrieval/loaders/external_web.py``): the same body,
the same ``Authorization: Bearer`` key and user agent, the forwarded user headers, and the same
reading of the answer (``raise_for_status``, then a list).

The server runs for real (uvicorn on 127.0.0.1) with the real Exa provider in front of a replay
server and the real ``http`` fetcher reading pages from a local server.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from _servers import Exchange, LocalServer, respond
from replay_server import Recorded, ReplayServer, Reply
from server_harness import LiveServer, exa_and_http_runtime
from webreach.cache import MemoryStore
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

KEY = "owui-inbound-key"
OPTIONS = ToolOptions(search_max_queries=3, search_max_results=5, fetch_max_chars=150)
PAGE = (
    "<html><head><title>Good page</title></head><body><article><h1>Fine</h1>"
    + "".join(f"<p>Paragraph {n} of a page that answered 200.</p>" for n in range(6))
    + "</article></body></html>"
)
ERROR_PAGE = "<html><head><title>Oops</title></head><body><h1>boom</h1></body></html>"
USER = {
    "X-OpenWebUI-User-Name": "Ada Lovelace",
    "X-OpenWebUI-User-Id": "u-1",
    "X-OpenWebUI-User-Email": "ada@example.org",
    "X-OpenWebUI-User-Role": "user",
}
"""What Open WebUI adds with ``ENABLE_FORWARD_USER_INFO_HEADERS=true``."""


def exa_answer(request: Recorded) -> Reply:
    slug = "-".join(request.json()["query"].split())
    results = [
        {"url": f"https://{slug}.example/{n}", "title": f"{slug} {n}", "highlights": [f"On {n}."]}
        for n in range(1, 6)
    ]
    return Reply(json={"results": results})


async def good(exchange: Exchange) -> None:
    await respond(exchange, 200, PAGE.encode(), {"Content-Type": "text/html; charset=utf-8"})


async def boom(exchange: Exchange) -> None:
    await respond(exchange, 500, ERROR_PAGE.encode(), {"Content-Type": "text/html"})


async def gone(exchange: Exchange) -> None:
    await respond(exchange, 404, b"<h1>not here</h1>", {"Content-Type": "text/html"})


@dataclass
class Stack:
    url: str
    pages: LocalServer


@pytest.fixture
async def stack(replay: ReplayServer) -> AsyncIterator[Stack]:
    replay.route("POST", "/search", exa_answer)
    runtime = exa_and_http_runtime(replay.url)
    config = ServerSettings(upstream_base_url="http://127.0.0.1:9", server_api_keys=KEY)
    routes = {"/good": good, "/boom": boom, "/gone": gone}
    async with LocalServer(routes=routes) as pages:
        with LiveServer(create_app(config, runtime, OPTIONS, store=MemoryStore())) as server:
            yield Stack(server.url, pages)


async def open_webui_search(url: str, key: str, query: str, count: int) -> list[dict[str, Any]]:
    """Open WebUI's ``search_external``: POST ``{query, count}``, ``raise_for_status``, keep
    ``link``/``title``/``snippet`` of the first ``count``; any exception is "no results"."""
    headers = {
        "User-Agent": "Open WebUI (https://github.com/open-webui/open-webui) RAG Bot",
        "Authorization": f"Bearer {key}",
        **USER,
    }
    async with httpx.AsyncClient() as client:
        response = await client.post(url, headers=headers, json={"query": query, "count": count})
    response.raise_for_status()
    return [
        {"link": r.get("link"), "title": r.get("title"), "snippet": r.get("snippet")}
        for r in response.json()[:count]
    ]


async def open_webui_load(url: str, key: str, urls: list[str]) -> list[dict[str, Any]]:
    """Open WebUI's ``ExternalWebLoader``: POST ``{urls}`` in batches of 20,
    ``raise_for_status``, and every item of the list becomes a document it indexes."""
    headers = {
        "User-Agent": "Open WebUI (https://github.com/open-webui/open-webui) External Web Loader",
        "Authorization": f"Bearer {key}",
        **USER,
    }
    documents: list[dict[str, Any]] = []
    async with httpx.AsyncClient(timeout=30) as client:
        for start in range(0, len(urls), 20):
            batch = urls[start : start + 20]
            response = await client.post(url, headers=headers, json={"urls": batch})
            response.raise_for_status()
            for result in response.json():
                documents.append(
                    {
                        "page_content": result.get("page_content", ""),
                        "metadata": result.get("metadata", {}),
                    }
                )
    return documents


# -- the loader ------------------------------------------------------------------------------


async def test_the_loader_leaves_out_pages_that_answered_an_http_error(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    urls = [stack.pages.url("/boom"), stack.pages.url("/good"), stack.pages.url("/gone")]
    with caplog.at_level(logging.INFO, logger="webreach"):
        documents = await open_webui_load(f"{stack.url}/openwebui/loader", KEY, urls)
    assert [d["metadata"]["source"] for d in documents] == [stack.pages.url("/good")]
    assert "Paragraph 5" in documents[0]["page_content"]
    assert not any("boom" in d["page_content"] for d in documents)  # no error page indexed
    logged = caplog.text
    assert "answered HTTP 500" in logged and "answered HTTP 404" in logged


async def test_a_loader_batch_of_only_error_pages_is_a_502_naming_the_status(
    stack: Stack,
) -> None:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}) as client:
        reply = await client.post(
            f"{stack.url}/openwebui/loader", json={"urls": [stack.pages.url("/boom")]}
        )
    assert reply.status_code == 502  # a bad gateway, never the site's own status passed on
    error = reply.json()["error"]
    assert error["code"] == "WEB_PROVIDER_ERROR"
    assert f"{stack.pages.url('/boom')} answered HTTP 500" in error["message"]
    with pytest.raises(httpx.HTTPStatusError):  # Open WebUI indexes nothing from this batch
        await open_webui_load(f"{stack.url}/openwebui/loader", KEY, [stack.pages.url("/boom")])


# -- search ----------------------------------------------------------------------------------


async def test_open_webui_search_at_its_own_endpoint_finds_results(stack: Stack) -> None:
    results = await open_webui_search(f"{stack.url}/openwebui/search", KEY, "open webui", 3)
    assert [r["link"] for r in results] == [f"https://open-webui.example/{n}" for n in (1, 2, 3)]


async def test_open_webui_search_sent_to_v1_search_is_told_where_to_point(stack: Stack) -> None:
    with pytest.raises(httpx.HTTPStatusError) as raised:
        await open_webui_search(f"{stack.url}/v1/search", KEY, "open webui", 3)
    reply = raised.value.response
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["code"] == "INVALID_ARGUMENTS"
    assert "Open WebUI" in error["message"] and "/openwebui/search" in error["message"]


async def test_v1_search_still_refuses_count_with_its_own_fields(stack: Stack) -> None:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}) as client:
        reply = await client.post(f"{stack.url}/v1/search", json={"queries": ["a"], "count": 3})
    assert reply.status_code == 400
    message = reply.json()["error"]["message"]
    assert "count: unknown field" in message and "/openwebui/search" not in message
