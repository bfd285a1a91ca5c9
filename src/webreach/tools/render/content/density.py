"""Link density: the share of an element's text that sits inside links.

Lengths are of the stripped text fragments: a close, much cheaper stand-in for Readability's
whitespace-collapsed lengths, used alike for an element and its links so the ratio holds. In-page
anchors (`href="#..."`) count 0.3 of their length.

Every measure walks a subtree, and top candidates nest (the article, its wrapper, the wrapper's
wrapper), so `NestedDensities` measures an ancestor as its measured descendant plus what lies
beside it, instead of walking the descendant again.
"""

from __future__ import annotations

from typing import NamedTuple

from selectolax.lexbor import LexborNode

from ..dom import select, tags

_LINKS = tags("a")
# Beyond this many elements beside the path from a measured descendant, one walk of the whole
# ancestor is cheaper than a walk per sibling.
_MAX_SIBLINGS = 64
# Below a measured ancestor, only this many: nested wrappers hold little beside each other,
# while a measure from the side of a large sibling would cost more than the node's own.
_MAX_SIBLINGS_BELOW = 4
# How far above a measured element an ancestor is still looked for.
_MAX_DEPTH = 12


class Lengths(NamedTuple):
    """Stripped text length of a subtree, and how much of it is in links and in-page anchors."""

    text: int
    linked: int
    anchors: int

    @property
    def density(self) -> float:
        return (self.linked + 0.3 * self.anchors) / self.text if self.text else 0.0


def text_length(node: LexborNode) -> int:
    """Return the summed length of the node's stripped text fragments.

    Whitespace-only fragments strip to nothing, so lexbor may skip them before they become
    Python strings.
    """
    return len(node.text(strip=True, skip_empty=True))


def measure(node: LexborNode, *, text_always: bool = False) -> Lengths:
    """Measure the node's text and link text: one selector walk, and a text walk if needed.

    Without links the density is 0 whatever the text, so the text is only measured when
    `text_always` asks for it (as an ancestor's sum does).
    """
    if not node.is_element_node:
        return Lengths(text_length(node), 0, 0)
    text: int | None = None
    if text_always:
        text = text_length(node)
        if text == 0:  # nor any link text then
            return _EMPTY
    links = select(node, _LINKS)
    if not links:
        return Lengths(text or 0, 0, 0)
    linked = anchors = 0
    for link in links:
        length = text_length(link)
        if link.attrs.sget("href").startswith("#"):
            anchors += length
        else:
            linked += length
    return Lengths(text_length(node) if text is None else text, linked, anchors)


_EMPTY = Lengths(0, 0, 0)


def link_density(node: LexborNode) -> float:
    """Return the share of the node's text inside links (in-page anchors count 0.3)."""
    return measure(node).density


class NestedDensities:
    """Link densities of elements that often nest.

    A measure stays valid for as long as the element's subtree is left unchanged; the tree may
    change elsewhere, even drop the element (which is then no longer found below its former
    ancestors).
    """

    __slots__ = ("_below", "_known")

    def __init__(self) -> None:
        self._known: dict[int, Lengths] = {}
        # For an ancestor (by mem_id): its largest measured descendant with no link between.
        self._below: dict[int, tuple[LexborNode, Lengths]] = {}

    def link_density(self, node: LexborNode) -> float:
        return self.lengths(node).density

    def lengths(self, node: LexborNode) -> Lengths:
        key = node.mem_id
        found = self._known.get(key)
        if found is not None:
            return found
        inner = self._below.get(key)
        if inner is not None:
            beside = _beside_path(inner[0], node)
            if beside is not None:
                found = _add(inner[1], beside)
        else:
            outer = self._measured_above(node)
            if outer is not None:
                beside = _beside_path(node, outer[0], _MAX_SIBLINGS_BELOW)
                if beside is not None:
                    found = _subtract(outer[1], beside)
        if found is None:
            found = measure(node, text_always=True)
        self._known[key] = found
        self._register(node, found)
        return found

    def _measured_above(self, node: LexborNode) -> tuple[LexborNode, Lengths] | None:
        """The nearest measured ancestor with no link between, as `_register` records them the
        other way: nested candidates measured outermost first then cost a walk each beside the
        path, not one of their whole subtree."""
        parent = node.parent
        for _ in range(_MAX_DEPTH):
            if parent is None or parent.tag == "a":
                return None
            found = self._known.get(parent.mem_id)
            if found is not None:
                return parent, found
            parent = parent.parent
        return None

    def _register(self, node: LexborNode, lengths: Lengths) -> None:
        parent = node.parent
        for _ in range(_MAX_DEPTH):
            if parent is None or parent.tag == "a":
                return
            key = parent.mem_id
            known = self._below.get(key)
            if known is None or known[1].text < lengths.text:
                self._below[key] = (node, lengths)
            parent = parent.parent


def _add(lengths: Lengths, other: Lengths) -> Lengths:
    return Lengths(
        lengths.text + other.text, lengths.linked + other.linked, lengths.anchors + other.anchors
    )


def _subtract(lengths: Lengths, other: Lengths) -> Lengths:
    return Lengths(
        lengths.text - other.text, lengths.linked - other.linked, lengths.anchors - other.anchors
    )


def _beside_path(inner: LexborNode, outer: LexborNode, most: int = _MAX_SIBLINGS) -> Lengths | None:
    """Measure what `outer` holds besides `inner`: the siblings along the path between them.

    Returns None when the siblings are so many that measuring `outer` whole is cheaper.
    """
    text = linked = anchors = siblings = 0
    child_key = inner.mem_id
    outer_key = outer.mem_id
    parent = inner.parent
    while parent is not None:
        for sibling in parent.iter(include_text=True):
            if sibling.mem_id == child_key:
                continue
            siblings += 1
            if siblings > most:
                return None
            found = measure(sibling, text_always=True)
            text += found.text
            linked += found.linked
            anchors += found.anchors
        child_key = parent.mem_id
        if child_key == outer_key:
            return Lengths(text, linked, anchors)
        parent = parent.parent
    return None
