"""OpenRouter's server tools, ``openrouter:web_search`` and ``openrouter:web_fetch``, as the
server's own search and link reading.

OpenRouter replaced its ``web`` plugin with these two tool types (pydantic-ai sends the
search one); both Chat and Responses requests may declare them, options under ``parameters``.
Options that pick OpenRouter's own backends (``engine``, ``mode``, ``max_characters``,
``max_content_tokens``, ``max_total_results``) are accepted and have no effect here: the
server's configured providers and its fetch limits decide those.
"""

from __future__ import annotations

from ..turn.shape import DomainFilter, ReadUrlSpec, SearchSpec
from .fields import PositiveInt, Request, StringList, validate
from .filter_fields import Approximate, context_size, location_hint, tool_filters

__all__ = ["OPENROUTER_FETCH", "OPENROUTER_SEARCH", "OPENROUTER_TOOLS", "openrouter_tool"]

OPENROUTER_SEARCH = "openrouter:web_search"
OPENROUTER_FETCH = "openrouter:web_fetch"
OPENROUTER_TOOLS = (OPENROUTER_SEARCH, OPENROUTER_FETCH)


class _Declared(Request):
    parameters: object = None


class _SearchParameters(Request):
    max_results: PositiveInt | None = None
    max_uses: PositiveInt | None = None
    search_context_size: object = None
    allowed_domains: StringList | None = None
    excluded_domains: StringList | None = None
    user_location: object = None


class _FetchParameters(Request):
    max_uses: PositiveInt | None = None
    allowed_domains: StringList | None = None
    blocked_domains: StringList | None = None


def openrouter_tool(kind: str, tool: object, path: str) -> SearchSpec | ReadUrlSpec:
    """The web tool an ``openrouter:*`` declaration of type ``kind`` at ``path`` (``tools.0``)
    stands for."""
    parameters = validate(_Declared, tool, path).parameters
    given = {} if parameters is None else parameters
    where = f"{path}.parameters"
    if kind == OPENROUTER_FETCH:
        fetch = validate(_FetchParameters, given, where)
        domains = DomainFilter(
            allowed=tuple(fetch.allowed_domains or ()), blocked=tuple(fetch.blocked_domains or ())
        )
        return ReadUrlSpec("web_fetch", OPENROUTER_FETCH, max_uses=fetch.max_uses, domains=domains)
    search = validate(_SearchParameters, given, where)
    place = (
        None
        if search.user_location is None
        else validate(Approximate, search.user_location, f"{where}.user_location")
    )
    domains = DomainFilter(
        allowed=tuple(search.allowed_domains or ()), blocked=tuple(search.excluded_domains or ())
    )
    filters = tool_filters(
        domains,
        place,
        allowed=f"{where}.allowed_domains",
        blocked=f"{where}.excluded_domains",
        located=f"{where}.user_location",
    )
    return SearchSpec(
        "web_search",
        OPENROUTER_SEARCH,
        max_uses=search.max_uses,
        domains=domains,
        max_results=search.max_results,
        location=location_hint(place),
        filters=filters,
        context_size=context_size(search.search_context_size, f"{where}.search_context_size"),
    )
