"""Search sources built from the items that have a URL (the plain-text helpers are
:mod:`webreach.providers._plain_text`'s)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...seam import SearchSource
from .._json_api import optional_str
from .._plain_text import optional_text

__all__ = ["ItemSource", "item_source", "sources_of", "url_of"]

ItemSource = Callable[[str, dict[str, Any]], SearchSource]
"""An API's result item and its URL as a source."""


def url_of(item: Any) -> str | None:
    """The item's non-empty ``url``; items without one are not sources."""
    if not isinstance(item, dict):
        return None
    url = item.get("url")
    return url.strip() or None if isinstance(url, str) else None


def sources_of(items: list[Any], source: ItemSource) -> tuple[SearchSource, ...]:
    """The items that have a URL, in the API's order, each mapped by ``source``."""
    return tuple(source(url, item) for item in items if (url := url_of(item)))


def item_source(snippet: str | tuple[str, ...], published: str | tuple[str, ...]) -> ItemSource:
    """How most search APIs' items read, each under its own field names: a ``title`` and a
    ``snippet`` as plain text (some mark them up), and the ``published`` date as given. Of
    several names, the first one set wins."""
    snippets = (snippet,) if isinstance(snippet, str) else snippet
    dates = (published,) if isinstance(published, str) else published

    def source(url: str, item: dict[str, Any]) -> SearchSource:
        return SearchSource(
            url=url,
            title=optional_text(item, "title"),
            snippet=next(filter(None, (optional_text(item, key) for key in snippets)), None),
            published_at=next(filter(None, (optional_str(item, key) for key in dates)), None),
        )

    return source
