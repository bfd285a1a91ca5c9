"""What a ``web_search`` call takes: its schema for the model, and its arguments checked before
any provider is called."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...seam import MAX_TEMPERATURE, MIN_TEMPERATURE, InvalidValueError, Recency
from ..base import (
    INVALID_ARGUMENTS,
    MAX_NUM_SEARCH_RESULTS,
    MAX_SEARCH_TOKENS,
    RECENCIES,
    Argument,
    SearchTuning,
    ToolError,
    json_type,
)

__all__ = [
    "ARGUMENTS",
    "OPTIONAL",
    "QUERIES",
    "TUNING",
    "OptionalArgument",
    "Queries",
    "SearchArguments",
    "invalid_arguments",
    "parse_queries",
    "parse_recency",
    "parse_search_arguments",
    "parse_search_call",
    "search_description",
    "search_schema",
]


@dataclass(frozen=True, slots=True)
class OptionalArgument(Argument):
    """One optional argument of ``web_search``: its schema for the model, its check, and the field
    ``/v1/search`` publishes and checks for it come from here (null is absent; a whole number may
    come as ``5.0``)."""

    def schema(self, maximum: float | None = None) -> dict[str, Any]:
        return {"type": self.type, **self.rules(maximum), "description": self.description}

    def read(self, value: object) -> object:
        """``value`` as the call means it, or a :class:`ToolError` naming the argument; the
        bounds of the tuning arguments are :class:`SearchTuning`'s to check."""
        if value is None:
            return None
        if self.enum:
            for choice in self.enum:
                if value == choice:
                    return choice
            shown = repr(value) if isinstance(value, str) else json_type(value)
            raise invalid_arguments(
                f"`{self.name}` must be one of {', '.join(self.enum)}, not {shown}"
            )
        if self.type == "integer":
            if isinstance(value, float) and value.is_integer():
                return int(value)
            if isinstance(value, bool) or not isinstance(value, int):
                raise invalid_arguments(
                    f"`{self.name}` must be a whole number, not {_shown(value)}"
                )
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise invalid_arguments(f"`{self.name}` must be a number, not {_shown(value)}")
        return float(value)


RECENCY = OptionalArgument(
    "recency",
    "string",
    "Only sources published within the last day, week, month or year. Leave it out unless "
    "the question is about recent events.",
    enum=RECENCIES,
)
LIMIT = OptionalArgument("limit", "integer", "Sources to return.", minimum=1)
NUM_SEARCH_RESULTS = OptionalArgument(
    "num_search_results",
    "integer",
    "Results the provider looks at, when more than `limit`.",
    minimum=1,
    maximum=MAX_NUM_SEARCH_RESULTS,
)
MAX_TOKENS = OptionalArgument(
    "max_tokens",
    "integer",
    "Longest provider answer; model-backed providers only.",
    minimum=1,
    maximum=MAX_SEARCH_TOKENS,
)
TEMPERATURE = OptionalArgument(
    "temperature",
    "number",
    "Provider answer temperature; model-backed providers only.",
    minimum=MIN_TEMPERATURE,
    maximum=MAX_TEMPERATURE,
)
OPTIONAL = (RECENCY, LIMIT, NUM_SEARCH_RESULTS, MAX_TOKENS, TEMPERATURE)
"""The optional arguments, in the schema's order."""
TUNING = (NUM_SEARCH_RESULTS, MAX_TOKENS, TEMPERATURE)
"""The arguments a :class:`SearchTuning` carries, each by its field's name."""


@dataclass(frozen=True, slots=True)
class Queries:
    """``queries``, declared once: the model's schema and ``/v1/search``'s field read their
    shape and bounds from here; the most is the deployment's (``WEBREACH_SEARCH_MAX_QUERIES``)."""

    name: str = "queries"
    min_items: int = 1
    min_length: int = 1
    """Of each query: a blank one is refused too (:func:`parse_queries`)."""

    def describe(self, max_queries: int) -> str:
        return f"Search queries, {self.min_items} to {max_queries}, each a non-empty string."

    def schema(self, max_queries: int) -> dict[str, Any]:
        return {
            "type": "array",
            "description": self.describe(max_queries),
            "items": {"type": "string", "minLength": self.min_length},
            "minItems": self.min_items,
            "maxItems": max_queries,
        }


QUERIES = Queries()

ARGUMENTS = (QUERIES.name, *(argument.name for argument in OPTIONAL))
"""Everything a ``web_search`` call may pass, in the schema's order."""


@dataclass(frozen=True, slots=True)
class SearchArguments:
    """One ``web_search`` call's arguments, checked: ``limit`` as asked (the caller holds it to
    its own bound), the rest as the provider's request will carry them."""

    queries: tuple[str, ...]
    recency: Recency | None = None
    limit: int | None = None
    tuning: SearchTuning = field(default_factory=SearchTuning)


