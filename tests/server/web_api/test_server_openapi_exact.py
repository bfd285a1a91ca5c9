"""The web endpoints' OpenAPI document says exactly what the server accepts: a body its schema
allows is accepted, and a body the server refuses is outside its schema.

Each case is a body where the two once disagreed; the schema is the served document's, checked
with ``jsonschema``, and the server runs for real (Exa on a replay, pages on 127.0.0.1).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from replay_server import Recorded, ReplayServer, Reply
from server_harness import LiveServer, exa_and_http_runtime
from webreach.cache import MemoryStore
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

jsonschema = pytest.importorskip("jsonschema")

OPTIONS = ToolOptions(search_max_queries=3, search_max_results=5)
PAGE = b"<html><head><title>Page</title></head><body><p>Some words.</p></body></html>"
PAGE_URL = "{pages}/page"
REQUESTS = {
    "/v1/search": "SearchRequest",
    "/v1/fetch": "FetchRequest",
    "/openwebui/search": "OpenWebUISearchRequest",
    "/openwebui/loader": "OpenWebUILoaderRequest",
}


def exa_answer(request: Recorded) -> Reply:
    return Reply(json={"results": [{"url": "https://a.example/1", "title": "A"}]})


def page(_request: Recorded) -> Reply:
    return Reply(body=PAGE, headers={"content-type": "text/html"})


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[httpx.Client, str, dict[str, Any]]]:
    with ReplayServer() as exa, ReplayServer() as pages:
        exa.route("POST", "/search", exa_answer)
        pages.route("GET", "/page", page)
        runtime = exa_and_http_runtime(exa.url)
        config = ServerSettings(upstream_base_url="http://127.0.0.1:9")
        app = create_app(config, runtime, OPTIONS, store=MemoryStore())
        with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as client:
            document = client.get("/v1/openapi.json").json()
            yield client, pages.url, document


def allowed(document: dict[str, Any], path: str, body: Any) -> bool:
    """Whether the served document's request schema for ``path`` allows ``body``."""
    schemas = document["components"]["schemas"]
    schema = {**schemas[REQUESTS[path]], "$defs": schemas}
    text = json.dumps(schema).replace("#/components/schemas/", "#/$defs/")
    validator = jsonschema.Draft202012Validator(json.loads(text))
    return bool(validator.is_valid(body))


def with_pages(body: dict[str, Any], pages: str) -> dict[str, Any]:
    return json.loads(json.dumps(body).replace("{pages}", pages))


@pytest.mark.parametrize(
    ("path", "body"),
    [
        # JSON Schema's integer is any number without a fraction.
        ("/v1/search", {"query": "python", "max_results": 2.0}),
        ("/v1/search", {"query": "python", "num_search_results": 10.0, "max_tokens": 1e3}),
        ("/v1/fetch", {"url": PAGE_URL, "start": 0.0}),
        ("/openwebui/search", {"query": "python", "count": 222331076.0}),
        # Around a value, what the server trims.
        ("/v1/fetch", {"url": f"  {PAGE_URL}\n"}),
        ("/v1/search", {"query": "python", "include_domains": [" *.python.org. "]}),
    ],
)
def test_a_body_the_document_allows_is_accepted(
    served: tuple[httpx.Client, str, dict[str, Any]], path: str, body: dict[str, Any]
) -> None:
    client, pages, document = served
    body = with_pages(body, pages)
    assert allowed(document, path, body)
    reply = client.post(path, json=body)
    assert reply.status_code == 200, reply.text


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        # `query` and `queries` are one or the other, never null.
        ("/v1/search", {"query": None}, "query"),
        ("/v1/search", {"queries": None}, "queries"),
        ("/v1/search", {"queries": ["python"], "query": None}, "query"),
        # Text that must say something is not whitespace.
        ("/v1/search", {"query": " \t "}, "query"),
        ("/v1/search", {"queries": ["python", "\n"]}, "queries"),
        ("/openwebui/search", {"query": "   "}, "query"),
        # Domains are host names.
        ("/v1/search", {"query": "python", "include_domains": [""]}, "include_domains"),
        ("/v1/search", {"query": "python", "exclude_domains": ["a b"]}, "exclude_domains"),
        # URLs are http(s) URLs.
        ("/v1/fetch", {"url": "0"}, "url"),
        ("/v1/fetch", {"url": "ftp://files.example/a"}, "url"),
        ("/v1/fetch", {"url": "https://user:secret@a.example/"}, "url"),
        ("/v1/fetch", {"url": "https://a.example:99999/"}, "url"),
        ("/v1/fetch", {"url": "https://a.example/\x0e"}, "url"),
        ("/openwebui/loader", {"urls": [PAGE_URL, "not a url"]}, "url"),
    ],
)
def test_a_body_the_server_refuses_is_outside_the_document(
    served: tuple[httpx.Client, str, dict[str, Any]],
    path: str,
    body: dict[str, Any],
    param: str,
) -> None:
    client, pages, document = served
    body = with_pages(body, pages)
    reply = client.post(path, json=body)
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["param"] == param
    assert not allowed(document, path, body)


def test_the_document_publishes_each_fields_own_rule(
    served: tuple[httpx.Client, str, dict[str, Any]],
) -> None:
    _, _, document = served
    schemas = document["components"]["schemas"]
    url = schemas["FetchRequest"]["properties"]["url"]
    assert url["maxLength"] == 2048 and url["pattern"].startswith("^\\s*[Hh][Tt][Tt][Pp][Ss]?://")
    item = schemas["OpenWebUILoaderRequest"]["properties"]["urls"]["items"]
    assert (item["pattern"], item["maxLength"]) == (url["pattern"], url["maxLength"])
    search = schemas["SearchRequest"]["properties"]
    assert search["query"]["pattern"] == search["queries"]["items"]["pattern"] == "\\S"
    assert "anyOf" not in search["query"] and "default" not in search["queries"]
    domain = search["include_domains"]["anyOf"][0]["items"]
    assert domain["type"] == "string" and "pattern" in domain
