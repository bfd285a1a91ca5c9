"""Responses ``text.format`` as the upstream's Chat ``response_format``.

Responses spells a schema flat (``{"type": "json_schema", "name", "schema", "strict"}``), Chat
nests it under ``json_schema``; the response echoes the format exactly as it was sent.
"""

from __future__ import annotations

from ..core.turn.errors import RequestError
from ..core.turn.shape import JSON
from .shapes_in import TextParam

__all__ = ["answer_format"]

_PARAM = "text.format"
_SCHEMA_FIELDS = ("name", "schema", "description", "strict")


def answer_format(text: TextParam | None) -> JSON | None:
    """The Chat ``response_format`` of ``text.format``; None for plain text (or none given)."""
    if text is None or text.format is None:
        return None
    shape = text.format
    if not isinstance(shape, dict):
        raise RequestError(f"{_PARAM}: must be an object", param=_PARAM)
    kind = shape.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return {"type": "json_object"}
    if kind != "json_schema":
        raise RequestError(
            f"{_PARAM}.type: must be `text`, `json_schema` or `json_object`", param=_PARAM
        )
    name, schema = shape.get("name"), shape.get("schema")
    if not isinstance(name, str) or not name:
        raise RequestError(f"{_PARAM}.name: a `json_schema` format needs a name", param=_PARAM)
    if not isinstance(schema, dict):
        raise RequestError(f"{_PARAM}.schema: must be an object", param=_PARAM)
    strict = shape.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise RequestError(f"{_PARAM}.strict: must be a boolean", param=_PARAM)
    description = shape.get("description")
    if description is not None and not isinstance(description, str):
        raise RequestError(f"{_PARAM}.description: must be a string", param=_PARAM)
    nested = {key: shape[key] for key in _SCHEMA_FIELDS if shape.get(key) is not None}
    return {"type": "json_schema", "json_schema": nested}
