"""The request bodies of the search and fetch endpoints: one pydantic model each, which both
checks a body and is the schema the OpenAPI document publishes.

Field checks are ``core.fields``' (exact types, refusals naming the field); the bounds that
depend on the server's settings are built into its own search model, and what the tools
normalise themselves (``queries``, ``url``, ``start``) goes through the tools' own parsers, so
HTTP callers and models meet the same rules and the same limits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, ClassVar, TypeVar

from pydantic import ConfigDict, Field

from ...seam import MAX_URL_LENGTH, InvalidValueError, Recency
from ...tools import RECENCIES, SearchFilters, ToolError, ToolOptions, parse_queries
from ...tools.base import MAX_NUM_SEARCH_RESULTS, MAX_SEARCH_TOKENS, SearchTuning
from ...tools.fetch import PAGE_FORMATS, PageFormat, parse_fetch_arguments
from ..core.errors import RequestError
from ..core.fields import JSON, Request, bad, checked, validate

__all__ = [
    "FetchCall",
    "FetchRequest",
    "SearchBody",
    "SearchCall",
    "Text",
    "fetch_call",
    "positive",
    "search_body",
    "search_call",
]

B = TypeVar("B", bound="Body")


def _text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def positive(value: object) -> bool:
    return _whole(value) and bool(value)


Text = Annotated[str, checked(_text, "must be a non-empty string"), Field(min_length=1)]
Url = Annotated[
    str,
    checked(_text, "must be a non-empty http(s) URL string"),
    Field(min_length=1, max_length=MAX_URL_LENGTH, description="The http(s) URL to read."),
]
Start = Annotated[
    int,
    Field(ge=0, description="Character offset to continue from (a previous `next_start`)."),
    checked(_whole, "must be a non-negative integer"),
]
Format = Annotated[
    PageFormat,
    checked(lambda v: v in PAGE_FORMATS, "must be `markdown`, `text` or `raw`"),
    Field(
        description="`markdown`: the page's main content (reader mode), as `web_fetch` reads "
        "it; `text`: the same content as plain text; `raw`: the decoded body (HTML source)."
    ),
]


class Body(Request):
    """A body whose misspelt field (``maxResults``) is refused, not silently ignored."""

    model_config = ConfigDict(extra="forbid")
    path: ClassVar[str] = ""

    @classmethod
    def check(cls, body: JSON) -> None:
        for key in body:
            if key not in cls.model_fields:
                names = ", ".join(f"`{name}`" for name in cls.model_fields)
                raise bad(key, f"unknown field; {cls.path} takes {names}")


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


Domains = Annotated[
    list[str],
    checked(_strings, "must be an array of domain names"),
    Field(description="Domain names (`python.org`); a domain matches itself and its subdomains."),
]
Code = Annotated[str, checked(lambda v: isinstance(v, str), "must be a string")]
_TWO_LETTERS: JSON = {"pattern": "^[A-Za-z]{2}$"}
"""Published, not enforced here: the filters' own check refuses a bad code in the server's
words."""


def _at_most(bound: int) -> Callable[[object], bool]:
    """Passes values it does not bound: the type's own check refuses those, in its words."""

    def test(value: object) -> bool:
        if isinstance(value, list):
            return len(value) <= bound
        return not isinstance(value, int) or value <= bound

    return test


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _temperature(value: object) -> bool:
    return isinstance(value, int | float) and 0 <= value <= 2


NumSearchResults = Annotated[
    int,
    Field(
        ge=1,
        le=MAX_NUM_SEARCH_RESULTS,
        description="Results the provider looks at, when more than `max_results` (only "
        "Perplexity keeps the two apart; the others ask for this many).",
    ),
    checked(
        positive,
        "must be a positive integer",
        (_at_most(MAX_NUM_SEARCH_RESULTS), f"must be at most {MAX_NUM_SEARCH_RESULTS}"),
    ),
]
MaxTokens = Annotated[
    int,
    Field(
        ge=1,
        le=MAX_SEARCH_TOKENS,
        description="The longest answer a model-backed provider may write; others ignore it.",
    ),
    checked(
        positive,
        "must be a positive integer",
        (_at_most(MAX_SEARCH_TOKENS), f"must be at most {MAX_SEARCH_TOKENS}"),
    ),
]
Temperature = Annotated[
    float,
    Field(ge=0, le=2, description="A model-backed provider's temperature; others ignore it."),
    checked(_number, "must be a number", (_temperature, "must be between 0 and 2")),
]


class SearchBody(Body):
    """What ``search_call`` reads; :func:`search_body` gives it this server's bounds."""

    path: ClassVar[str] = "/v1/search"

    queries: list[str] | None = None
    query: str | None = None
    max_results: int | None = None
    recency: (
        Annotated[
            Recency,
            checked(lambda v: v in RECENCIES, "must be `day`, `week`, `month` or `year`"),
            Field(description="Only sources published within the last day, week, month or year."),
        ]
        | None
    ) = None
    include_domains: (
        Annotated[Domains, Field(description="Only sources on these sites.")] | None
    ) = None
    exclude_domains: (
        Annotated[Domains, Field(description="No sources from these sites.")] | None
    ) = None
    country: (
        Annotated[
            Code,
            Field(
                description="Where the results should come from: ISO 3166-1 alpha-2 (`DE`).",
                json_schema_extra=_TWO_LETTERS,
            ),
        ]
        | None
    ) = None
    language: (
        Annotated[
            Code,
            Field(
                description="The results' language: ISO 639-1 (`de`).",
                json_schema_extra=_TWO_LETTERS,
            ),
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


def _texts(value: object) -> bool:
    return isinstance(value, list) and all(_text(item) for item in value)


def _non_empty_list(value: object) -> bool:
    return isinstance(value, list) and bool(value)


@lru_cache(maxsize=8)
def search_body(options: ToolOptions) -> type[SearchBody]:
    """The ``/v1/search`` body with this server's bounds, which it checks and publishes."""
    most_queries, most_results = options.search_max_queries, options.search_max_results

    class SearchRequest(SearchBody):
        """`queries` (several, run concurrently and merged by rank) or `query` (one)."""

        model_config = ConfigDict(
            json_schema_extra={"oneOf": [{"required": ["queries"]}, {"required": ["query"]}]}
        )

        queries: (
            Annotated[
                list[Text],
                checked(
                    _non_empty_list,
                    f"must be an array of 1 to {most_queries} strings",
                    (
                        _at_most(most_queries),
                        f"at most {most_queries} queries per call (WEBREACH_SEARCH_MAX_QUERIES)",
                    ),
                    (_texts, "every query must be a non-empty string"),
                ),
                Field(
                    min_length=1,
                    max_length=most_queries,
                    description="Search queries, run at the same time; exact repeats run once.",
                ),
            ]
            | None
        ) = None
        query: Annotated[Text, Field(description="One search query.")] | None = None
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
                        _at_most(most_results),
                        f"must be at most {most_results} (WEBREACH_SEARCH_MAX_RESULTS)",
                    ),
                ),
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
    return FetchCall(url, start, checked_body.format)
