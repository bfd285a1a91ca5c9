"""Fields of provider result items as plain text (some APIs mark up snippets with inline HTML),
and results built from the items that have a URL."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from typing import Any

from ...seam import SearchResult, SearchSource

__all__ = ["optional_text", "plain_text", "sources_from", "url_of"]

# Only simple inline markup (highlighting, emphasis, line breaks): anything richer is left as is
# rather than guessed at, so text that merely mentions a tag survives.
_INLINE_TAG = re.compile(
    r"</?(?:b|strong|em|i|u|mark|span|small|sub|sup|code|br)(?:\s[^<>]*)?/?>", re.IGNORECASE
)
_WHITESPACE = re.compile(r"\s+")


def plain_text(text: str) -> str:
    """``text`` without simple inline tags, with entities decoded and whitespace collapsed.

    Tags go before entities are decoded, so an escaped ``&lt;b&gt;`` stays visible text.
    """
    return _WHITESPACE.sub(" ", html.unescape(_INLINE_TAG.sub("", text))).strip()


def optional_text(item: Mapping[str, Any], key: str) -> str | None:
    """``item[key]`` as plain text; absent, non-string or blank is ``None``."""
    value = item.get(key)
    return plain_text(value) or None if isinstance(value, str) else None


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
