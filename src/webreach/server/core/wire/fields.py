"""Declared request shapes: pydantic's strict types, refusals in the server's words, one validator.

Each protocol declares its request as a pydantic model whose fields use these types, so the
declaration is what gets checked, and a refusal names the field the way the server always has
(``max_tokens: must be a positive integer``, ``messages.0.role: …``, ``model: Field
required``). Types are pydantic's strict ones (no ``"1"`` → ``1``): ``stream: "yes"`` must not
start a stream, nor ``max_tokens: -5`` reach a model.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)

from ..turn.errors import RequestError
from ..turn.shape import JSON

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
    "worded",
]

M = TypeVar("M", bound=BaseModel)

Check = tuple[Callable[[object], bool], str]

_WORDING = {"missing": "Field required"}
"""pydantic's error types the server words itself, so a new pydantic's wording never reaches
a client."""
_FIELD_NAME = re.compile(r"[a-z][a-z0-9_]*")
"""How the fields of the request bodies are named; pydantic's names for the branches of a union
it tried have brackets, dashes or capitals, but for the plain types below."""
_BRANCH_NAMES = frozenset({"str", "int", "float", "bool", "list", "dict", "none"})


def bad(path: str, problem: str) -> RequestError:
    return RequestError(f"{path}: {problem}", param=path.split(".", 1)[0])


def worded(problem: str) -> WrapValidator:
    """Every refusal of the type before it, whatever pydantic's error, as ``problem`` (the
    server's words) at the field itself: a list of strings with a number in it is refused as a
    whole, not at the item."""

    def word(value: object, handler: ValidatorFunctionWrapHandler) -> object:
        try:
            return handler(value)
        except ValidationError:
            raise ValueError(problem) from None

    return WrapValidator(word)


def checked(test: Callable[[object], bool], problem: str, *more: Check) -> BeforeValidator:
    """Checks pydantic has no type for (a value out of a list, say), in the server's own words,
    run in order on the value exactly as sent; the first that fails names the problem."""
    tests = ((test, problem), *more)

    def check(value: object) -> object:
        for passes, problem in tests:
            if not passes(value):
                raise ValueError(problem)
        return value

    return BeforeValidator(check)


_StrictObject = Annotated[JSON, Strict()]

PositiveInt = Annotated[StrictInt, Field(gt=0), worded("must be a positive integer")]
NonNegativeInt = Annotated[StrictInt, Field(ge=0), worded("must be a non-negative integer")]
Integer = Annotated[StrictInt, worded("must be an integer")]
Number = Annotated[StrictInt | StrictFloat, worded("must be a number")]
Boolean = Annotated[StrictBool, worded("must be a boolean")]
String = Annotated[StrictStr, worded("must be a string")]
NonEmptyString = Annotated[StrictStr, Field(min_length=1), worded("must be a non-empty string")]
ModelName = Annotated[NonEmptyString, checked(lambda v: v is not None, "Field required")]
"""``model``: a null one counts as missing."""
StringList = Annotated[list[StrictStr], Strict(), worded("must be a list of strings")]
JsonObject = Annotated[_StrictObject, worded("must be an object")]
Objects = Annotated[list[_StrictObject], Strict(), worded("must be an array of objects")]
Array = Annotated[list[object], Strict(), worded("must be an array")]
StringOrObject = Annotated[StrictStr | _StrictObject, worded("must be a string or an object")]
Stop = Annotated[
    StrictStr | Annotated[list[StrictStr], Strict()],
    worded("must be a string or an array of strings"),
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


def _path_through(value: object, loc: tuple[int | str, ...]) -> list[str]:
    """The fields and indices of ``loc`` that ``value`` has. pydantic also names, in the
    location, the branch of a union it tried (``function-after[…]``, ``str``, a model's name),
    which is no place in the request: a part the value does not have is such a name, unless it
    is the last and named as a field is (the field that is missing)."""
    parts: list[str] = []
    for place, part in enumerate(loc):
        last = place == len(loc) - 1
        if (
            isinstance(value, dict)
            and isinstance(part, str)
            and (part in value or (last and _a_field_name(part)))
        ):
            value = value.get(part)
            parts.append(part)
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            value = value[part]
            parts.append(str(part))
    return parts


def _a_field_name(part: str) -> bool:
    return _FIELD_NAME.fullmatch(part) is not None and part not in _BRANCH_NAMES


def validate(shape: type[M], value: object, path: str = "") -> M:
    """``value`` as ``shape``, or the first refusal as a :class:`RequestError` naming its path
    (below ``path`` when the value is a part of the request)."""
    try:
        return shape.model_validate(value)
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        parts = [path] if path else []
        parts += _path_through(value, first["loc"])
        # worded() and checked() raise ValueError; its text is the problem, in the server's words.
        cause = first.get("ctx", {}).get("error")
        if isinstance(cause, ValueError):
            problem = str(cause)
        else:
            problem = _WORDING.get(first["type"], first["msg"])
        raise bad(".".join(parts) or "body", problem) from None
