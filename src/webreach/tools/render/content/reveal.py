"""Content a reader without JavaScript receives but a browser's scripts would move into place.

A Discourse thread ships its posts inside ``<noscript>``; React's streaming server rendering
sends each late chunk as ``<div hidden id="S:n">`` (``n`` in hexadecimal) for a script to swap
in at ``<template id="B:n">`` (a Suspense boundary, whose fallback it replaces) or
``<template id="P:n">`` (a segment, which has none); a browser that ran no such script (a page
drawn without the page's own scripts) leaves the chunks hidden where they are. Both are real
content, so they are revealed before anything is judged invisible. ``<noscript>`` also carries
tracking pixels and "enable JavaScript" notices, so it is opened only when the rest of the page
has next to no text.
"""

from __future__ import annotations

import re
from typing import Final

from selectolax.lexbor import LexborNode

from .density import text_length

# The page outside `<noscript>` must hold less than this many characters of text, and the
# `<noscript>` blocks this many times as much (and at least `_NOSCRIPT_MIN` characters).
_EMPTY_PAGE: Final = 500
_NOSCRIPT_SHARE: Final = 3
_NOSCRIPT_MIN: Final = 200
_STREAMED: Final = re.compile(r"S:([0-9a-f]+)")
_INVISIBLE: Final = "script,style,template"


def reveal(body: LexborNode) -> None:
    """Open, in place, the `<noscript>` content of a page that has nothing else, and put React's
    streamed chunks where their placeholders stand."""
    _settle_streamed(body)
    blocks = body.css("noscript")
    if not blocks:
        return
    inside = sum(map(text_length, blocks))
    if inside < _NOSCRIPT_MIN:
        return
    outside = _text_outside(body, inside)
    if outside < _EMPTY_PAGE and inside >= _NOSCRIPT_SHARE * max(outside, 1):
        for block in blocks:
            block.unwrap()


def _text_outside(body: LexborNode, noscript: int) -> int:
    """Characters of text the page shows outside `<noscript>`, scripts and styles."""
    hidden = sum(map(text_length, body.css(_INVISIBLE)))
    return text_length(body) - noscript - hidden


def _settle_streamed(body: LexborNode) -> None:
    """Move each streamed chunk to its placeholder, or show it where it is when there is none."""
    chunks = body.css('div[hidden][id^="S:"]')
    if not chunks:
        return
    placeholders = {
        node.attrs.sget("id") or "": node
        for node in body.css('template[id^="B:"],template[id^="P:"]')
    }
    for chunk in chunks:
        found = _STREAMED.fullmatch(chunk.attrs.sget("id") or "")
        if found is None:
            continue
        number = found.group(1)
        boundary = placeholders.get(f"B:{number}")
        placeholder = placeholders.get(f"P:{number}") if boundary is None else boundary
        if placeholder is None:
            del chunk.attrs["hidden"]
            continue
        for child in list(chunk.iter(include_text=True)):
            placeholder.insert_before(child, move=True)
        chunk.decompose(recursive=False)
        if boundary is not None:
            _drop_fallback(boundary)


def _drop_fallback(placeholder: LexborNode) -> None:
    """Drop what the page showed while the chunk was on its way: the nodes after the
    placeholder up to the ``<!--/$-->`` that closes the boundary (nothing when it is missing)."""
    fallback: list[LexborNode] = []
    node = placeholder.next
    while node is not None:
        if node.is_comment_node and (node.comment_content or "").strip() == "/$":
            for dropped in fallback:
                dropped.decompose(recursive=False)
            return
        fallback.append(node)
        node = node.next
