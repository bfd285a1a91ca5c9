"""The defaults the tools' options and the settings share, written once: a library user's
``ToolOptions()`` and an unconfigured ``webreach`` get the same bounds.

It imports nothing, so both the tools and the settings (which sit above them) read it without
the settings importing the tools.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "FETCH_MAX_CHARS",
    "SEARCH_CONTEXT_SIZE",
    "SEARCH_MAX_QUERIES",
    "SEARCH_MAX_RESULTS",
    "SEARCH_PAGE_TIMEOUT",
]

SEARCH_MAX_QUERIES: Final = 4
SEARCH_MAX_RESULTS: Final = 8
FETCH_MAX_CHARS: Final = 40_000
SEARCH_CONTEXT_SIZE: Final = "medium"
SEARCH_PAGE_TIMEOUT: Final = 3.0
