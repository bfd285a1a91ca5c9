"""Pruning before scoring: what Readability removes while it walks the page.

Hidden elements, modal dialogs, unlikely candidates (by class/id and ARIA role), the byline and
the heading that repeats the title. Selectors narrow each concern down inside lexbor so that
Python only looks at the few elements it may drop.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from selectolax.lexbor import LexborNode

from . import patterns
from .budget import check
from .dom import Within, inner_text

_HIDDEN: Final = (
    '[hidden],[aria-hidden="true"],[style*="none"],[style*="hidden"],[aria-modal="true"]'
)
# Links and body are spared by Readability; phrasing elements are not worth a look for their
# class either, as dropping them barely changes any score.
_NOT_DROPPED_FOR_CLASS: Final = patterns.words(
    "a body span img i b em strong sup sub cite abbr time small code label font"
)
_BYLINE: Final = ",".join(
    ['[rel="author"]', '[itemprop*="author"]']
    + [f'[{attr}*="{word}"]' for word in ("byline", "author") for attr in ("class", "id")]
)
# Readability keeps unlikely candidates inside these.
_SPARED_INSIDE: Final = frozenset({"table", "code"})
_WORD: Final = re.compile(r"\w+")


def prune(body: LexborNode, *, strip_unlikely: bool, title: str | None) -> None:
    """Drop, in place, what cannot be main content; `strip_unlikely` is relaxed on retries."""
    for node in body.css(_HIDDEN):
        attrs = node.attributes
        if _is_hidden(attrs) or (
            attrs.get("role") == "dialog" and attrs.get("aria-modal") == "true"
        ):
            node.decompose(recursive=False)
    if strip_unlikely:
        # Pages repeat a few class names on thousands of elements: match each string once.
        unlikely: dict[str, bool] = {}
        spared = Within(lambda node: node.tag in _SPARED_INSIDE)
        for node in body.css("[class],[id]"):
            check()
            if node.tag in _NOT_DROPPED_FOR_CLASS:
                continue
            attrs = node.attributes
            match = f"{attrs.get('class') or ''} {attrs.get('id') or ''}"
            found = unlikely.get(match)
            if found is None:
                found = unlikely[match] = _is_unlikely(match.lower())
            if found and not spared(node):
                node.decompose(recursive=False)
    byline = _first(body, _BYLINE, lambda node: 0 < len(node.text(strip=True)) < 100)
    if byline is not None:
        byline.decompose(recursive=False)
    if strip_unlikely:
        for node in body.css("[role]"):
            check()
            if node.attributes.get("role") in patterns.UNLIKELY_ROLES:
                node.decompose(recursive=False)
    if title:
        heading = _first(body, "h1,h2", lambda node: _similarity(title, inner_text(node)) > 0.75)
        if heading is not None:
            heading.decompose(recursive=False)


def _first(
    body: LexborNode, selector: str, test: Callable[[LexborNode], bool]
) -> LexborNode | None:
    """Return the first match of `selector` that passes `test`.

    Usually the very first match does, and lexbor stops its walk there.
    """
    first = body.css_first(selector)
    if first is None or test(first):
        return first
    return next(filter(test, body.css(selector)[1:]), None)


def _is_unlikely(match: str) -> bool:
    return bool(
        patterns.UNLIKELY_CANDIDATES.search(match) and not patterns.MAYBE_CANDIDATE.search(match)
    )


def _is_hidden(attrs: dict[str, str | None]) -> bool:
    if "hidden" in attrs:
        return True
    style = attrs.get("style")
    if style and patterns.DISPLAY_HIDDEN.search(style):
        return True
    return attrs.get("aria-hidden") == "true" and "fallback-image" not in (attrs.get("class") or "")


def _similarity(reference: str, text: str) -> float:
    """Readability's title/heading similarity: the share of `text` words also in `reference`."""
    ref = set(_WORD.findall(reference.lower()))
    words = _WORD.findall(text.lower())
    if not ref or not words:
        return 0.0
    unique = [word for word in words if word not in ref]
    return 1.0 - len(" ".join(unique)) / len(" ".join(words))
