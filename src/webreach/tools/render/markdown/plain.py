"""The renderer's Markdown as plain text: the same reader-mode content, without its markup.

It undoes exactly what ``writer.py`` writes (headings, emphasis, links, code, quotes, rules,
pipe tables, backslash escapes), so callers that want words rather than Markdown (search
indexes, text-only displays) read the same main content as the Markdown callers do.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["markdown_to_text"]

# One alternation, scanned left to right, so an escaped marker is never taken for markup.
_INLINE: Final = re.compile(
    r"\\(?P<escaped>[^\sA-Za-z0-9])"
    r"|(?P<ticks>`+) ?(?P<code>.+?) ?(?P=ticks)"
    r"|\[(?P<label>(?:\\.|[^\]\\])*)\]\((?P<url>[^()\s]*)\)"
    r"|(?P<marker>\*\*|\*|~~)"
)
_FENCE: Final = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,})[^`]*$")
_HEADING: Final = re.compile(r"^#{1,6} ")
_QUOTE: Final = re.compile(r"^(?:> ?)+|^>$")
_RULE_LINE: Final = "---"
_TABLE_RULE: Final = re.compile(r"^\|(?: --- \|)+$")
_CELL_SPLIT: Final = re.compile(r"(?<!\\) \| ")
_MARKUP: Final = re.compile(r"[\\`\[*~|>#]")
"""A character some markup begins with: a line with none is text as it stands."""


def _inline(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        if match["escaped"] is not None:
            return match["escaped"]
        if match["code"] is not None:
            return match["code"]
        if match["label"] is not None:
            return _inline(match["label"])
        return ""

    return _INLINE.sub(replace, text)


def _table_row(line: str) -> str:
    cells = _CELL_SPLIT.split(line[2:-2])
    return "\t".join(_inline(cell.strip()) for cell in cells)


def _line(line: str) -> str | None:
    """One line outside code blocks as text; None drops it (a horizontal rule, a table's rule)."""
    stripped = line.strip()
    if stripped == _RULE_LINE:
        return None
    if not _MARKUP.search(line):
        return line  # prose: nothing below would change it, and most lines are prose
    if _TABLE_RULE.match(stripped):
        return None
    if stripped.startswith("| ") and stripped.endswith(" |"):
        return _table_row(stripped)
    quote = _QUOTE.match(line)
    if quote:
        line = line[quote.end() :]
    line = _HEADING.sub("", line, count=1)
    return _inline(line)


def markdown_to_text(markdown: str) -> str:
    """``markdown`` (as the renderer writes it) without markup: link labels kept, URLs and
    emphasis dropped, code kept verbatim, table cells separated by tabs."""
    out: list[str] = []
    fence: str | None = None
    indent = ""
    for line in markdown.split("\n"):
        if fence is not None:
            if line.strip() == fence:
                fence = None
            else:
                out.append(line.removeprefix(indent))
            continue
        opened = _FENCE.match(line)
        if opened:
            fence, indent = opened["fence"], opened["indent"]
            continue
        text = _line(line)
        if text is not None:
            out.append(text)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()
