"""Cleaning of the chosen article: Readability's prepArticle, minus what Markdown ignores anyway."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field
from typing import Final

from selectolax.lexbor import LexborNode

from .. import patterns
from ..budget import check
from ..dom import (
    Tags,
    class_weight,
    descendants,
    element_children,
    has_descendant,
    inner_text,
    match_string,
    select,
    tags,
)
from .density import link_density

_HEADINGS: Final = tags("h1,h2,h3,h4,h5,h6")
# Readability's test for content left in a block: text in any of
# "span,li,td,blockquote,dl,div,img,ol,p,pre,table,ul", which `_CENSUS` mostly lists already.
_TEXTISH_REST: Final = tags("span,td,blockquote,dl,pre")
_SHARE: Final = '[class*="share"],[id*="share"]'
_CENSUS: Final = tags("p,img,li,div,table,ul,ol")
_TABLE: Final = tags("table")
_CELLS: Final = tags("td,th")
_EMBEDS: Final = tags("img,embed,object,iframe")
# The link-text share above which a block is a link farm when cleaning by links alone.
_LINK_FARM: Final = 0.5


def prepare_article(
    nodes: list[LexborNode],
    clean_conditionally: bool,
    weight_classes: bool,
    paragraph_divs: Set[int],
    *,
    links_only: bool = False,
) -> None:
    """Strip boilerplate left inside the article's nodes, in place; ``links_only`` cleans
    conditionally by link density alone."""
    tables = _DataTables()
    for root in nodes:
        for junk in root.css("footer,aside,nav"):
            junk.decompose(recursive=False)
        for node in descendants(root, _SHARE):
            if patterns.SHARE_ELEMENTS.search(match_string(node)) and len(node.text()) < 500:
                node.decompose(recursive=False)
        if clean_conditionally:
            cleaner = _ConditionalCleaner(weight_classes, paragraph_divs, tables, links_only)
            cleaner.clean(root, "form,fieldset")
        if weight_classes:
            for heading in root.css("h1,h2"):
                if class_weight(heading) < 0:
                    heading.decompose(recursive=False)
        if clean_conditionally:
            cleaner.clean(root, "table")
            cleaner.clean(root, "ul,ol")
            cleaner.clean(root, "div")
        for paragraph in root.css("p"):
            if not paragraph.text(strip=True) and not has_descendant(paragraph, _EMBEDS):
                paragraph.decompose(recursive=False)


class _DataTables:
    """Remembers which tables hold data rather than layout, as Readability's markDataTables."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[int, bool] = {}

    def is_data(self, table: LexborNode) -> bool:
        key = table.mem_id
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = _looks_like_data_table(table)
        return known


def _looks_like_data_table(table: LexborNode) -> bool:
    attrs = table.attrs
    if attrs.sget("role") == "presentation" or attrs.sget("datatable") == "0":
        return False
    if attrs.sget("summary"):
        return True
    caption = table.css_first("caption")
    if caption is not None and caption.text(strip=True):
        return True
    if table.css_first("col,colgroup,tfoot,thead,th") is not None:
        return True
    if has_descendant(table, _TABLE):
        return False
    rows = table.css("tr")
    if len(rows) == 1:
        return False
    columns = max((len(select(row, _CELLS)) for row in rows[:50]), default=0)
    if len(rows) >= 10 or columns > 4:
        return True
    return len(rows) * columns > 10


