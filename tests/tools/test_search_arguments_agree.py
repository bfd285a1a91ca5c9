"""``web_search``'s optional arguments are declared once (``tools.search.inputs.OPTIONAL``):
what the model is shown, what a call is checked against, and what ``/v1/search`` publishes
for the same argument all say the same type, bounds and choices."""

from __future__ import annotations

from typing import Any

import pytest

from webreach.server.web_api.bodies import FetchRequest, search_body
from webreach.tools import ToolOptions
from webreach.tools.fetch import fetch_schema
from webreach.tools.search.inputs import OPTIONAL, invalid_arguments, parse_search_call
from webreach.tools.search.inputs import search_schema as tool_schema

RULES = ("type", "minimum", "maximum", "enum", "minLength", "maxLength")
SHARED = ("recency", "num_search_results", "max_tokens", "temperature")
"""The arguments ``/v1/search`` takes by the same name (its ``max_results`` is ``limit``)."""


def _rules(schema: dict[str, Any]) -> dict[str, Any]:
    given = next((s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"), schema)
    return {key: given[key] for key in RULES if key in given}


def test_the_model_sees_each_argument_as_declared() -> None:
    shown = tool_schema(4, 8)["properties"]
    assert list(shown) == ["queries", *(argument.name for argument in OPTIONAL)]
    for argument in OPTIONAL:
        assert shown[argument.name]["description"] == argument.description


@pytest.mark.parametrize("name", SHARED)
def test_v1_search_publishes_the_same_rules(name: str) -> None:
    published = search_body(ToolOptions()).model_json_schema()["properties"][name]
    assert _rules(published) == _rules(tool_schema(4)["properties"][name])


@pytest.mark.parametrize(
    "argument",
    [argument for argument in OPTIONAL if argument.maximum is not None],
    ids=lambda argument: argument.name,
)
def test_a_call_past_a_bound_is_refused_naming_the_argument(argument: Any) -> None:
    with pytest.raises(type(invalid_arguments(""))) as caught:
        parse_search_call({"queries": ["q"], argument.name: argument.maximum + 1}, 4)
    assert caught.value.message.startswith(f"`{argument.name}` must be")


@pytest.mark.parametrize("name", ["url", "start", "max_age"])
def test_v1_fetch_publishes_web_fetchs_rules(name: str) -> None:
    published = FetchRequest.model_json_schema()["properties"][name]
    assert _rules(published) == _rules(fetch_schema()["properties"][name])
