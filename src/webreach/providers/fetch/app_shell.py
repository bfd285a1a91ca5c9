"""Is a page read over HTTP an app shell, whose content only a browser would draw?

The rule, measured on the 3,000 labelled pages of the shared corpus (``bench/fetch_browser.py``
prints it per page type): a page is a shell when it runs scripts and either holds almost no
readable text, or its text is a little furniture around an empty mount node (``#root``,
``#app``, ``#__next``, ``<app-root>`` ...). Text inside ``<noscript>`` counts as readable: a
forum that serves its whole thread there for readers without JavaScript (Discourse) is readable
without a browser. Hydration data (``__NEXT_DATA__``) decides nothing of its own: a page drawn
on the server carries its text in the HTML, where the measure sees it, and a page drawn in the
browser leaves its mount node empty whatever JSON it ships.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Final

from selectolax.lexbor import LexborHTMLParser, LexborNode

__all__ = ["MIN_TEXT", "MOUNT_TEXT", "app_shell"]

MIN_TEXT: Final = 200
"""Readable characters (whitespace aside) below which a page that runs scripts is a shell: the
corpus's ordinary pages that run scripts all hold more than 300; a sentence holds about 100."""

MOUNT_TEXT: Final = 2_000
"""With an empty mount node, the readable characters a shell's header, menu and footer may
hold: the corpus's ordinary pages with an empty ``#root`` or ``#app`` all hold over 12,000."""

EMPTY_MOUNT: Final = 50
"""A mount node with fewer readable characters than this is empty ("Loading…")."""

PIECE_TAGS: Final = 1_000
MAX_PIECES: Final = 16
"""The page is parsed in pieces of about `PIECE_TAGS` tags, at most `MAX_PIECES` of them, and
stops at the first piece that shows it is no shell. lexbor's tree building is quadratic in
nesting depth (200,000 nested ``<div>`` take it minutes), so each piece starts from an empty
tree: the worst page costs about 0.1 s, an ordinary one 2 ms. A shell is a few hundred tags,
one piece."""

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
    for piece in islice(_pieces(html), MAX_PIECES):
        _read(LexborHTMLParser(piece), seen)
        if seen.readable >= MOUNT_TEXT or seen.frames:
            return None
    if not seen.scripts:
        return None
    counted = f"{seen.scripts} script{'s' if seen.scripts != 1 else ''}"
    if seen.readable < MIN_TEXT:
        return f"app shell: {seen.readable} readable characters, {counted}"
    if seen.empty_mount:
        return (
            f"app shell: empty {seen.empty_mount}, {seen.readable} readable characters, {counted}"
        )
    return None


def _read(tree: LexborHTMLParser, seen: _Seen) -> None:
    seen.scripts += sum(map(_executes, tree.css("script")))
    seen.frames = seen.frames or tree.css_first("frameset") is not None
    seen.readable += sum(_chars(node) for node in tree.css("noscript"))
    tree.strip_tags(_UNREAD)
    body = tree.body
    seen.readable += _chars(body) if body is not None else 0
    if not seen.empty_mount:
        empty = next((m for m in tree.css(_MOUNTS) if _chars(m) < EMPTY_MOUNT), None)
        seen.empty_mount = _name(empty) if empty is not None else ""


def _pieces(html: str) -> Iterator[str]:
    """`html` cut into pieces of about `PIECE_TAGS` ``<``, each cut just after a ``</script>``
    when one is near, so that no script's code is read as text; a cut elsewhere inside a script
    leaves it open to the piece's end, where the parser reads the rest as script too."""
    if html.count("<") <= PIECE_TAGS:
        yield html
        return
    start = 0
    while start < len(html):
        at = start - 1
        for _ in range(PIECE_TAGS):
            at = html.find("<", at + 1)
            if at < 0:
                yield html[start:]
                return
        close = _first_found(html.find("</script", at), html.find("</SCRIPT", at))
        end = html.find(">", close) + 1 if close >= 0 else 0
        if not end or html.count("<", at, end) > PIECE_TAGS:
            end = at
        yield html[start:end]
        start = end


def _first_found(one: int, other: int) -> int:
    return min(one, other) if one >= 0 and other >= 0 else max(one, other)


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
