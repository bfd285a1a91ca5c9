"""Blocks the chosen content says twice, kept once.

A page drawn for several screens holds each layout's copy of its text (`hidden-md-down` beside
`hidden-md-up`, `d-none d-md-block` beside `d-md-none`, a Framer variant per breakpoint), of
which a browser shows one; a thread repeats its posts in quotes and in reply previews. A reader
needs each once; a block repeated within one layout (a refrain, a caption under every item of
one list) is the page's own and stays.
"""

from __future__ import annotations

import re
from typing import Final

from selectolax.lexbor import LexborNode

from ..budget import check
from ..dom import ancestor_ids, has_descendant, match_string, select, tags
from .density import text_length

# Shorter blocks repeat by nature: labels, "Read more", a price.
_MIN_CHARS: Final = 100
_BLOCKS: Final = tags("p,li,h1,h2,h3,h4,h5,h6,blockquote,dd,dt")
# Names of a layout for one kind of screen: a device, or a breakpoint that shows or hides it.
_SCREEN: Final = re.compile(
    r"mobile|desktop|tablet|ssr-variant"
    r"|\bd-(?:sm|md|lg|xl)-(?:none|block|flex)\b"
    r"|\b(?:hidden|visible)-(?:xs|sm|md|lg|xl|up|down)"
    r"|\b(?:sm|md|lg|xl):(?:hidden|block|flex)\b"
)


def drop_copies(nodes: list[LexborNode], anywhere: bool) -> int:
    """Remove each block that repeats an earlier one word for word when either copy sits in a
    layout for one kind of screen, or (``anywhere``: a thread) in another parent; returns the
    characters removed."""
    first: dict[str, LexborNode] = {}
    removed = 0
    for root in nodes:
        for block in select(root, _BLOCKS):
            check()
            if has_descendant(block, _BLOCKS):
                continue
            key = " ".join(block.text().split())
            if len(key) < _MIN_CHARS:
                continue
            earlier = first.setdefault(key, block)
            if earlier is not block and _copies(earlier, block, anywhere):
                removed += text_length(block)
                block.decompose(recursive=False)
    return removed


def _copies(earlier: LexborNode, later: LexborNode, anywhere: bool) -> bool:
    if anywhere and not _same_parent(earlier, later):
        return True
    above = ancestor_ids(earlier)
    shared = later.parent
    while shared is not None and shared.mem_id not in above:
        shared = shared.parent
    stop = shared.mem_id if shared is not None else -1
    return _on_one_screen(earlier, stop) or _on_one_screen(later, stop)


def _same_parent(one: LexborNode, other: LexborNode) -> bool:
    return (
        one.parent is not None
        and other.parent is not None
        and one.parent.mem_id == other.parent.mem_id
    )


def _on_one_screen(node: LexborNode, stop: int) -> bool:
    """Tell whether an ancestor below the one with ``mem_id`` ``stop`` names a screen's layout."""
    parent = node.parent
    while parent is not None and parent.mem_id != stop:
        if _SCREEN.search(match_string(parent)):
            return True
        parent = parent.parent
    return False
