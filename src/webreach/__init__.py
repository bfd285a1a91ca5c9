"""webreach: give any language model the web.

The stable public surface, importable from here::

    import webreach

    async with webreach.build_runtime() as runtime:
        result = await runtime.search(webreach.SearchRequest("python 3.13", max_results=5))

- settings and a ready runtime: :func:`build_runtime`, :func:`load_settings`, :class:`Settings`;
- the seam (:mod:`webreach.seam`): :class:`WebRuntime`, the request and result types and bodies
  (image search's too), the provider protocols, and the errors (:class:`WebreachError` is the
  root of them all);
- the model-facing tools (:mod:`webreach.tools`): :class:`WebToolkit`, :func:`web_search_tool`,
  :func:`web_fetch_tool`, :class:`ToolOptions`, :class:`ToolResult`, :func:`render_html` …

Scripted providers for tests are in :mod:`webreach.testing`.

Names load on first use (PEP 562), so ``import webreach`` (and ``webreach --help``) imports no
HTTP client, settings library or HTML parser.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    # Type checkers take each name from its home; ``__all__`` below picks the public ones.
    from .config import *
    from .seam import *
    from .tools import *

__all__ = [
    "INVALID_ARGUMENTS",
    "CacheStore",
    "ConfigError",
    "Disposer",
    "FetchBody",
    "FetchProvider",
    "FetchRequest",
    "FetchResult",
    "FetchToolResult",
    "HtmlBody",
    "ImageBytes",
    "ImageInput",
    "ImageMatch",
    "ImageSearchProvider",
    "ImageSearchRequest",
    "ImageSearchResult",
    "ImageUrl",
    "InvalidValueError",
    "PdfBody",
    "SearchProvider",
    "SearchRequest",
    "SearchResult",
    "SearchSource",
    "SearchToolResult",
    "Settings",
    "TextBody",
    "ToolDefinition",
    "ToolError",
    "ToolOptions",
    "ToolResult",
    "WebError",
    "WebErrorCode",
    "WebRuntime",
    "WebToolkit",
    "WebreachError",
    "__version__",
    "anthropic_tools",
    "build_runtime",
    "image_from_url",
    "load_settings",
    "openai_chat_tools",
    "openai_responses_tools",
    "render_html",
    "web_fetch_tool",
    "web_search_tool",
    "web_tools",
    "web_tools_prompt",
]

# Where the names of ``__all__`` live, lowest layer first: a name loads its home and what is
# below it (the seam's names load no HTTP client, settings library or HTML parser).
_HOMES = ("webreach.seam", "webreach.tools", "webreach.config")


if not TYPE_CHECKING:  # type checkers see the imports above, so a misspelt name is an error

    def __getattr__(name: str) -> Any:
        """Load a public name from the module that defines it, once (PEP 562)."""
        if name in __all__:
            for home in _HOMES:
                module = import_module(home)
                if hasattr(module, name):
                    value = getattr(module, name)
                    globals()[name] = value
                    return value
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
