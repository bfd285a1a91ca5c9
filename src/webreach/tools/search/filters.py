"""What a ``web_search`` call says of its filters: who applied each one, over all its queries,
and the line the model reads about them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, get_args

from ...seam import SearchFilter, SearchResult
from ..base import SearchFilters

__all__ = ["FILTER_ORDER", "Fates", "Filtered", "filter_fates", "filters_line"]

FILTER_ORDER: tuple[SearchFilter, ...] = get_args(SearchFilter)

Fates = tuple[tuple[SearchFilter, ...], tuple[SearchFilter, ...], tuple[SearchFilter, ...]]


def filter_fates(results: Sequence[SearchResult]) -> Fates:
    """Who applied each filter, over every query: a filter the seam applied, or nobody did, for
    one query is reported so, since that query's sources were not filtered by the provider."""
    unfiltered = frozenset().union(*(r.unfiltered for r in results))
    after = frozenset().union(*(r.filtered_after for r in results)) - unfiltered
    provider = frozenset().union(*(r.filtered_by_provider for r in results)) - after - unfiltered

    def ordered(names: frozenset[SearchFilter]) -> tuple[SearchFilter, ...]:
        return tuple(name for name in FILTER_ORDER if name in names)

    return ordered(provider), ordered(after), ordered(unfiltered)


class Filtered(Protocol):
    """What a search's filters line is made of (a ``SearchToolResult``)."""

    @property
    def filters(self) -> SearchFilters: ...

    @property
    def filtered_by_provider(self) -> tuple[SearchFilter, ...]: ...

    @property
    def filtered_after(self) -> tuple[SearchFilter, ...]: ...

    @property
    def unfiltered(self) -> tuple[SearchFilter, ...]: ...


def filters_line(result: Filtered) -> str | None:
    """``Filtered: recency week (provider), site python.org (after)``; None without filters."""
    filters = result.filters
    shown: dict[SearchFilter, str | None] = {
        "recency": f"recency {filters.recency}" if filters.recency else None,
        "include_domains": _sites("site", filters.include_domains),
        "exclude_domains": _sites("not site", filters.exclude_domains),
        "country": f"country {filters.country}" if filters.country else None,
        "language": f"language {filters.language}" if filters.language else None,
    }
    fates = dict.fromkeys(result.filtered_by_provider, "provider")
    fates |= dict.fromkeys(result.filtered_after, "after")
    fates |= dict.fromkeys(result.unfiltered, "not applied")
    parts = [
        f"{text} ({fates[name]})" if name in fates else text
        for name, text in shown.items()
        if text is not None
    ]
    return f"Filtered: {', '.join(parts)}" if parts else None


def _sites(label: str, domains: tuple[str, ...]) -> str | None:
    return f"{label} {', '.join(domains)}" if domains else None
