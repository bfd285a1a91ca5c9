"""How a request's filters become what an API takes, shared by several providers.

``site:`` operators narrow a query at engines that honour them; where not every engine behind an
API does (SearXNG, ``ddgs``, Brave), a provider sends them as a hint and leaves the filter
undeclared, so the seam still checks every source's host after it.
"""

from __future__ import annotations

from ...seam import SearchFilter, SearchRequest
from ._regions import COUNTRY_LANGUAGE, LANGUAGE_COUNTRY

__all__ = ["locale", "not_passed", "with_sites"]


def with_sites(request: SearchRequest) -> str:
    """The query with ``site:`` operators for the included domains (any of them) and
    ``-site:`` ones for the excluded; the query as it is without domain filters."""
    parts = [request.query]
    if request.include_domains:
        parts.append(" OR ".join(f"site:{domain}" for domain in request.include_domains))
    parts.extend(f"-site:{domain}" for domain in request.exclude_domains)
    return " ".join(parts)


def locale(request: SearchRequest) -> tuple[str, str] | None:
    """``(country, language)``, lower-case, for an API that takes them only together: the half
    not given is the one the other most goes with; None when neither is given or the missing
    half is not known."""
    country = request.country.lower() if request.country else None
    language = request.language
    if country is None and language is None:
        return None
    if language is None:
        language = COUNTRY_LANGUAGE.get(request.country or "")
    if country is None:
        country = LANGUAGE_COUNTRY.get(language or "")
    if country is None or language is None:
        return None
    return country, language


def not_passed(request: SearchRequest, *names: SearchFilter) -> frozenset[SearchFilter]:
    """Those of ``names`` the request sets: a declared filter the provider could not pass this
    time, for its result's ``unfiltered``."""
    return request.filters() & frozenset(names)
