"""What every model-facing tool is made of, and how it fails."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args

from ..defaults import (
    FETCH_MAX_CHARS,
    SEARCH_CONTEXT_SIZE,
    SEARCH_MAX_QUERIES,
    SEARCH_MAX_RESULTS,
    SEARCH_PAGE_TIMEOUT,
)
from ..seam import (
    InvalidValueError,
    Recency,
    SearchRequest,
    WebError,
    WebErrorCode,
    temperature_problem,
)

ContextSize = Literal["low", "medium", "high"]
"""How much of the found pages a search gives the model (``WEBREACH_SEARCH_CONTEXT_SIZE``)."""
CONTEXT_SIZES: tuple[ContextSize, ...] = get_args(ContextSize)
RECENCIES: tuple[Recency, ...] = get_args(Recency)
"""From the narrowest to the widest."""

__all__ = [
    "CONTEXT_SIZES",
    "INVALID_ARGUMENTS",
    "MAX_NUM_SEARCH_RESULTS",
    "MAX_SEARCH_TOKENS",
    "RECENCIES",
    "Argument",
    "ContextSize",
    "SearchFilters",
    "SearchTuning",
    "StructuredResult",
    "ToolDefinition",
    "ToolError",
    "ToolOptions",
    "ToolResult",
    "json_type",
]

INVALID_ARGUMENTS = WebErrorCode.INVALID_ARGUMENTS
MAX_NUM_SEARCH_RESULTS = 50
"""The most results a call may ask a provider to look at (``num_search_results``)."""
MAX_SEARCH_TOKENS = 16_384
"""The longest answer a call may ask a model-backed provider for (``max_tokens``): the model
reads at most a few thousand characters of it anyway."""


@dataclass(frozen=True, slots=True)
class Argument:
    """One argument of a tool, declared once: the tool's schema for the model and the field an
    HTTP body publishes and checks for it (``server.web_api.body_fields``) read its type, bounds
    and description from here."""

    name: str
    type: Literal["integer", "number", "string"]
    description: str
    """As the model reads it; one naming `limit` reads, from :meth:`describe`, the name another
    caller knows for it (``max_results`` over HTTP)."""
    minimum: float | None = None
    maximum: float | None = None
    """None: no bound here (``limit``'s is the deployment's, given to the tool's schema)."""
    enum: tuple[str, ...] = ()
    min_length: int | None = None
    max_length: int | None = None
    default: int | None = None

    def describe(self, limit: str = "limit") -> str:
        return self.description.replace("`limit`", f"`{limit}`")

    def rules(self, maximum: float | None = None) -> dict[str, Any]:
        """Its JSON Schema bounds, in the order the tools' schemas have always listed them (the
        bytes every request to a model carries); ``maximum`` stands for the deployment's."""
        named = {
            "enum": list(self.enum) or None,
            "minLength": self.min_length,
            "maxLength": self.max_length,
            "minimum": self.minimum,
            "maximum": self.maximum if maximum is None else maximum,
            "default": self.default,
        }
        return {key: value for key, value in named.items() if value is not None}


def json_type(value: object) -> str:
    """A value's JSON type as an error message names it ("a number", "null")."""
    match value:
        case None:
            return "null"
        case bool():
            return "a boolean"
        case int() | float():
            return "a number"
        case str():
            return "a string"
        case Mapping():
            return "an object"
        case list() | tuple():
            return "an array"
        case _:
            return type(value).__name__


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
    search_max_queries: int = SEARCH_MAX_QUERIES
    search_max_results: int = SEARCH_MAX_RESULTS
    fetch_max_chars: int = FETCH_MAX_CHARS
    search_context_size: ContextSize = SEARCH_CONTEXT_SIZE
    """``low``: sources with snippets; ``medium`` / ``high``: the top sources' pages are read too
    and their passages most relevant to the queries added, within a budget for the output."""
    search_page_timeout: float = SEARCH_PAGE_TIMEOUT
    """Seconds the pages of ``medium`` / ``high`` may take, all together; a slower page keeps
    its snippet."""

    def __post_init__(self) -> None:
        for name in ("search_max_queries", "search_max_results", "fetch_max_chars"):
            value = getattr(self, name)
            if value < 1:
                raise InvalidValueError(
                    name, f"ToolOptions.{name} must be a positive integer, not {value!r}"
                )
        if self.search_context_size not in CONTEXT_SIZES:
            raise InvalidValueError(
                "search_context_size",
                "ToolOptions.search_context_size must be low, medium or high, "
                f"not {self.search_context_size!r}",
            )
        if not self.search_page_timeout > 0:
            raise InvalidValueError(
                "search_page_timeout",
                "ToolOptions.search_page_timeout must be positive, "
                f"not {self.search_page_timeout!r}",
            )


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """The filters one ``web_search`` call applies to each of its queries (the model's
    ``recency``, a request's domains and location); checked when a query's request is made."""

    recency: Recency | None = None
    include_domains: tuple[str, ...] = ()
    exclude_domains: tuple[str, ...] = ()
    country: str | None = None
    language: str | None = None

    def request(
        self, query: str, max_results: int | None = None, tuning: SearchTuning | None = None
    ) -> SearchRequest:
        tuning = tuning or SearchTuning()
        return SearchRequest(
            query,
            max_results,
            recency=self.recency,
            include_domains=self.include_domains,
            exclude_domains=self.exclude_domains,
            country=self.country,
            language=self.language,
            num_search_results=tuning.num_search_results,
            max_tokens=tuning.max_tokens,
            temperature=tuning.temperature,
        )

    def narrowed(self, recency: Recency | None) -> SearchFilters:
        """These filters with ``recency`` as well: the narrower of it and the one set here (a
        request's recency bounds the model's)."""
        if recency is None or (
            self.recency is not None and RECENCIES.index(self.recency) <= RECENCIES.index(recency)
        ):
            return self
        return dataclasses.replace(self, recency=recency)

    def check(self) -> SearchFilters:
        """These filters normalised as a request holds them (domains as hosts, ``DE``, ``de``),
        or an :class:`InvalidValueError` naming the first bad one (``field``) whose message is
        the problem alone (``must be an ISO 3166-1 alpha-2 code like DE, not 'Germany'``), for
        the caller to put after its own name for the field."""
        try:
            request = self.request("-")
        except InvalidValueError as error:
            problem = str(error).removeprefix(f"SearchRequest.{error.field}").lstrip(": ")
            raise InvalidValueError(error.field, problem) from None
        return SearchFilters(
            request.recency,
            request.include_domains,
            request.exclude_domains,
            request.country,
            request.language,
        )


@dataclass(frozen=True, slots=True)
class SearchTuning:
    """How one ``web_search`` call asks its provider to work, beside the filters: how many
    results to look at, and (for a provider a model answers) how long and how freely to write.

    Bounded here, tighter than :class:`SearchRequest`, because a model or a caller chooses
    them and each costs the deployment: an :class:`InvalidValueError` names the field, its
    message the problem alone (``must be between 0 and 2, not 3``).
    """

    num_search_results: int | None = None
    max_tokens: int | None = None
    temperature: float | None = None

    def __post_init__(self) -> None:
        _bounded("num_search_results", self.num_search_results, 1, MAX_NUM_SEARCH_RESULTS)
        _bounded("max_tokens", self.max_tokens, 1, MAX_SEARCH_TOKENS)
        if self.temperature is not None:
            if wrong := temperature_problem(self.temperature):
                raise InvalidValueError("temperature", wrong)
            object.__setattr__(self, "temperature", float(self.temperature))


def _bounded(name: str, value: object, low: int, high: int) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidValueError(name, f"must be a whole number, not {value!r}")
    if not low <= value <= high:
        raise InvalidValueError(name, f"must be between {low} and {high}, not {value!r}")
