"""Pruning before scoring: what Readability removes while it walks the page.

Hidden elements (but for folded accordion and tab panels, whose text is the page's), modal
dialogs, unlikely candidates (by class/id and ARIA role), the byline and the heading that
repeats the title. Selectors narrow each concern down inside lexbor so that
Python only looks at the few elements it may drop.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import Enum
from functools import lru_cache
from typing import Final

from selectolax.lexbor import LexborNode

from .. import patterns
from ..budget import check
from ..dom import Within, inner_text
from .density import link_density, text_length

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
_CLASS_TOKEN: Final = re.compile(r"[A-Za-z0-9]+")
_CAMEL_WORD: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
# Names at least this long also match as the start or end of a longer word.
_AFFIX_MIN: Final = 4
_VERDICTS: Final = 8192
"""Class strings whose verdict is kept across passes and pages: a site repeats its own, and the
words of one are matched against every unlikely name, prefix and suffix."""
# A block holding more than this share of the page's text is the page, whatever its class says.
_MOST_OF_PAGE: Final = 0.5
_PROSE_LINK_DENSITY: Final = 0.25
_FOLDED_ROLES: Final = frozenset({"region", "tabpanel"})
_FOLDED_NAMES: Final = patterns.words("accordion collapse collapsible collapsed tabpanel")


def prune(
    body: LexborNode,
    *,
    strip_unlikely: bool,
    title: str | None,
    furniture: frozenset[str] = frozenset(),
    furniture_selector: str = "",
    posts: frozenset[str] = frozenset(),
) -> None:
    """Drop, in place, what cannot be main content; `strip_unlikely` is relaxed on retries.

    `furniture` names more layout words that are furniture on this kind of page (a shop's cart
    and reviews beside its product), dropped as the common ones are; `furniture_selector`
    matches more of it by what it does (a form that edits the cart); `posts` names the
    unlikely words that name this kind of page's content (a thread's posts are its comments).
    """
    if furniture_selector:
        for node in body.css(furniture_selector):
            node.decompose(recursive=False)
    for node in body.css(_HIDDEN):
        attrs = node.attributes
        if (_is_hidden(attrs) and not _is_folded(attrs)) or (
            attrs.get("role") == "dialog" and attrs.get("aria-modal") == "true"
        ):
            node.decompose(recursive=False)
    # Pages repeat a few class names on thousands of elements: match each string once.
    unlikely: dict[str, _Verdict] = {}
    spared = Within(lambda node: node.tag in _SPARED_INSIDE)
    most = _MOST_OF_PAGE * text_length(body) if strip_unlikely else 0.0
    for node in body.css("[class],[id]"):
        check()
        if node.tag in _NOT_DROPPED_FOR_CLASS:
            continue
        attrs = node.attributes
        match = f"{attrs.get('class') or ''} {attrs.get('id') or ''}"
        found = unlikely.get(match)
        if found is None:
            found = unlikely[match] = _verdict(match, furniture, posts)
        # Names only furniture carries are dropped on every pass, the others on the first.
        if found is _Verdict.KEPT or spared(node):
            continue
        if found is _Verdict.SURE or (strip_unlikely and not _is_the_page(node, most)):
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


def _is_the_page(node: LexborNode, most: float) -> bool:
    """Tell whether a block holds most of the page's text, and as prose rather than links."""
    return text_length(node) > most and link_density(node) < _PROSE_LINK_DENSITY


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


class _Verdict(Enum):
    KEPT = "kept"
    UNLIKELY = "unlikely"
    SURE = "sure"
    """Dropped even when it holds most of the page: the name says only furniture."""


@lru_cache(maxsize=_VERDICTS)
def _verdict(match: str, furniture: frozenset[str], posts: frozenset[str]) -> _Verdict:
    if not is_unlikely(match, furniture, posts):
        return _Verdict.KEPT
    lowered = match.lower()
    if any(phrase in lowered for phrase in patterns.UNLIKELY_PHRASES) or (
        class_words(match) & patterns.UNLIKELY_SURE
    ):
        return _Verdict.SURE
    return _Verdict.UNLIKELY


def is_unlikely(
    match: str, furniture: frozenset[str] = frozenset(), posts: frozenset[str] = frozenset()
) -> bool:
    """Tell whether a class/id string names furniture: one of its words is, begins or ends with
    an unlikely name (``site-footer``, ``commentList``, ``relatedposts``), and no content name
    is in it.

    Words, not substrings: ``seofootercopy`` names no footer, ``standard`` no ``and``.
    """
    names = class_words(match)
    lowered = match.lower()
    unlikely = (
        any(phrase in lowered for phrase in patterns.UNLIKELY_PHRASES)
        or _names_any(names, patterns.UNLIKELY_WORDS - posts)
        or (bool(furniture) and _names_any(names, furniture))
    )
    return unlikely and not patterns.MAYBE_CANDIDATE.search(lowered)


def class_words(match: str) -> frozenset[str]:
    """The lowercased words of class and id values, split at punctuation and at camelCase (both
    ``mathjax`` and ``math``, ``jax`` for ``MathJax``)."""
    tokens = _CLASS_TOKEN.findall(match)
    split = (word for token in tokens for word in _CAMEL_WORD.findall(token))
    return frozenset(word.lower() for word in (*tokens, *split))


def _names_any(names: frozenset[str], vocabulary: frozenset[str]) -> bool:
    """Tell whether a word is in `vocabulary`, or begins or ends with one of its longer names."""
    if names & vocabulary:
        return True
    affixes = _affixes(vocabulary)
    return affixes is not None and any(
        affixes.search(name) for name in names if len(name) > _AFFIX_MIN
    )


@lru_cache(maxsize=16)
def _affixes(vocabulary: frozenset[str]) -> re.Pattern[str] | None:
    """One pattern for a word that begins or ends with one of `vocabulary`'s longer names."""
    known = sorted((re.escape(name) for name in vocabulary if len(name) >= _AFFIX_MIN), key=len)
    if not known:
        return None
    either = "|".join(reversed(known))
    return re.compile(f"^(?:{either})|(?:{either})$")


def _is_folded(attrs: dict[str, str | None]) -> bool:
    """Tell whether a hidden element is a folded panel (an accordion's or a tab's), whose
    text is the page's own: a product's specifications, a document's other tab."""
    if attrs.get("role") in _FOLDED_ROLES:
        return True
    match = f"{attrs.get('class') or ''} {attrs.get('id') or ''}"
    return bool(class_words(match) & _FOLDED_NAMES)


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