class _ConditionalCleaner:
    """Readability's cleanConditionally: drop blocks whose shape says boilerplate.

    Embeds and form inputs were stripped before scoring, so their rules have nothing to count.
    """

    __slots__ = ("_above", "_links_only", "_paragraph_divs", "_tables", "_weight_classes")

    def __init__(
        self,
        weight_classes: bool,
        paragraph_divs: Set[int],
        tables: _DataTables,
        links_only: bool = False,
    ) -> None:
        self._weight_classes = weight_classes
        self._links_only = links_only
        self._paragraph_divs = paragraph_divs
        self._tables = tables
        # By mem_id, for a node and its ancestors: (code or a data table among them, a figure).
        self._above: dict[int, tuple[bool, bool]] = {}

    def clean(self, root: LexborNode, selector: str) -> None:
        """Drop the matches of `selector` that look like boilerplate, innermost first."""
        for node in reversed(root.css(selector)):
            check()
            if node.mem_id in self._paragraph_divs:
                continue
            if self._should_remove(node):
                node.decompose(recursive=False)

    def _should_remove(self, node: LexborNode) -> bool:
        tag = node.tag or ""
        weight = class_weight(node) if self._weight_classes else 0
        raw = node.text()
        if not self._links_only and weight >= 0 and raw.count(",") >= 10:
            return False
        if tag == "table" and self._tables.is_data(node):
            return False
        kept, in_figure = self._ancestry(node)
        if kept:
            return False
        census = self._census(node)
        if census is None:
            return False
        if self._links_only:
            return link_density(node) > _LINK_FARM
        if weight < 0:
            return True
        text = " ".join(raw.split())
        if patterns.AD_WORDS.match(text) or patterns.LOADING_WORDS.match(text):
            return True
        return self._judge(node, tag, weight, raw, len(text), in_figure, census)

    def _ancestry(self, node: LexborNode) -> tuple[bool, bool]:
        """(inside code or a data table, so kept; inside a figure).

        Each ancestor's answer is remembered, so the walk up stops at the first one already
        answered: linear in the nodes judged, however deep they nest. Data tables are still
        judged from the nearest up, and none above the nearest keeping ancestor.
        """
        known = self._above
        path: list[LexborNode] = []
        kept = in_figure = False
        parent = node.parent
        while parent is not None:
            answer = known.get(parent.mem_id)
            if answer is not None:
                kept, in_figure = answer
                break
            path.append(parent)
            above = parent.tag
            if above in ("code", "pre") or (above == "table" and self._tables.is_data(parent)):
                kept = True
                break
            parent = parent.parent
        for passed in reversed(path):
            in_figure = not kept and (in_figure or passed.tag == "figure")
            known[passed.mem_id] = (kept, in_figure)
        return kept, in_figure

    def _census(self, node: LexborNode) -> _Census | None:
        """What the node holds; None when it holds a data table (then it is kept)."""
        census = _Census(descendants(node, _CENSUS))
        for element in census.nodes:
            found = element.tag
            if found == "p":
                census.paragraphs += 1
            elif found == "img":
                census.images += 1
            elif found == "li":
                census.items += 1
            elif found == "div":
                census.paragraphs += element.mem_id in self._paragraph_divs
            elif found == "table":
                if self._tables.is_data(element):
                    return None
            else:
                census.lists.append(element)
        return census

    def _judge(
        self,
        node: LexborNode,
        tag: str,
        weight: int,
        raw: str,
        length: int,
        in_figure: bool,
        census: _Census,
    ) -> bool:
        images, items, paragraphs = census.images, census.items, census.paragraphs
        is_list = tag in ("ul", "ol")
        if not is_list and length and census.lists:
            is_list = sum(len(inner_text(found)) for found in census.lists) / length > 0.9
        remove = (not in_figure and images > 1 and paragraphs / images < 0.5) or (
            not is_list and items - 100 > paragraphs
        )
        if not remove:
            density = link_density(node)
            remove = (
                (not is_list and weight < 25 and density > 0.2)
                or (weight >= 25 and density > 0.5)
                or (
                    not is_list
                    and not in_figure
                    and length < 25
                    and (images == 0 or images > 2)
                    and density > 0
                    and _text_density(node, _HEADINGS, length) < 0.9
                )
            )
        if not remove and images == 0:
            remove = not _has_text_in_blocks(node, raw, census.nodes)
        if remove and is_list:
            if any(len(element_children(child)) > 1 for child in element_children(node)):
                return True
            if images == items:
                return False
        return remove


@dataclass(slots=True)
class _Census:
    """The blocks a node holds, counted for the cleaning verdict."""

    nodes: list[LexborNode]
    paragraphs: int = 0
    images: int = 0
    items: int = 0
    lists: list[LexborNode] = field(default_factory=list)


def _has_text_in_blocks(node: LexborNode, raw: str, census: list[LexborNode]) -> bool:
    """Tell whether any `_TEXTISH` descendant holds text; the cheap answers come first.

    Without text there is none to hold; the census elements are most of `_TEXTISH` and are in
    hand already; only the rest of the tags need a walk.
    """
    if raw.isspace() or not raw:
        return False
    if any(element.text(strip=True, skip_empty=True) for element in census):
        return True
    return any(
        child.text(strip=True, skip_empty=True) for child in descendants(node, _TEXTISH_REST)
    )


def _text_density(node: LexborNode, selector: Tags, length: int) -> float:
    if length == 0:
        return 0.0
    return sum(len(inner_text(child)) for child in descendants(node, selector)) / length
