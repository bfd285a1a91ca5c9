"""The search filters a request's own fields ask for (domains, the user's country, recency) and
the page context it asks for, read the same way in every protocol and checked where they
arrive: a bad one is a 400 naming the protocol's own field."""

from __future__ import annotations

from collections.abc import Mapping

from ....seam import InvalidValueError
from ....tools import CONTEXT_SIZES, ContextSize, SearchFilters
from ..turn.shape import DomainFilter
from .fields import Request, String, bad

__all__ = [
    "SOURCES_PER_CONTEXT_SIZE",
    "Approximate",
    "checked_filters",
    "context_size",
    "location_hint",
    "tool_filters",
]

SOURCES_PER_CONTEXT_SIZE: dict[ContextSize, int] = {"low": 3, "medium": 5, "high": 8}
"""Sources per search the model sees for each Chat ``search_context_size`` (at most the
setting)."""


class Approximate(Request):
    """An approximate ``user_location``: flat in Responses and Messages, under ``approximate``
    in Chat's ``web_search_options``."""

    type: String | None = None
    city: String | None = None
    region: String | None = None
    country: String | None = None
    timezone: String | None = None

    def hint(self) -> str | None:
        """Where the user is, for the model to read (``Oslo, NO``)."""
        parts = (self.city, self.region, self.country)
        return ", ".join(part.strip() for part in parts if part and part.strip()) or None

    def country_code(self) -> str | None:
        return self.country.strip() if self.country and self.country.strip() else None


def location_hint(place: Approximate | None) -> str | None:
    return place.hint() if place is not None else None


def checked_filters(filters: SearchFilters, fields: Mapping[str, str]) -> SearchFilters:
    """``filters`` normalised, or a 400 naming the request's field for the first bad one
    (``fields`` maps each filter's name to the path it came from)."""
    try:
        return filters.check()
    except InvalidValueError as error:
        raise bad(fields.get(error.field, error.field), str(error)) from None


def tool_filters(
    domains: DomainFilter, place: Approximate | None, *, allowed: str, blocked: str, located: str
) -> SearchFilters:
    """A web search tool's domains and the user's country, pushed to the provider (the domains
    are checked again on what comes back); a bad one is a 400 naming its field: ``allowed`` and
    ``blocked`` are the domain lists' paths, ``located`` the ``user_location``'s."""
    asked = SearchFilters(
        include_domains=domains.allowed,
        exclude_domains=domains.blocked,
        country=place.country_code() if place is not None else None,
    )
    fields = {
        "include_domains": allowed,
        "exclude_domains": blocked,
        "country": f"{located}.country",
    }
    return checked_filters(asked, fields)


def context_size(value: object, path: str) -> ContextSize | None:
    """A ``search_context_size`` as sent: absent is None (the setting decides)."""
    if value is None:
        return None
    for size in CONTEXT_SIZES:
        if value == size:
            return size
    raise bad(path, "must be `low`, `medium` or `high`")
