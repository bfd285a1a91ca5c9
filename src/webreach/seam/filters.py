"""The filters of a search that its provider's API did not apply, applied by the seam.

Domains are matched on the source's host (a domain matches itself and its subdomains); recency
on the source's ``published_at`` when it reads as a date (ISO, RFC 2822, an age, English or CJK
words: :mod:`.dates`). A source without a date is kept: the seam cannot tell its age, and
dropping every undated source would empty most results. ``country``
and ``language`` cannot be judged from a source, so a provider that cannot take them leaves them
unapplied, and the result says so.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from .dates import parse_date
from .types import Recency, SearchFilter, SearchRequest, SearchResult, SearchSource

__all__ = [
    "AFTER_FILTERS",
    "OVERFETCH",
    "apply_after",
    "asked_of_provider",
    "cutoff",
    "host_matches",
    "native_filters",
    "published",
]

AFTER_FILTERS: frozenset[SearchFilter] = frozenset(
    {"recency", "include_domains", "exclude_domains"}
)
"""What the seam can apply to sources a provider returned."""
OVERFETCH = 4
"""How many times more sources are asked for when the seam filters after the provider, so a
narrow filter still leaves sources."""
OVERFETCH_CAP = 50

_AGES: dict[Recency, timedelta] = {
    "day": timedelta(days=1),
    "week": timedelta(days=7),
    "month": timedelta(days=31),
    "year": timedelta(days=366),
}


def cutoff(recency: Recency, now: datetime | None = None) -> datetime:
    """The oldest moment a source may be published at to be within ``recency``."""
    return (now or datetime.now(UTC)) - _AGES[recency]


def host_matches(url: str, domains: tuple[str, ...]) -> bool:
    """Whether ``url``'s host is one of ``domains`` or a subdomain of one."""
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    return any(host == domain or host.endswith("." + domain) for domain in domains)


def published(value: str | None, now: datetime | None = None) -> datetime | None:
    """A source's date as providers send it (see :mod:`.dates`); None when it cannot be read,
    so one provider's odd field never fails the search."""
    return parse_date(value, now)


def _recent(source: SearchSource, cutoff: datetime, now: datetime | None) -> bool:
    moment = published(source.published_at, now)
    return moment is None or moment >= cutoff


def asked_of_provider(request: SearchRequest, native: frozenset[SearchFilter]) -> SearchRequest:
    """The request as the provider gets it: more results when the seam will filter after."""
    if not (request.filters() - native) & AFTER_FILTERS:
        return request
    wanted = request.max_results or 10
    return dataclasses.replace(request, max_results=min(wanted * OVERFETCH, OVERFETCH_CAP))


def apply_after(
    result: SearchResult,
    request: SearchRequest,
    native: frozenset[SearchFilter],
    now: datetime | None = None,
) -> SearchResult:
    """``result`` with the filters the provider did not apply applied, and each filter's fate
    recorded.

    A provider that declares a filter but could not pass it this time (a country its API has no
    code for) says so in its result's ``unfiltered``; the seam then treats it as undeclared.
    """
    asked = request.filters()
    by_provider = asked & native - result.unfiltered
    after = (asked - by_provider) & AFTER_FILTERS
    sources = result.sources
    if "include_domains" in after:
        sources = tuple(s for s in sources if host_matches(s.url, request.include_domains))
    if "exclude_domains" in after:
        sources = tuple(s for s in sources if not host_matches(s.url, request.exclude_domains))
    if "recency" in after and request.recency is not None:
        oldest = cutoff(request.recency, now)
        sources = tuple(s for s in sources if _recent(s, oldest, now))
    return dataclasses.replace(
        result,
        sources=sources,
        filtered_by_provider=by_provider,
        filtered_after=after,
        unfiltered=asked - by_provider - after,
    )


def native_filters(provider: object) -> frozenset[SearchFilter]:
    """The filters a provider declares its API takes (none when it declares nothing)."""
    declared = getattr(provider, "filters", None)
    return frozenset(declared) if isinstance(declared, (frozenset, set, tuple)) else frozenset()
