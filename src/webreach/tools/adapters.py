"""The tool set in the shapes agent frameworks take, and one entry point that runs a model's call.

Every shape is generated from the same :class:`ToolDefinition`s, so names, descriptions and
schemas are never written twice. All shapes are plain dicts: no SDK is imported here.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..seam import WebRuntime
from .base import INVALID_ARGUMENTS, ToolDefinition, ToolError, ToolOptions, ToolResult
from .prompt import web_tools_prompt
from .toolset import web_tools

__all__ = [
    "WebToolkit",
    "anthropic_tools",
    "openai_chat_tools",
    "openai_responses_tools",
    "parse_arguments",
    "tool_error_text",
]


def openai_chat_tools(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """OpenAI Chat Completions ``tools``: ``{"type": "function", "function": {…}}``."""
    return [
        {
            "type": "function",
            "function": {
                "name": d.name,
                "description": d.description,
                "parameters": copy.deepcopy(d.input_schema),
            },
        }
        for d in definitions
    ]


def openai_responses_tools(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """OpenAI Responses ``tools``; not strict: strict mode would make optional fields required."""
    return [
        {
            "type": "function",
            "name": d.name,
            "description": d.description,
            "parameters": copy.deepcopy(d.input_schema),
            "strict": False,
        }
        for d in definitions
    ]


def anthropic_tools(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """Anthropic Messages ``tools``: ``{"name", "description", "input_schema"}``."""
    return [
        {
            "name": d.name,
            "description": d.description,
            "input_schema": copy.deepcopy(d.input_schema),
        }
        for d in definitions
    ]


def parse_arguments(arguments: Mapping[str, Any] | str | bytes | None) -> Mapping[str, Any]:
    """Arguments as a model emits them: a JSON string (OpenAI) or an already decoded object.

    An empty string or ``None`` means no arguments; the tool then says what is missing.
    """
    if arguments is None:
        return {}
    if isinstance(arguments, Mapping):
        return arguments
    text = arguments.decode("utf-8", "replace") if isinstance(arguments, bytes) else arguments
    if not text.strip():
        return {}
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError as error:
        raise ToolError(
            INVALID_ARGUMENTS,
            f"arguments are not valid JSON ({error.msg} at position {error.pos}); "
            'send a JSON object such as {"queries": ["…"]}',
        ) from None
    if not isinstance(decoded, Mapping):
        raise ToolError(
            INVALID_ARGUMENTS, f"arguments must be a JSON object, not {type(decoded).__name__}"
        )
    return decoded


def tool_error_text(name: str, error: ToolError) -> str:
    """What a model reads when a call failed: the code first, so it can decide what to do."""
    return f"Error: {name} failed with {error.code}: {error.message}"


class WebToolkit:
    """The enabled web tools for an agent loop: schemas for each SDK and ``execute()``.

    The caller owns ``runtime`` (open it with ``async with`` and keep it open while executing).
    """

    def __init__(self, runtime: WebRuntime, options: ToolOptions | None = None) -> None:
        self.options = options or ToolOptions()
        self.definitions: tuple[ToolDefinition, ...] = tuple(web_tools(runtime, self.options))
        self._by_name = {d.name: d for d in self.definitions}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def get(self, name: str) -> ToolDefinition | None:
        return self._by_name.get(name)

    def openai_chat_tools(self) -> list[dict[str, Any]]:
        return openai_chat_tools(self.definitions)

    def openai_responses_tools(self) -> list[dict[str, Any]]:
        return openai_responses_tools(self.definitions)

    def anthropic_tools(self) -> list[dict[str, Any]]:
        return anthropic_tools(self.definitions)

    def prompt(self) -> str:
        """The system-prompt section for these tools (empty when none is enabled)."""
        return web_tools_prompt(self.options)

    async def call(
        self, name: str, arguments: Mapping[str, Any] | str | bytes | None
    ) -> ToolResult:
        """Run one call and return text and structured data; failures raise :class:`ToolError`."""
        definition = self._by_name.get(name)
        if definition is None:
            raise ToolError(INVALID_ARGUMENTS, _unknown_tool(name, self.names))
        return await definition.execute(parse_arguments(arguments))

    async def execute(
        self,
        name: str,
        arguments: Mapping[str, Any] | str | bytes | None,
        *,
        raise_errors: bool = False,
    ) -> str:
        """The text result of a model's tool call.

        A failed call returns an error text naming the code, which frameworks feed back to the
        model so it can correct itself; with ``raise_errors`` the :class:`ToolError` is raised.
        """
        try:
            result = await self.call(name, arguments)
        except ToolError as error:
            if raise_errors:
                raise
            return tool_error_text(name, error)
        return result.text


def _unknown_tool(name: str, known: Sequence[str]) -> str:
    offered = ", ".join(known) if known else "none (all web tools are disabled)"
    return f"unknown tool {name!r}; the web tools offered are: {offered}"
