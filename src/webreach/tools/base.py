"""What every model-facing tool is made of, and how it fails."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..seam import WebError

__all__ = [
    "INVALID_ARGUMENTS",
    "StructuredResult",
    "ToolDefinition",
    "ToolError",
    "ToolOptions",
    "ToolResult",
]

INVALID_ARGUMENTS = "INVALID_ARGUMENTS"


class StructuredResult(Protocol):
    def to_json(self) -> dict[str, Any]: ...


class ToolError(Exception):
    """A tool call that produced no result; ``code`` is ``INVALID_ARGUMENTS`` or a ``WEB_…`` one."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message

    @classmethod
    def from_web_error(cls, error: WebError) -> ToolError:
        return cls(error.code.value, error.message)

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The text a model reads, with the structured data beside it for programs and UIs."""

    text: str
    data: StructuredResult


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    name: str
    description: str
    input_schema: dict[str, Any]
    execute: Callable[[Mapping[str, Any]], Awaitable[ToolResult]]


@dataclass(frozen=True, slots=True)
class ToolOptions:
    """Deployment-owned bounds of the tools, filled by ``Settings.tool_options()``."""

    search_enabled: bool = True
    fetch_enabled: bool = True
    search_max_queries: int = 4
    search_max_results: int = 8
    fetch_max_chars: int = 40_000

    def __post_init__(self) -> None:
        for name in ("search_max_queries", "search_max_results", "fetch_max_chars"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive integer")
