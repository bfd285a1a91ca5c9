"""The declared field types of ``server.core.wire.fields``: pydantic's strict types, refused in the
server's words at the field itself, whatever pydantic says underneath."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import StrictStr

from webreach.server.core.turn.errors import RequestError
from webreach.server.core.wire.fields import (
    Boolean,
    JsonObject,
    ModelName,
    Number,
    PositiveInt,
    Request,
    StringList,
    checked,
    validate,
    when_missing,
)


class Shape(Request):
    model: ModelName = when_missing()
    count: PositiveInt | None = None
    ratio: Number | None = None
    flag: Boolean | None = None
    names: StringList | None = None
    extra: JsonObject | None = None


@pytest.mark.parametrize(
    ("body", "refusal"),
    [
        ({}, "model: Field required"),
        ({"model": None}, "model: Field required"),
        ({"model": ""}, "model: must be a non-empty string"),
        ({"model": "m", "count": "5"}, "count: must be a positive integer"),
        ({"model": "m", "count": True}, "count: must be a positive integer"),
        ({"model": "m", "count": 2.0}, "count: must be a positive integer"),
        ({"model": "m", "count": 0}, "count: must be a positive integer"),
        ({"model": "m", "ratio": False}, "ratio: must be a number"),
        ({"model": "m", "flag": "yes"}, "flag: must be a boolean"),
        ({"model": "m", "names": ["a", 1]}, "names: must be a list of strings"),
        ({"model": "m", "names": "a"}, "names: must be a list of strings"),
        ({"model": "m", "extra": []}, "extra: must be an object"),
        ([], "body: must be an object"),
    ],
)
def test_a_refusal_names_the_field_in_the_servers_words(body: object, refusal: str) -> None:
    with pytest.raises(RequestError) as refused:
        validate(Shape, body)
    assert str(refused.value) == refusal


def test_values_are_taken_exactly_as_sent() -> None:
    shape = validate(Shape, {"model": "m", "count": 3, "ratio": 1, "flag": False, "names": []})
    assert (shape.count, shape.ratio, shape.flag, shape.names) == (3, 1, False, [])
    assert type(shape.ratio) is int


class Branches(Request):
    """Unions whose branches pydantic names in an error's location (``function-before[…]``,
    ``list[str]``): no place in the request, so never in a refusal."""

    words: Annotated[list[StrictStr], checked(bool, "must be a list of words")] | None = None
    either: list[StrictStr] | Annotated[StrictStr, checked(bool, "must be a word")] | None = None
    shapes: list[Shape] | None = None


@pytest.mark.parametrize(
    ("body", "refusal"),
    [
        ({"words": []}, "words: must be a list of words"),
        ({"words": ["a", 1]}, "words.1: Input should be a valid string"),
        ({"either": 5}, "either: Input should be a valid list"),
        # An object where the field wants a list: the branch tried is not a field it lacks.
        ({"words": {"a": 1}}, "words: Input should be a valid list"),
        ({"either": {"a": 1}}, "either: Input should be a valid list"),
        ({"shapes": [{"model": "m"}, {"count": 1}]}, "shapes.1.model: Field required"),
        ({"shapes": [{"model": "m", "count": 0}]}, "shapes.0.count: must be a positive integer"),
    ],
)
def test_a_refusal_names_no_branch_of_a_union(body: object, refusal: str) -> None:
    with pytest.raises(RequestError) as refused:
        validate(Branches, body)
    assert str(refused.value) == refusal
