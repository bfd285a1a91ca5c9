"""HTML tables as Markdown pipe tables; layout tables are left to the normal block flow."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from selectolax.lexbor import LexborNode

from ..dom import has_descendant, tags

_SECTIONS: Final = frozenset({"thead", "tbody", "tfoot"})
_MAX_SPAN: Final = 50
_TABLE: Final = tags("table")


def render_table(
    table: LexborNode, blocks_of: Callable[[LexborNode], list[str]]
) -> list[str] | None:
    """Return the table's Markdown blocks, or None when it only lays out other content.

    The first row becomes the header row: pipe tables require one, and pages often mark their
    header cells up as plain `<td>`.
    """
    if table.attrs.sget("role") == "presentation" or has_descendant(table, _TABLE):
        return None
    # The shape decides first, so that a layout table's cells are not rendered for nothing.
    shape: list[list[tuple[LexborNode, int]]] = []
    for row in _rows(table):
        cells = [(cell, _span(cell)) for cell in row.iter() if cell.tag in ("td", "th")]
        if cells:
            shape.append(cells)
    width = max((sum(span for _, span in cells) for cells in shape), default=0)
    if width < 2 or len(shape) < 2:
        return None
    grid: list[list[str]] = []
    for cells in shape:
        texts: list[str] = []
        for cell, span in cells:
            text = " ".join(blocks_of(cell)).replace("\n", " ").replace("|", "\\|").strip()
            texts.append(text)
            texts.extend("" for _ in range(span - 1))
        grid.append(texts)
    if not any(any(texts) for texts in grid):
        return []
    lines = []
    for texts in grid:
        texts.extend("" for _ in range(width - len(texts)))
        lines.append("| " + " | ".join(texts) + " |")
    lines.insert(1, "|" + " --- |" * width)
    blocks = ["\n".join(lines)]
    caption = table.css_first("caption")
    if caption is not None:
        blocks[:0] = blocks_of(caption)
    return blocks


def _span(cell: LexborNode) -> int:
    """Return how many columns the cell covers: at least one, at most `_MAX_SPAN`."""
    span = cell.attrs.sget("colspan")
    return max(1, min(int(span), _MAX_SPAN)) if span.isdecimal() else 1


def _rows(table: LexborNode) -> list[LexborNode]:
    rows: list[LexborNode] = []
    for child in table.iter():
        tag = child.tag
        if tag == "tr":
            rows.append(child)
        elif tag in _SECTIONS:
            rows.extend(row for row in child.iter() if row.tag == "tr")
    return rows
