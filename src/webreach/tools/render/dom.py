"""Small measurements on lexbor nodes shared by the scoring and the cleaning passes."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from functools import lru_cache
from typing import Final, NamedTuple

from selectolax.lexbor import LexborNode

from . import patterns


def inner_text(node: LexborNode) -> str:
    """Return the node's text with whitespace runs collapsed, as Readability measures it."""
    return " ".join(node.text().split())


def match_string(node: LexborNode) -> str:
    """Return "class id" lowercased, what Readability matches its class/id heuristics against."""
    attrs = node.attributes
    return f"{attrs.get('class') or ''} {attrs.get('id') or ''}".lower()


def class_weight(node: LexborNode) -> int:
    """Score the class and id for content-ish (+25) or boilerplate-ish (-25) words."""
    attrs = node.attributes
    class_, id_ = attrs.get("class"), attrs.get("id")
    return (_value_weight(class_) if class_ else 0) + (_value_weight(id_) if id_ else 0)


@lru_cache(maxsize=4096)
def _value_weight(value: str) -> int:
    """Weigh one class or id value; cached, as pages repeat a few classes on many elements."""
    value = value.lower()
    weight = -25 if patterns.NEGATIVE.search(value) else 0
    return weight + 25 if patterns.POSITIVE.search(value) else weight


def ancestor_ids(node: LexborNode) -> set[int]:
    """The ``mem_id`` of every ancestor: nodes compare by it, not by ``==`` (their HTML)."""
    ids: set[int] = set()
    parent = node.parent
    while parent is not None:
        ids.add(parent.mem_id)
        parent = parent.parent
    return ids


def has_ancestor(node: LexborNode, tags: Collection[str], max_depth: int = 0) -> bool:
    """Tell whether an ancestor (up to `max_depth` levels, 0 meaning any) has one of `tags`."""
    depth = 0
    parent = node.parent
    while parent is not None:
        if max_depth and depth >= max_depth:
            return False
        if parent.tag in tags:
            return True
        parent = parent.parent
        depth += 1
    return False


CARD_LINK_DEPTH: Final = 6
"""How far above a card's title the link that makes the whole card clickable may sit."""


def enclosing_link(node: LexborNode, max_depth: int = CARD_LINK_DEPTH) -> LexborNode | None:
    """The nearest ``<a>`` around `node`, up to `max_depth` levels above it."""
    parent = node.parent
    for _ in range(max_depth):
        if parent is None or parent.tag == "a":
            return parent
        parent = parent.parent
    return None


class Within:
    """Tells whether nodes sit inside an element that passes `test`, remembering the answer for
    every ancestor it passes: a walk up stops at the first one already answered, so a pass that
    asks for each of N nodes takes O(N) steps in all rather than N times the page's depth.

    Answers hold while the ancestors stay (removing other subtrees leaves them be). `stops` are
    answered "no" without a look: the boundary of a walk within a subtree.
    """

    __slots__ = ("_known", "_test")

    def __init__(
        self, test: Callable[[LexborNode], bool], stops: Iterable[LexborNode] = ()
    ) -> None:
        self._test = test
        # By mem_id: whether the node itself or an ancestor passes.
        self._known: dict[int, bool] = {stop.mem_id: False for stop in stops}

    def __call__(self, node: LexborNode) -> bool:
        """Tell whether an ancestor of `node` (not the node itself) passes."""
        known = self._known
        path: list[int] = []
        found = False
        parent = node.parent
        while parent is not None:
            key = parent.mem_id
            answer = known.get(key)
            if answer is not None:
                found = answer
                break
            path.append(key)
            if self._test(parent):
                found = True
                break
            parent = parent.parent
        for key in path:
            known[key] = found
        return found


class Tags(NamedTuple):
    """Element names to look for, and the selector that finds them in lexbor."""

    names: frozenset[str]
    selector: str


def tags(selector: str) -> Tags:
    """Build `Tags` from a selector that lists element names only ("p,img,li")."""
    return Tags(frozenset(selector.split(",")), selector)


# lexbor parses a selector anew on every call, which costs about as much as visiting this many
# elements from Python: smaller subtrees are searched without one.
_SMALL_SUBTREE: Final = 16


def select(node: LexborNode, wanted: Tags) -> list[LexborNode]:
    """Return the elements named in `wanted` in the node's subtree, itself included (as css())."""
    found: list[LexborNode] = []
    for seen, element in enumerate(node.traverse()):
        if seen == _SMALL_SUBTREE:
            return node.css(wanted.selector)
        if element.tag in wanted.names:
            found.append(element)
    return found


def descendants(node: LexborNode, wanted: Tags | str) -> list[LexborNode]:
    """Return matching descendants: lexbor's `css()` also tests the node itself.

    Nodes are compared by `mem_id`: `LexborNode.__eq__` compares serialized HTML.
    """
    found = select(node, wanted) if isinstance(wanted, Tags) else node.css(wanted)
    if found and found[0].mem_id == node.mem_id:
        del found[0]
    return found


def has_descendant(node: LexborNode, wanted: Tags) -> bool:
    """Tell whether a descendant (not the node itself) is named in `wanted`."""
    return first_descendant(node, wanted) is not None


def first_descendant(node: LexborNode, wanted: Tags) -> LexborNode | None:
    """Return the first descendant (not the node itself) named in `wanted`, in document order."""
    for seen, element in enumerate(node.traverse()):
        if seen == _SMALL_SUBTREE:
            break
        if seen and element.tag in wanted.names:
            return element
    else:
        return None
    first = node.css_first(wanted.selector)
    if first is None or first.mem_id != node.mem_id:
        return first
    for child in element_children(node):
        first = child.css_first(wanted.selector)
        if first is not None:
            return first
    return None


def element_children(node: LexborNode) -> list[LexborNode]:
    """Return the element children, skipping text and comments."""
    return [child for child in node.iter() if child.is_element_node]
