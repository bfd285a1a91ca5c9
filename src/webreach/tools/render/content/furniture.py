"""Page furniture left inside the chosen article, found and dropped after candidate selection.

Readability's scoring picks the container that holds the story, and news containers also hold
menus, related-link lists, tag rows and gallery captions repeated per slide. Each rule here
proposes elements to drop; a rule is applied whole or not at all, and only while what is left is
still at least a short article. (Furniture named by class or id is mostly gone already: the
scoring pass weighs and strips those names.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from selectolax.lexbor import LexborNode

from ..budget import check
from ..dom import Within, has_ancestor
from .density import measure, text_length

# What a rule may never cut an article below: this many characters, or half of it if shorter.
SHORT_ARTICLE: Final = 500
# A paragraph of the story itself: this long, and mostly not link text.
_PROSE_CHARS: Final = 100
_PROSE_LINK_DENSITY: Final = 0.25
# A block of links: this much of its text linked, unless it reads as a sentence.
_LINK_BLOCK_DENSITY: Final = 0.6
# A list of links: most items mostly linked, and this much of the whole linked.
_LINKED_ITEM_DENSITY: Final = 0.5
_LINKED_ITEMS_SHARE: Final = 0.8
_LINK_LIST_DENSITY: Final = 0.6
# A menu: at least this many items, each all but wholly a link of at most a few words on average.
_MENU_ITEMS: Final = 3
_MENU_ITEM_DENSITY: Final = 0.9
_MENU_WORDS: Final = 3
# A teaser (a linked headline with a date after it) is still this much link text.
_TEASER_DENSITY: Final = 0.4
_SENTENCE_ENDS: Final = frozenset(".!?…。！？")
_ITEMS: Final = frozenset({"li", "dt", "dd"})
_LIST_ITEM: Final = frozenset({"li"})


@dataclass(slots=True)
class Story:
    """The chosen nodes, with their blocks in document order and where the prose starts and ends.

    Only the blocks from either end up to the first prose block are tested for prose: that is
    all `first_prose` and `last_prose` need.
    """

    blocks: list[LexborNode]
    prose: list[bool | None]
    first_prose: int = -1
    last_prose: int = -1

    @classmethod
    def of(cls, nodes: list[LexborNode]) -> Story:
        blocks = [node for root in nodes for node in root.css(_BLOCKS)]
        story = cls(blocks, [None] * len(blocks))
        story._find_prose()
        return story

    def _is_prose(self, position: int) -> bool:
        known = self.prose[position]
        if known is None:
            node = self.blocks[position]
            known = self.prose[position] = node.tag not in _NOT_PROSE and _is_prose(node)
        return known

    def _find_prose(self) -> None:
        count = len(self.blocks)
        first = next((at for at in range(count) if self._is_prose(at)), -1)
        last = -1 if first < 0 else next(at for at in reversed(range(count)) if self._is_prose(at))
        self.first_prose, self.last_prose = first, last

    def outside_the_story(self, position: int) -> bool:
        """Tell whether the block at `position` is before the first paragraph or after the last."""
        return self.first_prose >= 0 and not self.first_prose <= position <= self.last_prose

    def drop(self, nodes: list[LexborNode]) -> None:
        """Remove the nodes from the tree, and the blocks inside them from the story."""
        dropped = {block.mem_id for node in nodes for block in node.css(_BLOCKS)}
        kept = [
            position for position, block in enumerate(self.blocks) if block.mem_id not in dropped
        ]
        self.blocks = [self.blocks[position] for position in kept]
        self.prose = [self.prose[position] for position in kept]
        self._find_prose()
        for node in nodes:
            node.decompose(recursive=False)


# lexbor's `:has` searches the subtree once per name in turn: the name that nests the element
# in itself comes first (a table around a cell, a div around a div), so that nested cells and
# divs are answered near their top and each subtree is searched through about once.
_LEAF_TD: Final = "td:not(:has(table,p,div,ul,ol,dl,blockquote,pre,section,article))"
_LEAF_DIV: Final = "div:not(:has(div,p,table,ul,ol,dl,blockquote,pre,section,article))"
# The blocks that may hold the story's paragraphs, and lists, in document order.
_BLOCKS: Final = f"p,ul,ol,dl,pre,blockquote,figcaption,h1,h2,h3,h4,h5,h6,{_LEAF_TD},{_LEAF_DIV}"
_LISTS: Final = frozenset({"ul", "ol", "dl"})
_NOT_PROSE: Final = _LISTS | {"figcaption", "h1", "h2", "h3", "h4", "h5", "h6"}


def _is_prose(node: LexborNode) -> bool:
    if has_ancestor(node, _LIST_ITEM, max_depth=3):
        return False  # a teaser's text in a list of stories, not the story's
    text = node.text()
    if len(text) < _PROSE_CHARS or len(" ".join(text.split())) < _PROSE_CHARS:
        return False
    return measure(node).density < _PROSE_LINK_DENSITY


Rule = Callable[[Story], list[LexborNode]]


def link_blocks(story: Story) -> list[LexborNode]:
    """Blocks of links before or after the story: menus, related stories, "more from" boxes.

    Links between the story's paragraphs are the story's own and stay.
    """
    found = []
    for position, node in enumerate(story.blocks):
        check()
        if story.outside_the_story(position):
            if _is_link_block(node):
                found.append(node)
        elif node.tag in _LISTS and _is_menu(node):
            found.append(node)
    return found


def _is_menu(node: LexborNode) -> bool:
    """A list of a few words per item, every item a link: a menu, wherever it stands."""
    items = [child for child in node.iter() if child.tag in _ITEMS]
    if len(items) < _MENU_ITEMS:
        return False
    words = 0
    for item in items:
        if measure(item).density < _MENU_ITEM_DENSITY:
            return False
        words += len(item.text().split())
    return words / len(items) <= _MENU_WORDS


def _is_link_block(node: LexborNode) -> bool:
    """A list of links, a row of links, or a teaser."""
    if node.tag in _LISTS:
        items = [child for child in node.iter() if child.tag in _ITEMS]
        if not items:
            return False
        linked = sum(1 for item in items if measure(item).density >= _LINKED_ITEM_DENSITY)
        return (
            linked / len(items) >= _LINKED_ITEMS_SHARE
            and measure(node).density >= _LINK_LIST_DENSITY
        )
    density = measure(node).density
    if density >= _LINK_BLOCK_DENSITY:
        return not _is_linked_sentence(node)
    return density >= _TEASER_DENSITY and _is_teaser(node)


def _is_teaser(node: LexborNode) -> bool:
    """A linked headline with a date or section after it, and no sentence of its own."""
    text = node.text(strip=True)
    if not text or text[-1] in _SENTENCE_ENDS:
        return False
    for child in node.traverse(include_text=True):
        if child.tag == "-text" and (child.text_content or "").strip():
            return _in_link(node)(child)
    return False


def _is_linked_sentence(node: LexborNode) -> bool:
    """Tell whether the block reads as a sentence that links, rather than a row of links.

    It ends as a sentence does and has words of its own outside its links.
    """
    text = node.text(strip=True)
    if not text or text[-1] not in _SENTENCE_ENDS:
        return False
    in_link = _in_link(node)
    own = "".join(
        child.text_content or ""
        for child in node.traverse(include_text=True)
        if child.tag == "-text" and not in_link(child)
    )
    return any(character.isalpha() for character in own)


def _in_link(block: LexborNode) -> Within:
    """Tells whether a text node of `block` sits inside a link."""
    return Within(lambda node: node.tag == "a", stops=(block,))


def repeated_captions(story: Story) -> list[LexborNode]:
    """Captions the story already showed, as galleries repeat them on every slide; the first
    showing stays.

    Only captions: measured on the page sets, short lines that repeat ("Continue reading the
    main story") gain too little to pay for reading every paragraph's text, and pages that
    repeat a paragraph mean it.
    """
    seen: set[str] = set()
    found = []
    for node in story.blocks:
        if node.tag != "figcaption":
            continue
        text = " ".join(node.text().split())
        if text in seen:
            found.append(node)
        elif text:
            seen.add(text)
    return found


RULES: Final[tuple[Rule, ...]] = (link_blocks, repeated_captions)


def remove_furniture(
    nodes: list[LexborNode], total: int, rules: tuple[Rule, ...] | None = None
) -> int:
    """Drop, in place, what the rules (`RULES` unless given) find in an article of `total`
    characters, keeping at least a short article. Returns how many characters were dropped.
    """
    floor = min(SHORT_ARTICLE, total // 2)
    left = total
    story = Story.of(nodes)
    for rule in RULES if rules is None else rules:
        found = _outermost(rule(story))
        cost = sum(map(text_length, found))
        if found and left - cost >= floor:
            story.drop(found)
            left -= cost
    return total - left


def _outermost(nodes: list[LexborNode]) -> list[LexborNode]:
    """Keep the nodes that are not inside another one of them."""
    keys = {node.mem_id for node in nodes}
    inside = Within(lambda node: node.mem_id in keys)
    return [node for node in nodes if not inside(node)]
