"""What every model-facing tool is made of, and how it fails."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..seam import InvalidValueError, WebError, WebErrorCode

__all__ = [
    "INVALID_ARGUMENTS",
    "StructuredResult",
    "ToolDefinition",
    "ToolError",
    "ToolOptions",
    "ToolResult",
]

INVALID_ARGUMENTS = WebErrorCode.INVALID_ARGUMENTS


class StructuredResult(Protocol):
    def to_json(self) -> dict[str, Any]: ...


class ToolError(WebError):
    """A tool call that produced no result: a :class:`WebError` whose code is
    ``INVALID_ARGUMENTS`` or the ``WEB_…`` code of the failure behind it."""

    @classmethod
    def from_web_error(cls, error: WebError) -> ToolError:
        return cls(
            error.code,
            error.message,
            provider=error.provider,
            status=error.status,
            retry_after=error.retry_after,
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": self.code.value, "message": self.message}
        if self.retry_after is not None:
            data["retry_after"] = self.retry_after
        return {"error": data}


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
            value = getattr(self, name)
            if value < 1:
                raise InvalidValueError(
                    name, f"ToolOptions.{name} must be a positive integer, not {value!r}"
                )
