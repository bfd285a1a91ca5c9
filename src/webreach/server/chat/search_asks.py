"""The ways other ecosystems ask a Chat Completions endpoint for web search, honoured.

OpenAI's ``web_search_options`` (what LiteLLM and Open WebUI send), the ``web_search`` /
``web_search_preview`` tool types, OpenRouter's ``plugins: [{"id": "web"}]`` and its
``:online`` model suffix all turn on the same server-side search as ``deepseek_web_search``;
so do Perplexity's ``search_domain_filter`` / ``search_recency_filter``, which also filter it.
"""

from __future__ import annotations

import dataclasses
import re

from ...tools import RECENCIES, SearchFilters
from ..core.turn.errors import RequestError
from ..core.turn.shape import JSON, SearchSpec
from ..core.wire.fields import bad, validate
from ..core.wire.filter_fields import (
    SOURCES_PER_CONTEXT_SIZE,
    Approximate,
    checked_filters,
    context_size,
    location_hint,
)

__all__ = [
    "ONLINE_SUFFIX",
    "OPENAI_SEARCH_TOOLS",
    "PERPLEXITY_FIELDS",
    "asks_for_search",
    "search_asked",
]

OPENAI_SEARCH_TOOLS = re.compile(r"web_search(?:_preview)?(?:_\d{4}_\d{2}_\d{2})?")
ONLINE_SUFFIX = ":online"
PERPLEXITY_FIELDS = ("search_domain_filter", "search_recency_filter")
"""Perplexity's request-level search filters: a Sonar model always searches, so either one
asks for search."""
_PLACE = "web_search_options.user_location.approximate"


def _web_plugin(body: JSON) -> JSON | None:
    plugins = body.get("plugins")
    for plugin in plugins if isinstance(plugins, list) else ():
        if isinstance(plugin, dict) and plugin.get("id") == "web":
            return plugin
    return None


def asks_for_search(body: JSON) -> bool:
    """Whether a Chat request asks for web search another ecosystem's way."""
    model = body.get("model")
    return (
        body.get("web_search_options") is not None
        or any(body.get(name) is not None for name in PERPLEXITY_FIELDS)
        or _web_plugin(body) is not None
        or (isinstance(model, str) and model.endswith(ONLINE_SUFFIX))
    )


def _place(options: JSON) -> Approximate | None:
    place = options.get("user_location")
    if place is None:
        return None
    if not isinstance(place, dict):
        raise bad("web_search_options.user_location", "must be an object")
    approximate = place.get("approximate")
    return None if approximate is None else validate(Approximate, approximate, _PLACE)


def _options_search(options: JSON) -> SearchSpec:
    """OpenAI's ``web_search_options``: sources and page context by ``search_context_size``,
    the user's country pushed to the provider, and where they are as a hint for the model."""
    size = context_size(
        options.get("search_context_size"), "web_search_options.search_context_size"
    )
    place = _place(options)
    country = place.country_code() if place is not None else None
    filters = checked_filters(SearchFilters(country=country), {"country": f"{_PLACE}.country"})
    return SearchSpec(
        "web_search",
        "web_search_options",
        max_results=SOURCES_PER_CONTEXT_SIZE[size or "medium"],
        location=location_hint(place),
        filters=filters,
        context_size=size,
    )


def _perplexity(body: JSON, spec: SearchSpec | None) -> SearchSpec | None:
    """Perplexity's filters on the search asked for (turned on by them when none was): domains
    (``-example.com`` excludes) and recency. ``hour`` is refused: the narrowest is ``day``, and
    widening what the client asked for without a word would be worse than saying so."""
    domains, recency = (body.get(name) for name in PERPLEXITY_FIELDS)
    if domains is None and recency is None:
        return spec
    if domains is not None and not (
        isinstance(domains, list) and all(isinstance(item, str) for item in domains)
    ):
        raise bad("search_domain_filter", "must be an array of domain names")
    named = [item.strip() for item in domains or ()]
    if recency == "hour":
        raise bad(
            "search_recency_filter",
            "`hour` is not supported here; the narrowest is `day` (or `week`, `month`, `year`)",
        )
    if recency is not None and recency not in RECENCIES:
        raise bad("search_recency_filter", "must be `day`, `week`, `month` or `year`")
    asked = SearchFilters(
        recency=next((r for r in RECENCIES if r == recency), None),
        include_domains=tuple(d for d in named if not d.startswith("-")),
        exclude_domains=tuple(d[1:] for d in named if d.startswith("-")),
    )
    paths = dict.fromkeys(("include_domains", "exclude_domains"), "search_domain_filter")
    checked = checked_filters(asked, {**paths, "recency": "search_recency_filter"})
    spec = spec or SearchSpec("web_search", PERPLEXITY_FIELDS[0])
    filters = dataclasses.replace(
        spec.filters,
        recency=checked.recency,
        include_domains=checked.include_domains,
        exclude_domains=checked.exclude_domains,
    )
    return dataclasses.replace(spec, filters=filters)


def search_asked(body: JSON, declared: SearchSpec | None) -> tuple[SearchSpec | None, str]:
    """The search the request asks for (or ``declared`` as is) and the model name to send on
    (without ``:online``), with Perplexity's filters on it."""
    spec, model = _asked(body, declared)
    return _perplexity(body, spec), model


def _asked(body: JSON, declared: SearchSpec | None) -> tuple[SearchSpec | None, str]:
    model = str(body.get("model", ""))
    options = body.get("web_search_options")
    if options is not None and declared is not None:
        raise RequestError(
            "web_search_options: not supported together with `deepseek_web_search` or "
            "`deepseek_read_url`; declare the web tools in `tools` instead",
            param="web_search_options",
        )
    online = model.endswith(ONLINE_SUFFIX)
    if online:
        model = model.removesuffix(ONLINE_SUFFIX)
    if declared is not None:
        return declared, model
    plugin = _web_plugin(body)
    if isinstance(options, dict):
        return _options_search(options), model
    if options is not None:
        raise RequestError("web_search_options: must be an object", param="web_search_options")
    if plugin is not None:
        limit = plugin.get("max_results")
        counted = isinstance(limit, int) and not isinstance(limit, bool) and limit > 0
        count = limit if counted and isinstance(limit, int) else None
        return SearchSpec("web_search", "plugins.web", max_results=count), model
    if online:
        return SearchSpec("web_search", ONLINE_SUFFIX), model
    return None, model
