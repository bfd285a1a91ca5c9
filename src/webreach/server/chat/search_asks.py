"""The ways other ecosystems ask a Chat Completions endpoint for web search, honoured.

OpenAI's ``web_search_options`` (what LiteLLM and Open WebUI send), the ``web_search`` /
``web_search_preview`` tool types, OpenRouter's ``plugins: [{"id": "web"}]`` and its
``:online`` model suffix all turn on the same server-side search as ``deepseek_web_search``.
"""

from __future__ import annotations

import re

from ..core.errors import RequestError
from ..core.turn import JSON, SearchSpec

__all__ = ["ONLINE_SUFFIX", "OPENAI_SEARCH_TOOLS", "asks_for_search", "search_asked"]

OPENAI_SEARCH_TOOLS = re.compile(r"web_search(?:_preview)?(?:_\d{4}_\d{2}_\d{2})?")
ONLINE_SUFFIX = ":online"
_CONTEXT_SIZES = {"low": 3, "medium": 5, "high": 8}
"""Sources per search the model sees for each ``search_context_size`` (at most the setting)."""


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
        or _web_plugin(body) is not None
        or (isinstance(model, str) and model.endswith(ONLINE_SUFFIX))
    )


def _location(options: JSON) -> str | None:
    place = options.get("user_location")
    approximate = place.get("approximate") if isinstance(place, dict) else None
    if not isinstance(approximate, dict):
        return None
    parts = [approximate.get(key) for key in ("city", "region", "country")]
    named = [part for part in parts if isinstance(part, str) and part.strip()]
    return ", ".join(named) or None


def search_asked(body: JSON, declared: SearchSpec | None) -> tuple[SearchSpec | None, str]:
    """The search the request asks for (or ``declared`` as is) and the model name to send on
    (without ``:online``)."""
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
        size = options.get("search_context_size", "medium")
        if size not in _CONTEXT_SIZES:
            raise RequestError(
                "web_search_options.search_context_size: must be `low`, `medium` or `high`",
                param="web_search_options",
            )
        spec = SearchSpec(
            "web_search",
            "web_search_options",
            max_results=_CONTEXT_SIZES[str(size)],
            location=_location(options),
        )
        return spec, model
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
