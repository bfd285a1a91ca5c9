"""What kind of page this is, read from what the page says of itself.

A forum thread is many posts of similar weight, where an article is one; the kind decides
whether the renderer keeps one best block or the container of every post. Only what a page
declares is trusted: schema.org types in JSON-LD, microdata and Open Graph, and the generator
of known forum software. A page that declares nothing is read as an article.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Final

from selectolax.lexbor import LexborHTMLParser


class Kind(Enum):
    ARTICLE = "article"
    FORUM = "forum"
    PRODUCT = "product"


_FORUM_TYPES: Final = re.compile(r'"@type"\s*:\s*"(?:DiscussionForumPosting|QAPage)"')
_FORUM_ITEMTYPE: Final = re.compile(r"schema\.org/(?:DiscussionForumPosting|QAPage)\b")
_FORUM_SOFTWARE: Final = re.compile(
    r"^(?:discourse|vbulletin|phpbb|xenforo|invision|flarum|mybb|nodebb)\b", re.IGNORECASE
)
_PRODUCT_TYPES: Final = re.compile(r'"@type"\s*:\s*"Product"')
_PRODUCT_ITEMTYPE: Final = re.compile(r"schema\.org/Product\b")


def page_kind(tree: LexborHTMLParser) -> Kind:
    """The kind the page declares itself to be."""
    for meta in tree.css('meta[name="generator"]'):
        if _FORUM_SOFTWARE.match(meta.attrs.sget("content") or ""):
            return Kind.FORUM
    data = " ".join(script.text() for script in tree.css('script[type="application/ld+json"]'))
    itemtypes = " ".join(node.attrs.sget("itemtype") or "" for node in tree.css("[itemtype]"))
    if _FORUM_TYPES.search(data) or _FORUM_ITEMTYPE.search(itemtypes):
        return Kind.FORUM
    og = tree.css_first('meta[property="og:type"]')
    # One product is a product page; many are a listing of them, read as other pages are.
    products = len(_PRODUCT_TYPES.findall(data)) + len(_PRODUCT_ITEMTYPE.findall(itemtypes))
    if products == 1 or (
        not products and og is not None and (og.attrs.sget("content") or "").startswith("product")
    ):
        return Kind.PRODUCT
    return Kind.ARTICLE
