"""Page-level facts read from `<head>`: the title, the publication date and the `<base href>`."""

from __future__ import annotations

from typing import Final

from selectolax.lexbor import LexborHTMLParser

# A title this long holding a tag is the rest of the page, swallowed by a title left open.
_RUNAWAY_TITLE: Final = 1000
_TITLE_META: Final = ("og:title", "twitter:title", "dc.title", "title")
# Every meta that may hold a title (and a few more, whose `property` outranks the `name`).
_TITLE_META_SELECTOR: Final = ",".join(
    f'meta[{attr}="{key}" i]' for key in _TITLE_META for attr in ("property", "name")
)


def page_title(tree: LexborHTMLParser) -> str | None:
    """Return the page's own title: social metadata first, as it omits site-name suffixes."""
    head = tree.head
    if head is not None:
        metas: dict[str, str] = {}
        for meta in head.css(_TITLE_META_SELECTOR):
            attrs = meta.attributes
            key = (attrs.get("property") or attrs.get("name") or "").lower()
            if key in _TITLE_META and key not in metas:
                metas[key] = _clean(attrs.get("content") or "")
        for key in _TITLE_META:
            if metas.get(key):
                return metas[key]
    for selector in ("title", "h1"):
        node = tree.css_first(selector)
        if node is not None:
            title = _clean(node.text())
            if title:
                return title
    return None


_DATE_META: Final = (
    "article:published_time",
    "og:published_time",
    "datepublished",
    "dc.date",
    "dc.date.issued",
    "date",
    "pubdate",
    "publish-date",
)
_DATE_META_SELECTOR: Final = ",".join(
    f'meta[{attr}="{key}" i]' for key in _DATE_META for attr in ("property", "name", "itemprop")
)


def page_published(tree: LexborHTMLParser) -> str | None:
    """When the page says it was published, as it says it (normalising is the reader's job)."""
    head = tree.head
    if head is not None:
        found: dict[str, str] = {}
        for meta in head.css(_DATE_META_SELECTOR):
            attrs = meta.attributes
            key = attrs.get("property") or attrs.get("name") or attrs.get("itemprop") or ""
            content = (attrs.get("content") or "").strip()
            if content and key.lower() not in found:
                found[key.lower()] = content
        for key in _DATE_META:
            if key in found:
                return found[key]
    node = tree.css_first("time[datetime]")
    value = (node.attributes.get("datetime") or "").strip() if node is not None else ""
    return value or None


def base_href(tree: LexborHTMLParser) -> str | None:
    """Return the first `<base href>`, which redirects every relative URL of the page."""
    base = tree.head.css_first("base[href]") if tree.head is not None else None
    return base.attrs.sget("href") if base is not None else None


def close_runaway_title(source: bytes, tree: LexborHTMLParser) -> bytes | None:
    """Return the page with its `<title>` closed, when a title left open swallowed the page.

    A `<title>` is raw text up to `</title>`: left open, it holds the whole page, which browsers
    show blank but lxml-based parsers recover. Closing it at its first tag recovers the body.
    """
    head = tree.head
    title = head.css_first("title") if head is not None else None
    if title is None:
        return None
    text = title.text()
    if len(text) < _RUNAWAY_TITLE or "<" not in text:
        return None
    start = source.lower().find(b"<title")
    end = source.find(b">", start) + 1
    cut = source.find(b"<", end) if start >= 0 and end else -1
    return None if cut < 0 else source[:cut] + b"</title>" + source[cut:]


def _clean(text: str) -> str:
    return " ".join(text.split())
