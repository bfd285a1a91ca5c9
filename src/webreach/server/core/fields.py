"""Declared request shapes: field types that check themselves, and one validator.

Each protocol declares its request as a pydantic model whose fields use these types, so the
declaration is what gets checked, and a refusal names the field the way the server always has
(``max_tokens: must be a positive integer``, ``messages.0.role: …``, ``model: Field
required``). Types are checked exactly (no ``"1"`` → ``1``): ``stream: "yes"`` must not start
a stream, nor ``max_tokens: -5`` reach a model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from .errors import RequestError
from .turn import JSON

__all__ = [
    "JSON",
    "Boolean",
    "JsonObject",
    "ModelName",
    "NonEmptyString",
    "Number",
    "Objects",
    "PositiveInt",
    "Request",
    "String",
    "StringList",
    "bad",
    "checked",
    "validate",
    "when_missing",
]

M = TypeVar("M", bound=BaseModel)

Check = tuple[Callable[[object], bool], str]


def bad(path: str, problem: str) -> RequestError:
    return RequestError(f"{path}: {problem}", param=path.split(".", 1)[0])


def checked(test: Callable[[object], bool], problem: str, *more: Check) -> BeforeValidator:
    """Field checks in the server's own words, run in order on the value exactly as sent;
    the first that fails names the problem."""
    tests = ((test, problem), *more)

    def check(value: object) -> object:
        for passes, problem in tests:
            if not passes(value):
                raise ValueError(problem)
        return value

    return BeforeValidator(check)


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


PositiveInt = Annotated[
    int, checked(lambda v: _integer(v) and v >= 1, "must be a positive integer")
]
NonNegativeInt = Annotated[
    int, checked(lambda v: _integer(v) and v >= 0, "must be a non-negative integer")
]
Integer = Annotated[int, checked(_integer, "must be an integer")]
Number = Annotated[
    int | float,
    checked(lambda v: isinstance(v, int | float) and not isinstance(v, bool), "must be a number"),
]
Boolean = Annotated[bool, checked(lambda v: isinstance(v, bool), "must be a boolean")]
String = Annotated[str, checked(lambda v: isinstance(v, str), "must be a string")]
NonEmptyString = Annotated[
    str, checked(lambda v: isinstance(v, str) and bool(v), "must be a non-empty string")
]
ModelName = Annotated[
    str,
    checked(
        lambda v: v is not None,
        "Field required",
        (lambda v: isinstance(v, str) and bool(v), "must be a non-empty string"),
    ),
]
"""``model``: a null one counts as missing."""
StringList = Annotated[list[str], checked(_strings, "must be a list of strings")]
JsonObject = Annotated[JSON, checked(lambda v: isinstance(v, dict), "must be an object")]
Objects = Annotated[
    list[JSON],
    checked(
        lambda v: isinstance(v, list) and all(isinstance(item, dict) for item in v),
        "must be an array of objects",
    ),
]
Array = Annotated[list[object], checked(lambda v: isinstance(v, list), "must be an array")]
StringOrObject = Annotated[
    str | JSON, checked(lambda v: isinstance(v, str | dict), "must be a string or an object")
]
Stop = Annotated[
    str | list[str],
    checked(lambda v: isinstance(v, str) or _strings(v), "must be a string or an array of strings"),
]


def when_missing() -> Any:
    """A field's default that is checked like a sent value, so a missing field is refused with
    the field's own words (``role: must be `user` or `assistant```) rather than pydantic's."""
    return Field(default=None, validate_default=True)


class Request(BaseModel):
    """A request body or a part of one: unknown fields are kept (``model_extra``), values are
    never coerced, and a value that is not an object is refused with ``not_object``."""

    model_config = ConfigDict(extra="allow", frozen=True)
    not_object: ClassVar[str] = "must be an object"

    @model_validator(mode="before")
    @classmethod
    def _an_object(cls, value: object) -> object:
        if not isinstance(value, dict):
            raise ValueError(cls.not_object)
        return value


def validate(shape: type[M], value: object, path: str = "") -> M:
    """``value`` as ``shape``, or the first refusal as a :class:`RequestError` naming its path
    (below ``path`` when the value is a part of the request)."""
    try:
        return shape.model_validate(value)
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        parts = [path] if path else []
        parts += [str(part) for part in first["loc"]]
        # Our own checks raise ValueError; its text is the problem, in the server's words.
        cause = first.get("ctx", {}).get("error")
        problem = str(cause) if isinstance(cause, ValueError) else first["msg"]
        raise bad(".".join(parts) or "body", problem) from None
