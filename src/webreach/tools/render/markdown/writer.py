"""Markdown emission by one walk over a lexbor subtree.

Block content is gathered as a list of finished Markdown blocks; inline content accumulates in a
paragraph buffer that is flushed whenever a block boundary is met, so mixed content
(`<div>text<p>para</p>tail</div>`) needs no special casing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Final

from selectolax.lexbor import LexborNode

from ..budget import check
from ..dom import enclosing_link, first_descendant, has_descendant, tags
from ..patterns import words
from .tables import render_table
from .urls import UrlResolver

_SPACE: Final = re.compile(r"[ \t\n\r\f\xa0]+")
# What `_SPACE` would change; escaped text has single spaces, so a search mostly spares the sub.
_UNCOLLAPSED: Final = re.compile(r"[\t\n\r\f\xa0]|  ")
_ESCAPE: Final = re.compile(r"[\\`*\[\]]|<(?=[A-Za-z/!?])|(?<!\w)_|_(?!\w)")
_ESCAPE_HINT: Final = re.compile(r"[\\`*\[\]<_]")
_LINE_MARKER: Final = re.compile(r"^(?=[#>+-]|=+ *$)", re.MULTILINE)
_LINE_NUMBER: Final = re.compile(r"^(\d+)([.)])(?=\s|$)", re.MULTILINE)
_SPACES: Final = re.compile(r"  +")
_BLANK_LINES: Final = re.compile(r"\n{3,}")
_AROUND_BREAK: Final = re.compile(r" *\n *")
_LIST_START: Final = re.compile(r"(?:[-*+]|\d+\.) ")
_LANGUAGE: Final = re.compile(r"(?:^|\s)(?:lang(?:uage)?-|brush:\s*)([\w+#.-]+)", re.IGNORECASE)
_BACKTICKS: Final = re.compile(r"`+")

_SKIP: Final = words(
    "script style noscript template head title meta link iframe object embed canvas svg input "
    "select textarea button option datalist video audio source track map area dialog rt rp "
    "-comment -doctype"
)
_BLOCKS: Final = words(
    "div p section article main header footer aside nav address figure figcaption details "
    "summary center form fieldset legend dl dt dd hgroup body html li tbody thead tfoot tr td "
    "th caption search frameset noframes"
)
_HEADINGS: Final = {"h1": "#", "h2": "##", "h3": "###", "h4": "####", "h5": "#####", "h6": "######"}
_CODE: Final = frozenset({"code", "kbd", "samp", "tt"})
_EMPHASIS: Final = {"strong": "**", "b": "**", "em": "*", "i": "*", "del": "~~", "s": "~~"}
_MARKER_CHARS: Final = frozenset("#>+-=0123456789")
_SKIPPED, _BLOCK, _HEADING, _HANDLED, _FORMATTING, _INLINE = range(6)
_KINDS: Final = {
    **dict.fromkeys(_SKIP, _SKIPPED),
    **dict.fromkeys(_BLOCKS, _BLOCK),
    **dict.fromkeys(_HEADINGS, _HEADING),
    **dict.fromkeys(words("ul ol menu pre xmp listing blockquote table hr"), _HANDLED),
    **dict.fromkeys(words("a strong b em i"), _FORMATTING),
}
_BLOCK_INSIDE: Final = tags("p,div,h1,h2,h3,h4,h5,h6,ul,ol,table,pre,blockquote,section,article,li")
_BR: Final = tags("br")
_IMAGE_SOURCES: Final = ("src", "data-src", "data-lazy-src", "data-original", "data-url")
MAX_NESTING: Final = 48
"""Lists, quotes, tables and inline elements nested this deep inside one another are written
as the plain text of the innermost: each level costs a few Python frames, and no page means it."""


def escape_text(text: str) -> str:
    """Collapse HTML whitespace and backslash-escape characters Markdown would interpret."""
    words = text.split()
    if not words:
        return " " if text else ""
    collapsed = " ".join(words)
    if _ESCAPE_HINT.search(collapsed):
        collapsed = _ESCAPE.sub(r"\\\g<0>", collapsed)
    if text[0].isspace():
        collapsed = " " + collapsed
    if text[-1].isspace():
        collapsed += " "
    return collapsed


class MarkdownWriter:
    """Turns lexbor subtrees into Markdown; one instance serves one page."""

    __slots__ = ("_block_handlers", "_blocks_inside", "_images", "_nesting", "_urls")

    def __init__(self, urls: UrlResolver, *, images: bool) -> None:
        self._urls = urls
        self._images = images
        self._nesting = 0
        # By mem_id, for the tree being converted: whether an element holds block content.
        self._blocks_inside: dict[int, bool] = {}
        self._block_handlers: dict[str, Callable[[LexborNode, list[str]], None]] = {
            "ul": self._list,
            "ol": self._list,
            "menu": self._list,
            "pre": self._pre,
            "xmp": self._pre,
            "listing": self._pre,
            "blockquote": self._blockquote,
            "table": self._table,
            "hr": self._rule,
        }

    def convert(self, nodes: Iterable[LexborNode]) -> str:
        """Render the nodes, in order, as one Markdown document."""
        self._blocks_inside.clear()
        blocks: list[str] = []
        para: list[str] = []
        for node in nodes:
            tag = node.tag or ""
            if tag == "-text":
                para.append(escape_text(node.text_content or ""))
            else:
                self._visit(node, tag, blocks, para)
        self._flush(para, blocks)
        self._blocks_inside.clear()
        return "\n\n".join(blocks)

    def blocks_of(self, node: LexborNode) -> list[str]:
        """Render a node's content as separate Markdown blocks."""
        if self._nesting >= MAX_NESTING:
            return _flat_blocks(node)
        self._nesting += 1
        try:
            blocks: list[str] = []
            para: list[str] = []
            self._flow(node, blocks, para)
            self._flush(para, blocks)
            return blocks
        finally:
            self._nesting -= 1

    def _flow(self, node: LexborNode, blocks: list[str], para: list[str]) -> None:
        """Render the node's children; nested blocks (layout divs, however deep) by a stack of
        their children, each flushed as a paragraph once done, or not (a link around blocks)."""
        stack: list[tuple[Iterator[LexborNode], bool]] = [(node.iter(include_text=True), False)]
        while stack:
            children, flush_after = stack[-1]
            for child in children:
                tag = child.tag or ""
                if tag == "-text":
                    text = child.text_content or ""
                    para.append(" " if text.isspace() else escape_text(text))
                    continue
                kind = _KINDS.get(tag, _INLINE)
                if kind == _INLINE or (kind == _FORMATTING and not self._has_block_inside(child)):
                    para.append(self._inline(child, tag))
                elif kind == _FORMATTING:
                    stack.append((child.iter(include_text=True), False))
                    break
                elif kind == _BLOCK:
                    check()
                    self._flush(para, blocks)
                    stack.append((child.iter(include_text=True), True))
                    break
                elif kind != _SKIPPED:
                    self._visit(child, tag, blocks, para)
            else:
                stack.pop()
                if flush_after:
                    self._flush(para, blocks)

    def _visit(self, node: LexborNode, tag: str, blocks: list[str], para: list[str]) -> None:
        kind = _KINDS.get(tag, _INLINE)
        if kind == _INLINE:
            para.append(self._inline(node, tag))
        elif kind == _BLOCK:
            self._flush(para, blocks)
            self._flow(node, blocks, para)
            self._flush(para, blocks)
        elif kind == _FORMATTING:
            if not self._has_block_inside(node):
                para.append(self._inline(node, tag))
            else:
                self._flow(node, blocks, para)
        elif kind == _HEADING:
            self._flush(para, blocks)
            text = " ".join(self._inline_children(node).split())
            url = self._card_link(node) if text and "](" not in text else None
            if text:
                blocks.append(f"{_HEADINGS[tag]} {f'[{text}]({url})' if url else text}")
        elif kind == _HANDLED:
            self._flush(para, blocks)
            self._block_handlers[tag](node, blocks)

    def _card_link(self, heading: LexborNode) -> str | None:
        """The link around a heading and the blocks beside it (a card that is one link, as
        listings draw their items): Markdown has no link around blocks, so the title takes it."""
        link = enclosing_link(heading)
        return None if link is None else self._urls.resolve(link.attrs.get("href"))

    def _has_block_inside(self, node: LexborNode) -> bool:
        """Tell whether block content sits inside an inline element, like a link around a card.

        Once a block is found, every element between it and `node` is known to hold one too:
        inline elements nested around a block are searched once, not once per level.
        """
        child = node.first_child
        if child is None or (child.next is None and child.is_text_node):
            return False
        known = self._blocks_inside
        key = node.mem_id
        answer = known.get(key)
        if answer is not None:
            return answer
        block = first_descendant(node, _BLOCK_INSIDE)
        known[key] = block is not None
        if block is not None:
            parent = block.parent
            while parent is not None and parent.mem_id != key:
                known[parent.mem_id] = True
                parent = parent.parent
        return block is not None

    def _flush(self, para: list[str], blocks: list[str]) -> None:
        if not para:
            return
        text = "".join(para)
        para.clear()
        if "  " in text:
            text = _SPACES.sub(" ", text)
        if "\n" in text:
            text = _BLANK_LINES.sub("\n\n", _AROUND_BREAK.sub("\n", text))
        text = text.strip()
        if not text:
            return
        if "\n" in text or text[0] in _MARKER_CHARS:
            text = _LINE_NUMBER.sub(r"\1\\\2", _LINE_MARKER.sub("\\\\", text))
        blocks.append(text)

    def _inline(self, node: LexborNode, tag: str) -> str:
        if tag == "a":
            return self._link(node)
        if tag in _EMPHASIS:
            return _wrap(self._inline_children(node), _EMPHASIS[tag])
        if tag in _CODE:
            return _code_span(node.text())
        if tag == "br":
            return "\n"
        if tag == "img":
            return self._image(node) if self._images else ""
        kind = _KINDS.get(tag, _INLINE)
        if kind == _SKIPPED:
            return ""
        if kind == _INLINE:
            return self._inline_children(node)
        return f" {self._inline_children(node)} "

    def _inline_children(self, node: LexborNode) -> str:
        only = node.first_child
        if only is not None and only.next is None and only.is_text_node:
            # The usual link or emphasis: just its text.
            text = only.text_content or ""
            return " " if text.isspace() else escape_text(text)
        if self._nesting >= MAX_NESTING:
            return escape_text(node.text())
        self._nesting += 1
        try:
            parts: list[str] = []
            for child in node.iter(include_text=True):
                tag = child.tag or ""
                if tag == "-text":
                    text = child.text_content or ""
                    parts.append(" " if text.isspace() else escape_text(text))
                else:
                    parts.append(self._inline(child, tag))
            return "".join(parts)
        finally:
            self._nesting -= 1

    def _link(self, node: LexborNode) -> str:
        text = self._inline_children(node)
        label = (_SPACE.sub(" ", text) if _UNCOLLAPSED.search(text) else text).strip()
        if not label:
            return ""
        url = self._urls.resolve(node.attrs.get("href"))
        if url is None:
            return text
        lead = " " if text[0] in " \n" else ""
        trail = " " if text[-1] in " \n" else ""
        return f"{lead}[{label}]({url}){trail}"

    def _image(self, node: LexborNode) -> str:
        if not self._images:
            return ""
        attrs = node.attrs
        url: str | None = None
        for name in _IMAGE_SOURCES:
            url = self._urls.resolve(attrs.get(name))
            if url is not None:
                break
        if url is None:
            srcset = attrs.sget("srcset") or attrs.sget("data-srcset")
            url = self._urls.resolve(srcset.split(" ", 1)[0].rstrip(",")) if srcset else None
        if url is None:
            return ""
        alt = escape_text(attrs.sget("alt")).strip()
        return f"![{alt}]({url})"

    def _list(self, node: LexborNode, blocks: list[str]) -> None:
        if self._nesting >= MAX_NESTING:
            blocks.extend(_flat_blocks(node))
            return
        self._nesting += 1
        try:
            self._list_items(node, blocks)
        finally:
            self._nesting -= 1

    def _list_items(self, node: LexborNode, blocks: list[str]) -> None:
        ordered = node.tag == "ol"
        start = node.attrs.sget("start")
        number = int(start) if start.isdigit() else 1
        items: list[list[str]] = []
        for child in node.iter():
            tag = child.tag
            if tag == "li":
                items.append(self.blocks_of(child))
            elif tag in ("ul", "ol") and items:
                self._list(child, items[-1])
            elif tag in _SKIP:
                continue
            elif child.is_element_node:
                items.append(self.blocks_of(child))
        lines: list[str] = []
        for item in items:
            if not item:
                continue
            marker = f"{number}. " if ordered else "- "
            number += 1
            body = item[0]
            for block in item[1:]:
                body += ("\n" if _LIST_START.match(block) else "\n\n") + block
            pad = " " * len(marker)
            lines.append(marker + body.replace("\n", "\n" + pad).replace("\n" + pad + "\n", "\n\n"))
        if lines:
            blocks.append("\n".join(lines))

    def _pre(self, node: LexborNode, blocks: list[str]) -> None:
        code = _preformatted_text(node).strip("\n").rstrip()
        if not code.strip():
            return
        language = ""
        for holder in (node, node.css_first("code")):
            if holder is not None:
                found = _LANGUAGE.search(holder.attrs.sget("class"))
                if found:
                    language = found.group(1)
                    break
        longest = max((len(run) for run in _BACKTICKS.findall(code)), default=0)
        fence = "`" * max(3, longest + 1)
        blocks.append(f"{fence}{language}\n{code}\n{fence}")

    def _blockquote(self, node: LexborNode, blocks: list[str]) -> None:
        inner = "\n\n".join(self.blocks_of(node))
        if inner:
            blocks.append("\n".join(f"> {line}" if line else ">" for line in inner.split("\n")))

    def _table(self, node: LexborNode, blocks: list[str]) -> None:
        rendered = render_table(node, self.blocks_of)
        blocks.extend(self.blocks_of(node) if rendered is None else rendered)

    def _rule(self, node: LexborNode, blocks: list[str]) -> None:
        blocks.append("---")


def _flat_blocks(node: LexborNode) -> list[str]:
    """A node nested past `MAX_NESTING`, as one block of its text."""
    text = escape_text(node.text()).strip()
    return [text] if text else []


def _wrap(inner: str, marker: str) -> str:
    stripped = inner.strip()
    if not stripped:
        return inner
    lead = " " if inner[0] in " \n" else ""
    trail = " " if inner[-1] in " \n" else ""
    return f"{lead}{marker}{stripped}{marker}{trail}"


def _code_span(text: str) -> str:
    code = " ".join(text.split())
    if not code:
        return " " if text else ""
    if "`" not in code:
        return f"`{code}`"
    fence = "`" * (max(len(run) for run in _BACKTICKS.findall(code)) + 1)
    pad = " " if code[0] == "`" or code[-1] == "`" else ""
    return f"{fence}{pad}{code}{pad}{fence}"


def _preformatted_text(node: LexborNode) -> str:
    if not has_descendant(node, _BR):
        return node.text()
    parts: list[str] = []
    for child in node.traverse(include_text=True):
        tag = child.tag
        if tag == "-text":
            parts.append(child.text_content or "")
        elif tag == "br":
            parts.append("\n")
    return "".join(parts)
