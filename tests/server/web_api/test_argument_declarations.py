"""Each argument ``web_search`` shares with ``/v1/search`` (and ``web_fetch`` with ``/v1/fetch``)
is declared once, in the tool's module: the schema a model is sent, the ``inputSchema`` an MCP
client lists and the body the OpenAPI document publishes carry the same bounds and the same
description, and the body refuses a value past a bound with the bound the declaration gives.

The MCP list comes through the official SDK's client on its memory transport; each OpenAPI body
is the one its path's ``requestBody`` points to.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.client import Client

from webreach.seam import WebRuntime
from webreach.server.core.turn.errors import RequestError
from webreach.server.web_api.bodies import search_call
from webreach.server.web_api.openapi import PATHS, openapi_document
from webreach.tools import ToolOptions
from webreach.tools.fetch import WEB_FETCH, fetch_schema
from webreach.tools.mcp.server import create_server
from webreach.tools.search.inputs import QUERIES, TUNING, search_schema
from webreach.tools.search.tool import WEB_SEARCH

OPTIONS = ToolOptions(search_max_queries=3, search_max_results=7)
SHARED = {
    WEB_SEARCH: ("queries", "recency", "num_search_results", "max_tokens", "temperature"),
    WEB_FETCH: ("url", "start", "max_age"),
}
"""By the same name in all three; ``/v1/search``'s ``max_results`` is the tool's ``limit``."""
PATHS_OF = {WEB_SEARCH: PATHS["search"], WEB_FETCH: PATHS["fetch"]}
HTTP_NAMES = {"`limit`": "`max_results`"}
RULES = ("type", "enum", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems")


def _rules(schema: dict[str, Any]) -> dict[str, Any]:
    """What a property allows, without pydantic's ``anyOf`` with null (null is absent)."""
    given = next((s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"), schema)
    rules = {key: given[key] for key in RULES if key in given}
    if "items" in given:
        rules["items.minLength"] = given["items"].get("minLength")
    rules["description"] = given.get("description", schema.get("description"))
    if schema.get("default") is not None:  # a null default is absent, as the tools have it
        rules["default"] = schema["default"]
    return rules


def _as_http(rules: dict[str, Any]) -> dict[str, Any]:
    said: str = rules["description"]
    for tools_name, http_name in HTTP_NAMES.items():
        said = said.replace(tools_name, http_name)
    return {**rules, "description": said}


async def _mcp_input_schemas() -> dict[str, dict[str, Any]]:
    async with Client(create_server(WebRuntime(), OPTIONS), mode="legacy") as client:
        return {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}


def _published_body(tool: str = WEB_SEARCH) -> dict[str, Any]:
    document = openapi_document(OPTIONS, keyed=False)
    body = document["paths"][PATHS_OF[tool]]["post"]["requestBody"]
    ref: str = body["content"]["application/json"]["schema"]["$ref"]
    schema: dict[str, Any] = document["components"]["schemas"][ref.rsplit("/", 1)[-1]]
    return schema["properties"]


async def test_the_model_mcp_and_openapi_say_the_same_for_each_shared_argument() -> None:
    shown = {
        WEB_SEARCH: search_schema(OPTIONS.search_max_queries, OPTIONS.search_max_results),
        WEB_FETCH: fetch_schema(),
    }
    listed = await _mcp_input_schemas()
    for tool, names in SHARED.items():
        published = _published_body(tool)
        for name in names:
            told = _rules(shown[tool]["properties"][name])
            assert told["description"], name
            assert _rules(listed[tool]["properties"][name]) == told, name
            assert _rules(published[name]) == _as_http(told), name


def test_queries_bounds_follow_the_deployment() -> None:
    published = _published_body()["queries"]
    assert published["minItems"] == QUERIES.min_items
    assert published["maxItems"] == OPTIONS.search_max_queries
    assert published["description"] == QUERIES.describe(OPTIONS.search_max_queries)


@pytest.mark.parametrize("argument", TUNING, ids=lambda argument: argument.name)
def test_v1_search_refuses_past_a_bound_with_the_declared_bound(argument: Any) -> None:
    for past in (argument.minimum - 1, argument.maximum + 1):
        with pytest.raises(RequestError) as caught:
            search_call({"queries": ["q"], argument.name: past}, OPTIONS)
        assert caught.value.param == argument.name
        message = str(caught.value)
        assert message.startswith(f"{argument.name}: must be"), message
        if past > argument.maximum:
            assert str(argument.maximum) in message, message
        else:
            assert str(argument.minimum) in message or "positive" in message, message
