"""The request bodies of the search and fetch endpoints: one pydantic model each, which both
checks a body and is the schema the OpenAPI document publishes.

Field checks are ``core.wire.fields``' (exact types, refusals naming the field); a field for a
tool's argument is built from the tool's declaration of it (``body_fields``), the bounds that
depend on the server's settings are built into its own search model, and what the tools
normalise themselves (``queries``, ``url``, ``start``) goes through the tools' own parsers, so
HTTP callers and models meet the same rules and the same limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import BeforeValidator, ConfigDict, Field
from pydantic.fields import FieldInfo
from pydantic.json_schema import SkipJsonSchema

from ...seam import InvalidValueError
from ...tools import SearchFilters, ToolError, ToolOptions, parse_queries
from ...tools.base import SearchTuning
from ...tools.fetch import PageFormat, parse_fetch_arguments
from ...tools.search.inputs import QUERIES
from ..core.turn.errors import RequestError
from ..core.wire.fields import JSON, Request, bad, checked, validate
from .body_fields import (
    PATTERNS,
    Country,
    Domains,
    Format,
    Integral,
    Language,
    MaxAge,
    MaxTokens,
    NumSearchResults,
    RecencyField,
    Start,
    Temperature,
    Text,
    Url,
    at_most,
    positive,
    texts,
)

__all__ = [
    "FetchCall",
    "FetchRequest",
    "SearchBody",
    "SearchCall",
    "fetch_call",
    "search_body",
    "search_call",
]

B = TypeVar("B", bound="Body")


class Body(Request):
    """A body whose misspelt field (``maxResults``) is refused, not silently ignored."""

    model_config = ConfigDict(extra="forbid", **PATTERNS)
    path: ClassVar[str] = ""

    @classmethod
    def check(cls, body: JSON) -> None:
        for key in body:
            if key not in cls.model_fields:
                names = ", ".join(f"`{name}`" for name in cls.model_fields)
                raise bad(key, f"unknown field; {cls.path} takes {names}")


class SearchBody(Body):
    """What ``search_call`` reads; :func:`search_body` gives it this server's bounds."""

    path: ClassVar[str] = "/v1/search"

    queries: list[str] | None = None
    query: str | None = None
    max_results: int | None = None
    recency: RecencyField | None = None
    include_domains: (
        Annotated[Domains, Field(description="Only sources on these sites.")] | None
    ) = None
    exclude_domains: (
        Annotated[Domains, Field(description="No sources from these sites.")] | None
    ) = None
    country: (
        Annotated[
            Country,
            Field(description="Where the results should come from: ISO 3166-1 alpha-2 (`DE`)."),
        ]
        | None
    ) = None
    language: (
        Annotated[
            Language,
            Field(description="The results' language: ISO 639-1 (`de`)."),
        ]
        | None
    ) = None
    num_search_results: NumSearchResults | None = None
    max_tokens: MaxTokens | None = None
    temperature: Temperature | None = None

    def filters(self) -> SearchFilters:
        """The filters asked for, normalised; a bad one is a 400 naming its field."""
        asked = SearchFilters(
            recency=self.recency,
            include_domains=tuple(self.include_domains or ()),
            exclude_domains=tuple(self.exclude_domains or ()),
            country=self.country,
            language=self.language,
        )
        try:
            return asked.check()
        except InvalidValueError as error:
            raise bad(error.field, str(error)) from None

    def tuning(self) -> SearchTuning:
        try:
            return SearchTuning(self.num_search_results, self.max_tokens, self.temperature)
        except InvalidValueError as error:
            raise bad(error.field, str(error)) from None


def _non_empty_list(value: object) -> bool:
    return isinstance(value, list) and bool(value)


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


_ONE_OF_THE_TWO = Field(json_schema_extra=_no_default)
"""Absent is the only way not to give it: no default is published, null being refused."""


def _given(value: object) -> bool:
    """``query`` and ``queries`` are one or the other: a null one is refused, not taken for
    missing, so the body is either/or exactly as the published ``oneOf`` says."""
    return value is not None


def _queries_checks(most: int) -> BeforeValidator:
    return checked(
        _non_empty_list,
        f"must be an array of {QUERIES.min_items} to {most} strings",
        (at_most(most), f"at most {most} queries per call (WEBREACH_SEARCH_MAX_QUERIES)"),
        (texts, "every query must be a non-empty string"),
    )


def _queries_field(most: int) -> FieldInfo:
    """``queries`` as ``web_search`` declares it, with this server's most."""
    declared: FieldInfo = Field(
        min_length=QUERIES.min_items, max_length=most, description=QUERIES.describe(most)
    )
    return declared


