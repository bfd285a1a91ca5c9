"""Is a page read over HTTP an app shell, whose content only a browser would draw?

The rule, measured on the 3,000 labelled pages of the shared corpus (``bench/fetch_browser.py``
prints it per page type): a page is a shell when it runs scripts and either holds almost no
readable text, or its text is a little furniture around an empty mount node at the top of the
body (``#root``, ``#app``, ``#__next``, ``<app-root>`` ...; a widget's sits deep in its page).

Text inside ``<noscript>`` counts as readable: a forum that serves its whole thread there for
readers without JavaScript (Discourse) is readable without a browser. Hydration data
(``__NEXT_DATA__``) decides nothing of its own: a page drawn on the server carries its text in
the HTML, where the measure sees it, and a page drawn in the browser leaves its mount node
empty whatever JSON it ships. A page without scripts, or a frameset, is never a shell: a
browser would draw nothing its HTML does not hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from selectolax.lexbor import LexborHTMLParser, LexborNode

__all__ = ["MAX_PIECES", "MIN_TEXT", "MOUNT_TEXT", "PIECE_TAGS", "app_shell"]

MIN_TEXT: Final = 200
"""Readable characters (whitespace aside) below which a page that runs scripts is a shell: the
corpus's ordinary pages that run scripts all hold more than 300; a sentence holds about 100."""

MOUNT_TEXT: Final = 2_000
"""With an empty mount node, the readable characters a shell's header, menu and footer may
hold: the corpus's ordinary pages with an empty ``#root`` or ``#app`` all hold over 12,000."""

EMPTY_MOUNT: Final = 50
"""A mount node with fewer readable characters than this is empty ("Loading…")."""

MOUNT_DEPTH: Final = 3
"""How deep under ``<body>`` an app's mount node may sit (``body > div.page > main > #app``)."""

PIECE_TAGS: Final = 1_000
MAX_PIECES: Final = 16
"""The page is parsed in pieces of `PIECE_TAGS` tags, at most `MAX_PIECES` of them, stopping
at the first piece that shows it is no shell. lexbor's tree building is quadratic in nesting
depth (200,000 nested ``<div>`` take it minutes); each piece starts from an empty tree, so the
worst page costs about 0.1 s and an ordinary one 2 ms. A piece cut inside a script (or a title,
a style...) resumes after its end tag, so that no code is read as text. A shell is a few
hundred tags: one piece."""

_MOUNTS: Final = (
    "#root, #app, #__next, #__nuxt, #___gatsby, #svelte, #react-root, #app-root, app-root,"
    " [ng-app], [data-reactroot], [data-v-app]"
)
_SCRIPT_TYPES: Final = frozenset(
    {
        "",
        "module",
        "text/javascript",
        "application/javascript",
        "text/ecmascript",
        "application/ecmascript",
        "application/x-javascript",
        "text/jsx",
        "text/babel",
    }
)
_UNREAD: Final = ["script", "style", "template", "noscript", "svg"]
_RAW_TEXT: Final = ("script", "style", "title", "textarea", "xmp")
_MARKER: Final = '<i data-webreach-piece-end=""></i>'
_MARKED: Final = "i[data-webreach-piece-end]"


@dataclass(slots=True)
class _Seen:
    """What the pieces read so far hold."""

    scripts: int = 0
    readable: int = 0
    empty_mount: str = ""
    frames: bool = False


def app_shell(html: str, url: str = "") -> str | None:
    """A short reason when `html` is an app shell ("app shell: 40 readable characters, 3
    scripts"), None for an ordinary page. `url` is the page's address; the rule reads the page
    alone, as the same address serves a shell and a server-drawn page alike."""
    seen = _Seen()
    start = 0
    for _ in range(MAX_PIECES):
        end = _cut(html, start)
        piece = html[start:end]
        tree = LexborHTMLParser(piece + _MARKER if end < len(html) else piece)
        cut_in = _open_raw_text(tree) if end < len(html) else ""
        start = _after(html, cut_in, end) if cut_in else end
        _read(tree, seen)
        if seen.readable >= MOUNT_TEXT or seen.frames:
            return None
        if start >= len(html):
            break
    if not seen.scripts:
        return None
    text = f"{seen.readable} readable characters, {seen.scripts} script"
    text += "s" if seen.scripts != 1 else ""
    if seen.readable < MIN_TEXT:
        return f"app shell: {text}"
    return f"app shell: empty {seen.empty_mount}, {text}" if seen.empty_mount else None


def _read(tree: LexborHTMLParser, seen: _Seen) -> None:
    seen.scripts += sum(map(_executes, tree.css("script")))
    seen.frames = seen.frames or tree.css_first("frameset") is not None
    seen.readable += sum(_chars(node) for node in tree.css("noscript"))
    tree.strip_tags(_UNREAD)
    body = tree.body
    seen.readable += _chars(body) if body is not None else 0
    if not seen.empty_mount:
        empty = next((m for m in tree.css(_MOUNTS) if _is_empty_mount(m)), None)
        seen.empty_mount = _name(empty) if empty is not None else ""


def _is_empty_mount(node: LexborNode) -> bool:
    """An app's mount node sits at the top of the body (a widget's sits deep in the content it
    joins) and holds next to nothing yet."""
    parent = node.parent
    for _ in range(MOUNT_DEPTH):
        if parent is None or parent.tag == "body":
            return parent is not None and _chars(node) < EMPTY_MOUNT
        parent = parent.parent
    return False


def _cut(html: str, start: int) -> int:
    """Where the piece that begins at `start` ends: before its `PIECE_TAGS`-th ``<``."""
    at = start
    for _ in range(PIECE_TAGS):
        at = html.find("<", at + 1)
        if at < 0:
            return len(html)
    return at


def _open_raw_text(tree: LexborHTMLParser) -> str:
    """The element whose raw text the piece was cut inside, or "": the one whose text took in
    the marker put after the piece."""
    if tree.css_first(_MARKED) is not None:
        return ""
    for tag in _RAW_TEXT:
        found = tree.css(tag)
        if found and (found[-1].text() or "").endswith(_MARKER):
            return tag
    return ""


def _after(html: str, tag: str, at: int) -> int:
    """Past the end tag of the `tag` open at `at`; the page's end if none follows."""
    lower, upper = html.find(f"</{tag}", at), html.find(f"</{tag.upper()}", at)
    close = min(lower, upper) if lower >= 0 and upper >= 0 else max(lower, upper)
    end = html.find(">", close) if close >= 0 else -1
    return end + 1 if end >= 0 else len(html)


def _executes(script: LexborNode) -> bool:
    kind = (script.attributes.get("type") or "").split(";")[0].strip().lower()
    if kind not in _SCRIPT_TYPES:
        return False  # JSON, templates, ld+json: data, not code
    return "src" in script.attributes or bool((script.text() or "").strip())


def _chars(node: LexborNode) -> int:
    """Readable characters under `node`, whitespace aside (removed elements stay uncounted)."""
    return sum(map(len, node.text(separator=" ").split()))


def _name(node: LexborNode) -> str:
    found = node.attributes.get("id")
    return f"#{found}" if found else f"<{node.tag}>"
