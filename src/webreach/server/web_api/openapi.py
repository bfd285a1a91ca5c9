"""The OpenAPI 3.1 document of the search and fetch endpoints.

Its schemas are generated from the same pydantic models that check the requests (``bodies``)
and declare the answers (``replies``), with this server's own bounds, so the document cannot
promise what the server refuses. Only the paths and the meaning of each status are written here.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from ...tools import ToolOptions
from .bodies import FetchRequest, search_body
from .openwebui_bodies import OpenWebUILoaderRequest, OpenWebUISearchRequest
from .replies import (
    Error,
    FetchResult,
    OpenWebUIDocument,
    OpenWebUISearchResult,
    SearchResult,
)

__all__ = ["PATHS", "openapi_document"]

JSONSchema = dict[str, Any]
Mode = Literal["validation", "serialization"]

PATHS = {
    "search": "/v1/search",
    "fetch": "/v1/fetch",
    "openapi": "/v1/openapi.json",
    "openwebui_search": "/openwebui/search",
    "openwebui_loader": "/openwebui/loader",
}
"""Where each endpoint is served (the app's routes and this document both read it)."""

_STATUS = {
    "400": "A field is missing or wrong (`error.param` names it), the URL is not a valid "
    "http(s) URL, or `start` is past the end of the page.",
    "401": "The server has inbound keys and none was given (`Authorization: Bearer` or "
    "`x-api-key`).",
    "403": "The URL resolves to a private or reserved address (the SSRF guard; "
    "`WEBREACH_FETCH_ALLOW` opens named hosts).",
    "404": "The tool is turned off on this server (`WEBREACH_SEARCH_ENABLED`, "
    "`WEBREACH_FETCH_ENABLED`).",
    "413": "The request body is larger than `WEBREACH_SERVER_MAX_BODY_BYTES`.",
    "422": "The page cannot be returned: a cross-origin redirect (the message names the target), "
    "an unsupported content type, or a document over the fetch size limit.",
    "429": "The search provider is rate limited, or the inbound key has spent a limit "
    "(`RATE_LIMITED`: its requests a minute, or its searches or fetches of the UTC day); "
    "`Retry-After` says when to come back.",
    "502": "The provider failed (HTTP error, bad answer, refused connection, DNS, TLS).",
    "503": "No usable provider is configured; the message names the setting to change.",
    "504": "The fetch took longer than `WEBREACH_FETCH_TIMEOUT`.",
    "415": "The body is not declared JSON (`Content-Type: application/json` or `…+json`): "
    "what a page in a browser could send without asking first.",
    "421": "The server has no inbound keys and was reached under a `Host` other than its own "
    "loopback address and port (a DNS-rebinding page).",
}
_FOREIGN_ORIGIN = (
    "The server has no inbound keys and the request's `Origin` is neither the server's own "
    "nor listed in `WEBREACH_SERVER_CORS_ORIGINS` (a page in the user's browser)."
)
_SEARCH_STATUSES = ("400", "404", "413", "429", "502", "503")
_FETCH_STATUSES = ("400", "403", "404", "413", "422", "502", "503", "504")


def _ref(model: type[BaseModel]) -> JSONSchema:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _json(schema: JSONSchema) -> JSONSchema:
    return {"application/json": {"schema": schema}}


def _operation(
    summary: str,
    description: str,
    request: type[BaseModel],
    reply: JSONSchema,
    statuses: tuple[str, ...],
    keyed: bool,
) -> JSONSchema:
    responses: JSONSchema = {"200": {"description": "The result.", "content": _json(reply)}}
    shown = {*statuses, "415", *(("401", "429") if keyed else ("403", "421"))}
    for status in sorted(shown):
        said = _STATUS.get(status, "")
        if status == "403" and not keyed:
            said = f"{said} Or: {_FOREIGN_ORIGIN}" if status in statuses else _FOREIGN_ORIGIN
        responses[status] = {"description": said, "content": _json(_ref(Error))}
    return {
        "post": {
            "summary": summary,
            "description": description,
            "requestBody": {"required": True, "content": _json(_ref(request))},
            "responses": responses,
        }
    }


def _paths(options: ToolOptions, keyed: bool) -> JSONSchema:
    search = search_body(options)
    return {
        PATHS["search"]: _operation(
            "Search the web (the web_search tool)",
            "Several queries run concurrently, their sources merged by rank and deduplicated "
            "by URL; results are cached like the tool's.",
            search,
            _ref(SearchResult),
            _SEARCH_STATUSES,
            keyed,
        ),
        PATHS["fetch"]: _operation(
            "Read one page (the web_fetch tool)",
            "Safe fetch (SSRF guard, size and time limits, cache), returned in pieces of "
            f"{options.fetch_max_chars} characters (WEBREACH_FETCH_MAX_CHARS) from `start`.",
            FetchRequest,
            _ref(FetchResult),
            _FETCH_STATUSES,
            keyed,
        ),
        PATHS["openwebui_search"]: _operation(
            "Open WebUI external web search",
            "Open WebUI's `external` web search engine (EXTERNAL_WEB_SEARCH_URL; its body sent to "
            "/v1/search is refused with a pointer here). A `count` larger than the server's "
            "WEBREACH_SEARCH_MAX_RESULTS is cut to it.",
            OpenWebUISearchRequest,
            {"type": "array", "items": _ref(OpenWebUISearchResult)},
            _SEARCH_STATUSES,
            keyed,
        ),
        PATHS["openwebui_loader"]: _operation(
            "Open WebUI external web loader",
            "Open WebUI's `external` web loader (EXTERNAL_WEB_LOADER_URL): each page whole, as "
            "Markdown. Pages that cannot be read, or that answered HTTP 400 or more, are left "
            "out; when none can, the first failure is the error.",
            OpenWebUILoaderRequest,
            {"type": "array", "items": _ref(OpenWebUIDocument)},
            _FETCH_STATUSES,
            keyed,
        ),
    }


def _schemas(options: ToolOptions) -> JSONSchema:
    models: list[tuple[type[BaseModel], Mode]] = [
        (search_body(options), "validation"),
        (FetchRequest, "validation"),
        (OpenWebUISearchRequest, "validation"),
        (OpenWebUILoaderRequest, "validation"),
        (SearchResult, "serialization"),
        (FetchResult, "serialization"),
        (OpenWebUISearchResult, "serialization"),
        (OpenWebUIDocument, "serialization"),
        (Error, "serialization"),
    ]
    _, definitions = models_json_schema(models, ref_template="#/components/schemas/{model}")
    schemas: JSONSchema = definitions["$defs"]
    return schemas


@lru_cache(maxsize=8)
def openapi_document(options: ToolOptions, *, keyed: bool) -> JSONSchema:
    """The document for a server with these bounds; ``keyed`` (it has inbound keys) adds the
    security schemes and a 401 to every operation. Built once per server: it is only read."""
    components: JSONSchema = {"schemas": _schemas(options)}
    document: JSONSchema = {
        "openapi": "3.1.0",
        "info": {
            "title": "webreach search and fetch",
            "version": "1",
            "description": "The model-facing web_search and web_fetch tools over HTTP, with the "
            "server's keys, limits, SSRF guard and cache; and the two shapes Open WebUI calls "
            "for an external web search engine and web loader.",
        },
        "paths": _paths(options, keyed),
        "components": components,
    }
    if keyed:
        components["securitySchemes"] = {
            "bearer": {"type": "http", "scheme": "bearer"},
            "apiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"},
        }
        document["security"] = [{"bearer": []}, {"apiKey": []}]
    return document
