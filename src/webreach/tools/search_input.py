"""What a ``web_search`` call takes: its schema for the model, and its arguments checked before
any provider is called."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..seam import Recency
from .base import INVALID_ARGUMENTS, RECENCIES, ToolError

__all__ = [
    "invalid_arguments",
    "parse_queries",
    "parse_recency",
    "parse_search_arguments",
    "search_description",
    "search_schema",
]


def search_description(max_queries: int) -> str:
    return (
        "Search the web for current information. Pass 1 to "
        f"{max_queries} distinct queries in `queries`; they run at the same time and their "
        "results are merged. Use several queries for different angles or sub-questions "
        "instead of calling the tool repeatedly. Results list numbered sources with their "
        "URLs; read a page in full with web_fetch when a snippet is not enough."
    )


def search_schema(max_queries: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "queries": {
                "type": "array",
                "description": f"Search queries, 1 to {max_queries}, each a non-empty string.",
                "items": {"type": "string", "minLength": 1},
                "minItems": 1,
                "maxItems": max_queries,
            },
            "recency": {
                "type": "string",
                "enum": list(RECENCIES),
                "description": "Only sources published within the last day, week, month or "
                "year. Leave it out unless the question is about recent events.",
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
        raise invalid_arguments(f"`queries` must be an array of strings, not {_json_type(queries)}")
    if not queries:
        raise invalid_arguments(f"`queries` is empty; pass 1 to {max_queries} queries")
    if len(queries) > max_queries:
        raise invalid_arguments(
            f"`queries` has {len(queries)} items; at most {max_queries} are allowed per call"
        )
    cleaned: list[str] = []
    for index, query in enumerate(queries):
        if not isinstance(query, str):
            raise invalid_arguments(f"`queries[{index}]` must be a string, not {_json_type(query)}")
        if not query.strip():
            raise invalid_arguments(f"`queries[{index}]` is empty")
        cleaned.append(query.strip())
    return tuple(dict.fromkeys(cleaned))


def parse_search_arguments(
    arguments: object, max_queries: int
) -> tuple[tuple[str, ...], Recency | None]:
    """Validate ``{"queries": [...], "recency": "week"}`` (``recency`` optional): the distinct
    queries and the recency. Everything is checked before any provider is called."""
    if not isinstance(arguments, Mapping):
        raise invalid_arguments('arguments must be an object like {"queries": ["…"]}')
    extra = sorted(str(key) for key in arguments if key not in ("queries", "recency"))
    if extra:
        raise invalid_arguments(
            f"unknown argument(s) {', '.join(extra)}; web_search takes `queries`, an array of "
            'strings, and optionally `recency`, e.g. {"queries": ["…"], "recency": "week"}'
        )
    queries = parse_queries({k: v for k, v in arguments.items() if k == "queries"}, max_queries)
    return queries, parse_recency(arguments.get("recency"))


def parse_recency(value: object) -> Recency | None:
    """The model's ``recency``: null or absent is none."""
    if value is None:
        return None
    for recency in RECENCIES:
        if value == recency:
            return recency
    shown = repr(value) if isinstance(value, str) else _json_type(value)
    raise invalid_arguments(f"`recency` must be one of {', '.join(RECENCIES)}, not {shown}")


def _json_type(value: object) -> str:
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
