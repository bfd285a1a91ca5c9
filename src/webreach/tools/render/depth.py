"""A cap on how deeply a page nests, applied to its source before lexbor builds the tree.

Building the tree is quadratic in nesting depth (each block start tag searches the stack of open
elements: 40,000 nested `<div>`s take lexbor 2 s, a 10 MB page hours), and every subtree
measure after it grows with depth too. Browsers cap their DOM at 512 levels for the same
reason; here start tags past `MAX_DEPTH` open elements are dropped from the source, so their
content becomes their deepest kept ancestor's and the page keeps all of its text.

This is a coarse, linear estimate of the parser's stack of open elements, not a parser: it only
has to err towards deeper (void elements, raw text, comments and the commonest implied end
tags are followed, everything else is assumed to stay open), so that lexbor never nests deeper
than the cap by more than the few elements it implies itself (`tbody`, reconstructed
formatting).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from selectolax.lexbor import LexborHTMLParser

from .patterns import words

MAX_DEPTH: Final = 256
"""Open elements kept; real pages rarely pass 60, Blink and WebKit stop nesting at 512."""

# A tag's end is looked for up to the next "<" only, so that the scan stays linear; past one,
# `str.find` looks further.
_TAG: Final = re.compile(r"<(?:(!--)|(/?)([A-Za-z][^\t\n\f\r />]*)([^<>]*>)?)")
_VOID: Final = words(
    "area base basefont bgsound br col embed frame hr image img input keygen link meta param "
    "source track wbr"
)
# Their content is text up to their end tag (plaintext: the rest of the page), outside SVG and
# MathML, where title and style hold markup.
_RAW_TEXT: Final = words("script style textarea title xmp iframe noembed noframes")
_FOREIGN: Final = ("svg", "math")
# Start tags that close an open `<p>` ("close a p element" in the HTML standard).
_CLOSE_P: Final = words(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption "
    "figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr listing main menu nav ol p pre "
    "search section summary table ul li dd dt"
)
# A start tag that closes the same open element right above it (an implied end tag).
_CLOSE_SIBLING: Final[dict[str, frozenset[str]]] = {
    "li": words("li"),
    "dt": words("dt dd"),
    "dd": words("dt dd"),
    "option": words("option"),
    "optgroup": words("option optgroup"),
    "tr": words("tr td th"),
    "td": words("td th"),
    "th": words("td th"),
}


def cap_depth(html: str, limit: int = MAX_DEPTH) -> str:
    """Return `html` with the start and end tags of elements nested past `limit` removed.

    A page within the cap is returned as it is.
    """
    cuts = _cuts(html, limit)
    if not cuts:
        return html
    parts: list[str] = []
    kept = 0
    for start, end in cuts:
        parts.append(html[kept:start])
        kept = end
    parts.append(html[kept:])
    return " ".join(parts)


def _cuts(html: str, limit: int) -> list[tuple[int, int]]:
    """The spans of the tags to remove, in order: start tags past `limit` and their end tags."""
    lowered: str | None = None
    elements = _OpenElements(limit)
    cuts: list[tuple[int, int]] = []
    position = 0
    for found in _TAG.finditer(html):
        start = found.start()
        if start < position:
            continue
        comment, slash, name, rest = found.groups()
        if comment:
            close = html.find("-->", found.end())
            if close < 0:
                break
            position = close + 3
            continue
        if rest is None:
            end = html.find(">", found.end())
            if end < 0:
                break
            position = end + 1
        else:
            position = found.end()
        name = name.lower()
        if slash:
            if not elements.end(name):
                cuts.append((start, position))
            continue
        if name in _VOID or html[position - 2] == "/":
            continue
        if name in _RAW_TEXT and not elements.in_foreign():
            if lowered is None:
                lowered = html.lower()
            position = lowered.find("</" + name, position)
            if position < 0:
                break
            continue
        if name == "plaintext":
            break
        if not elements.start(name):
            cuts.append((start, position))
    return cuts


class _OpenElements:
    """The estimate of the parser's stack of open elements, and the start tags left out past
    the cap, whose end tags are left out with them."""

    __slots__ = ("_count", "_dropped", "_limit", "_stack")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._stack: list[str] = []
        self._count: dict[str, int] = {}
        self._dropped: dict[str, int] = {}

    def in_foreign(self) -> bool:
        """Inside SVG or MathML, where the raw-text elements hold markup."""
        return any(self._count.get(tag) for tag in _FOREIGN)

    def start(self, name: str) -> bool:
        """Open `name` once the elements its start tag closes are closed; False: it is past the
        cap and left out."""
        stack, count = self._stack, self._count
        if stack and stack[-1] == "p" and name in _CLOSE_P:
            count[stack.pop()] -= 1
        siblings = _CLOSE_SIBLING.get(name)
        while siblings and stack and stack[-1] in siblings:
            count[stack.pop()] -= 1
        if len(stack) >= self._limit:
            self._dropped[name] = self._dropped.get(name, 0) + 1
            return False
        stack.append(name)
        count[name] = count.get(name, 0) + 1
        return True

    def end(self, name: str) -> bool:
        """Close `name` and what is open inside it; False: its start tag was left out, and so
        is this end tag."""
        if self._dropped.get(name):
            self._dropped[name] -= 1
            return False
        if self._count.get(name):
            stack, count = self._stack, self._count
            while True:
                top = stack.pop()
                count[top] -= 1
                if top == name:
                    break
        return True


# Below this many "<", a page cannot nest deep enough to make parsing slow (10,000 nested
# `<div>`s parse in 60 ms, outside the GIL), so the page is parsed first and the cap applied
# only if the tree is deep: what the estimate above would cost every page is spared.
_PARSE_FIRST_TAGS: Final = 10_000


@lru_cache(maxsize=8)
def _too_deep(limit: int) -> str:
    """A selector for an element `limit` levels down. lexbor matches from the right, so each
    element looks up at most its own depth (about 15 on real pages); only last children are
    looked at, as an element that deep has a last sibling just as deep, which spares about a
    quarter of the walk (starting only from leaves, `:not(:has(*))`, costs more in the `:has`
    than it saves)."""
    return "*" + " > *" * (limit - 1) + ":last-child"


def parse_capped(html: str, limit: int = MAX_DEPTH) -> tuple[bytes, LexborHTMLParser]:
    """Parse `html` (as UTF-8, returned too) with its nesting capped at about `limit` levels."""
    if html.count("<") > _PARSE_FIRST_TAGS:
        html = cap_depth(html, limit)
        source = html.encode("utf-8", errors="ignore")
        return source, LexborHTMLParser(source)
    source = html.encode("utf-8", errors="ignore")
    tree = LexborHTMLParser(source)
    # lexbor matches a selector from its right end: each element looks `limit` levels up at
    # most, and only the first one that deep is needed.
    if tree.css_first(_too_deep(limit)) is None:
        return source, tree
    capped = cap_depth(html, limit)
    source = capped.encode("utf-8", errors="ignore")
    return source, LexborHTMLParser(source)