@lru_cache(maxsize=8)
def search_body(options: ToolOptions) -> type[SearchBody]:
    """The ``/v1/search`` body with this server's bounds, which it checks and publishes."""
    most_queries, most_results = options.search_max_queries, options.search_max_results

    class SearchRequest(SearchBody):
        """`queries` (several, run concurrently and merged by rank) or `query` (one)."""

        model_config = ConfigDict(
            json_schema_extra={"oneOf": [{"required": ["queries"]}, {"required": ["query"]}]}
        )

        queries: Annotated[
            Annotated[list[Text], _queries_checks(most_queries), _queries_field(most_queries)]
            | SkipJsonSchema[None],
            checked(_given, f"must be an array of 1 to {most_queries} strings"),
            _ONE_OF_THE_TWO,
        ] = None
        query: Annotated[
            Annotated[Text, Field(description="One search query.")] | SkipJsonSchema[None],
            checked(_given, "must be a non-empty string"),
            _ONE_OF_THE_TWO,
        ] = None
        max_results: (
            Annotated[
                int,
                Field(
                    ge=1,
                    le=most_results,
                    description="Sources to return; the default and the most is "
                    f"{most_results} (WEBREACH_SEARCH_MAX_RESULTS).",
                ),
                checked(
                    positive,
                    "must be a positive integer",
                    (
                        at_most(most_results),
                        f"must be at most {most_results} (WEBREACH_SEARCH_MAX_RESULTS)",
                    ),
                ),
                Integral,
            ]
            | None
        ) = None

    return SearchRequest


class FetchRequest(Body):
    """One page, read in pieces of `WEBREACH_FETCH_MAX_CHARS` characters from `start`."""

    path: ClassVar[str] = "/v1/fetch"

    url: Url
    start: Start = 0
    format: Format = "markdown"
    max_age: MaxAge = None


@dataclass(frozen=True, slots=True)
class SearchCall:
    queries: tuple[str, ...]
    max_results: int
    filters: SearchFilters = field(default_factory=SearchFilters)
    tuning: SearchTuning = field(default_factory=SearchTuning)


@dataclass(frozen=True, slots=True)
class FetchCall:
    url: str
    start: int
    format: PageFormat
    max_age: int | None = None


def _checked(shape: type[B], body: JSON) -> B:
    shape.check(body)
    return validate(shape, body)


def _tool_refusal(error: ToolError, param: str) -> RequestError:
    return RequestError(error.message, param=param)


OPEN_WEBUI_HINT = (
    "unknown field; this looks like Open WebUI's external search request (`query`, `count`): "
    "point Open WebUI's External Search URL at /openwebui/search, not /v1/search"
)


def _not_open_webuis(body: JSON) -> None:
    """Open WebUI turns any error into "no results", so its body sent here is refused with where
    it belongs, not only with the unknown ``count``."""
    if "count" in body and "query" in body and "queries" not in body:
        raise bad("count", OPEN_WEBUI_HINT)


def search_call(body: JSON, options: ToolOptions) -> SearchCall:
    """``{"queries": [...]}`` or ``{"query": "..."}``, with an optional ``max_results`` no
    larger than the server's ``WEBREACH_SEARCH_MAX_RESULTS`` and optional filters."""
    _not_open_webuis(body)
    checked_body = _checked(search_body(options), body)
    queries, query = checked_body.queries, checked_body.query
    if query is not None and queries is not None:
        raise bad("query", "give `query` (one string) or `queries` (an array), not both")
    if query is not None:
        queries = [query]
    elif queries is None:
        raise bad(
            "queries",
            f"Field required: an array of 1 to {options.search_max_queries} strings "
            "(or `query`, one string)",
        )
    try:
        parsed = parse_queries({"queries": queries}, options.search_max_queries)
    except ToolError as error:
        raise _tool_refusal(error, "queries") from None
    return SearchCall(
        parsed,
        checked_body.max_results or options.search_max_results,
        checked_body.filters(),
        checked_body.tuning(),
    )


def fetch_call(body: JSON) -> FetchCall:
    """``{"url", "start", "format"}``; the URL itself is judged by the fetch provider's guard."""
    checked_body = _checked(FetchRequest, body)
    try:
        url, start = parse_fetch_arguments({"url": checked_body.url, "start": checked_body.start})
    except ToolError as error:
        raise _tool_refusal(error, "url") from None
    return FetchCall(url, start, checked_body.format, checked_body.max_age)
