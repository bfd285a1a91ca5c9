"""Search results built from the items that have a URL (the plain-text helpers are
:mod:`webreach.providers._plain_text`'s)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...seam import SearchResult, SearchSource

__all__ = ["sources_from", "url_of"]


def url_of(item: Any) -> str | None:
    """The item's non-empty ``url``; items without one are not sources."""
    if not isinstance(item, dict):
        return None
    url = item.get("url")
    return url.strip() or None if isinstance(url, str) else None


def sources_from(
    items: list[Any], source: Callable[[str, dict[str, Any]], SearchSource]
) -> SearchResult:
    """A result of the items that have a URL, each mapped by ``source``."""
    return SearchResult(sources=tuple(source(url, item) for item in items if (url := url_of(item))))
