"""What every web call the server gives the model shares: its definition and its arguments."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from ....tools import ToolError
from ..turn.shape import JSON

__all__ = ["ModelTool", "call_id", "function_tool", "json_object", "required_string"]


@dataclass(frozen=True, slots=True)
class ModelTool:
    """A function tool the server itself gives the upstream model."""

    name: str
    definition: JSON


def function_tool(name: str, description: str, parameters: JSON) -> ModelTool:
    return ModelTool(
        name,
        {
            "type": "function",
            "function": {"name": name, "description": description, "parameters": parameters},
        },
    )


def call_id(prefix: str, step: int) -> str:
    return f"srvtoolu_{prefix}_{step:02d}_{uuid.uuid4().hex}"


def json_object(raw: str) -> JSON:
    """A call's arguments; raises ``ToolError`` (``INVALID_ARGUMENTS``) unless a JSON object."""
    try:
        arguments = json.loads(raw or "{}")
    except ValueError:
        raise ToolError("INVALID_ARGUMENTS", "arguments are not valid JSON") from None
    if not isinstance(arguments, dict):
        raise ToolError("INVALID_ARGUMENTS", "arguments must be an object")
    return arguments


def required_string(arguments: JSON, name: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ToolError("INVALID_ARGUMENTS", f"`{name}` is required")
    return value.strip()