def search_description(max_queries: int) -> str:
    return (
        "Search the web for current information. Pass 1 to "
        f"{max_queries} distinct queries in `queries`; they run at the same time and their "
        "results are merged. Use several queries for different angles or sub-questions "
        "instead of calling the tool repeatedly. Results list numbered sources with their "
        "URLs; read a page in full with web_fetch when a snippet is not enough."
    )


def search_schema(max_queries: int, max_results: int | None = None) -> dict[str, Any]:
    """The call's JSON schema; ``max_results`` (the deployment's bound) is ``limit``'s maximum.
    Descriptions stay short: every request to the model carries them."""
    return {
        "type": "object",
        "properties": {
            QUERIES.name: QUERIES.schema(max_queries),
            **{
                argument.name: argument.schema(max_results if argument is LIMIT else None)
                for argument in OPTIONAL
            },
        },
        "required": ["queries"],
        "additionalProperties": False,
    }


def invalid_arguments(message: str) -> ToolError:
    return ToolError(INVALID_ARGUMENTS, message)


def parse_queries(arguments: object, max_queries: int) -> tuple[str, ...]:
    """Validate ``{"queries": [...]}`` and drop exact duplicates, keeping first positions.

    Everything is checked before any provider is called.
    """
    if not isinstance(arguments, Mapping):
        raise invalid_arguments('arguments must be an object like {"queries": ["…"]}')
    extra = sorted(str(key) for key in arguments if key != "queries")
    if extra:
        raise invalid_arguments(
            f"unknown argument(s) {', '.join(extra)}; web_search takes only `queries`, "
            'an array of strings, e.g. {"queries": ["…"]}'
        )
    if "queries" not in arguments:
        raise invalid_arguments(f"`queries` is required: an array of 1 to {max_queries} strings")
    queries = arguments["queries"]
    if not isinstance(queries, list | tuple):
        raise invalid_arguments(f"`queries` must be an array of strings, not {json_type(queries)}")
    if not queries:
        raise invalid_arguments(f"`queries` is empty; pass 1 to {max_queries} queries")
    if len(queries) > max_queries:
        raise invalid_arguments(
            f"`queries` has {len(queries)} items; at most {max_queries} are allowed per call"
        )
    cleaned: list[str] = []
    for index, query in enumerate(queries):
        if not isinstance(query, str):
            raise invalid_arguments(f"`queries[{index}]` must be a string, not {json_type(query)}")
        if not query.strip():
            raise invalid_arguments(f"`queries[{index}]` is empty")
        cleaned.append(query.strip())
    return tuple(dict.fromkeys(cleaned))


def parse_search_arguments(
    arguments: object, max_queries: int
) -> tuple[tuple[str, ...], Recency | None]:
    """The distinct queries and the recency of a call (:func:`parse_search_call` has the rest)."""
    call = parse_search_call(arguments, max_queries)
    return call.queries, call.recency


def parse_search_call(arguments: object, max_queries: int) -> SearchArguments:
    """Validate ``{"queries": [...], "recency": "week", "limit": 5, ...}`` (all but ``queries``
    optional, null is absent). Everything is checked before any provider is called."""
    if not isinstance(arguments, Mapping):
        raise invalid_arguments('arguments must be an object like {"queries": ["…"]}')
    extra = sorted(str(key) for key in arguments if key not in ARGUMENTS)
    if extra:
        optional = ", ".join(f"`{name}`" for name in ARGUMENTS[1:])
        raise invalid_arguments(
            f"unknown argument(s) {', '.join(extra)}; web_search takes `queries`, an array of "
            f"strings, and optionally {optional}, "
            'e.g. {"queries": ["…"], "recency": "week"}'
        )
    queries = parse_queries({k: v for k, v in arguments.items() if k == "queries"}, max_queries)
    read = {argument.name: argument.read(arguments.get(argument.name)) for argument in OPTIONAL}
    limit = read["limit"]
    if isinstance(limit, int) and limit < 1:
        raise invalid_arguments(f"`limit` must be at least 1, not {limit}")
    try:
        asked = {argument.name: read[argument.name] for argument in TUNING}
        tuning = SearchTuning(**asked)  # type: ignore[arg-type]  # read as the table says
    except InvalidValueError as error:
        raise invalid_arguments(f"`{error.field}` {error}") from None
    return SearchArguments(queries, read["recency"], limit, tuning)  # type: ignore[arg-type]


def _shown(value: object) -> str:
    plain = isinstance(value, str | int | float) and not isinstance(value, bool)
    return repr(value) if plain else json_type(value)


def parse_recency(value: object) -> Recency | None:
    """The model's ``recency``: null or absent is none."""
    return RECENCY.read(value)  # type: ignore[return-value]  # one of RECENCIES
