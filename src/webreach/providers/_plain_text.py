"""Fields of provider answers as plain text: some APIs mark up titles and snippets with inline
HTML (highlighting), which a model or a display should not see."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["optional_text", "plain_text"]

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
