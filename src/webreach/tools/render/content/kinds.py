"""What kind of page this is, read from what the page says of itself.

A forum thread is many posts of similar weight, a listing many items, where an article is one;
the kind decides whether the renderer keeps one best block or the container of every post or
item. Forum threads, pages of questions and answers, and products are read from what the page
declares: schema.org types in JSON-LD, microdata and Open Graph, and the generator of known forum
software. A listing
shows it is one: most of its headings link to other pages (each an item's title) and no block
of it holds paragraphs side by side, as an article's body does; or it declares a collection and
no article. Any other page is read as an article.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Final

from selectolax.lexbor import LexborHTMLParser, LexborNode

from ..dom import enclosing_link


class Kind(Enum):
    ARTICLE = "article"
    FORUM = "forum"
    QUESTIONS = "questions"
    PRODUCT = "product"
    LISTING = "listing"


_FORUM_TYPES: Final = re.compile(r'"@type"\s*:\s*"DiscussionForumPosting"')
_FORUM_ITEMTYPE: Final = re.compile(r"schema\.org/DiscussionForumPosting\b")
_QUESTION_TYPES: Final = re.compile(r'"@type"\s*:\s*"QAPage"')
_QUESTION_ITEMTYPE: Final = re.compile(r"schema\.org/QAPage\b")
_FORUM_SOFTWARE: Final = re.compile(
    r"^(?:discourse|vbulletin|phpbb|xenforo|invision|flarum|mybb|nodebb)\b", re.IGNORECASE
)
_PRODUCT_TYPES: Final = re.compile(r'"@type"\s*:\s*"Product"')
_PRODUCT_ITEMTYPE: Final = re.compile(r"schema\.org/Product\b")
_PRODUCT_GROUP_TYPE: Final = re.compile(r'"@type"\s*:\s*"ProductGroup"')
# Open Graph's group of products: a collection of them, not one.
_PRODUCT_GROUP: Final = re.compile(r"product[.:]group\b")


def page_kind(tree: LexborHTMLParser) -> Kind:
    """The kind the page declares itself to be."""
    for meta in tree.css('meta[name="generator"]'):
        if _FORUM_SOFTWARE.match(meta.attrs.sget("content") or ""):
            return Kind.FORUM
    data = " ".join(script.text() for script in tree.css('script[type="application/ld+json"]'))
    itemtypes = " ".join(node.attrs.sget("itemtype") or "" for node in tree.css("[itemtype]"))
    if _QUESTION_TYPES.search(data) or _QUESTION_ITEMTYPE.search(itemtypes):
        return Kind.QUESTIONS
    if _FORUM_TYPES.search(data) or _FORUM_ITEMTYPE.search(itemtypes):
        return Kind.FORUM
    og = tree.css_first('meta[property="og:type"]')
    og_type = (og.attrs.sget("content") or "") if og is not None else ""
    # One product is a product page; many are a listing of them, read as other pages are.
    products = len(_PRODUCT_TYPES.findall(data)) + len(_PRODUCT_ITEMTYPE.findall(itemtypes))
    if products == 1 and not _rated_only(data, og_type):
        return Kind.PRODUCT
    # A product group is one product in its variants (sizes, colours), each declared a product.
    if _PRODUCT_GROUP_TYPE.search(data):
        return Kind.PRODUCT
    if og_type.startswith("product") and not _PRODUCT_GROUP.match(og_type):
        return Kind.PRODUCT
    if _PRODUCT_GROUP.match(og_type) or _is_listing(tree, data, og_type):
        return Kind.LISTING
    return Kind.ARTICLE


def _rated_only(data: str, og_type: str) -> bool:
    """Tell whether the one declared product is only there to carry a rating: it offers nothing
    for sale, on a page that declares itself an article or a local business."""
    if '"offers"' in data:
        return False
    return og_type.startswith("article") or bool(_ARTICLE_TYPES.search(data))


_LISTING_TYPES: Final = re.compile(
    r'"@type"\s*:\s*"(?:CollectionPage|ItemList|SearchResultsPage|OfferCatalog)"'
)
_ARTICLE_TYPES: Final = re.compile(
    r'"@type"\s*:\s*"(?:Article|NewsArticle|BlogPosting|ReportageNewsArticle|TechArticle'
    r'|LocalBusiness)"'
)
_HEADINGS: Final = "h2,h3,h4"
_MIN_LINKED_HEADINGS: Final = 6
# Prose: paragraphs side by side in one block, this long together. A page of linked headings
# without it is a listing, whatever it declares (blogs and news sites call every page an article).
_PROSE_CHARS: Final = 600
# Cards: elements of one tag and class side by side, each linking to another page with a line of
# text. This many of them, and no prose, make a listing whose item titles are not headings (a
# job board, a shop's category): fewer are a rail beside an article.
_CARDS: Final = "li[class],article[class],div[class]"
_MIN_CARDS: Final = 12
_CARD_CHARS: Final = 30


def _is_listing(tree: LexborHTMLParser, data: str, og_type: str) -> bool:
    """A page of many items: most of its headings link elsewhere (each the title of an item)
    and no block of it is prose; or, declaring no article, it declares a collection or holds
    many cards and no prose."""
    headings = tree.css(_HEADINGS)
    linked = sum(map(_links_away, headings))
    if linked >= _MIN_LINKED_HEADINGS and 2 * linked > len(headings) and _little_prose(tree):
        return True
    if _ARTICLE_TYPES.search(data) or og_type.startswith("article"):
        return False
    return bool(_LISTING_TYPES.search(data)) or (_many_cards(tree) and _little_prose(tree))


def _many_cards(tree: LexborHTMLParser) -> bool:
    """Tell whether some element holds ``_MIN_CARDS`` cards side by side."""
    siblings: dict[tuple[int, str, str], list[LexborNode]] = {}
    for node in tree.css(_CARDS):
        parent, name = node.parent, node.attrs.sget("class")
        if parent is not None and name:
            siblings.setdefault((parent.mem_id, node.tag or "", name), []).append(node)
    return any(
        len(group) >= _MIN_CARDS and sum(map(_is_card, group)) >= _MIN_CARDS
        for group in siblings.values()
    )


def _is_card(node: LexborNode) -> bool:
    return _leads_away(node.css_first("a[href]")) and len(node.text(strip=True)) >= _CARD_CHARS


def _little_prose(tree: LexborHTMLParser) -> bool:
    """Tell whether no one block holds paragraphs of this many characters together: an item's
    text is a paragraph of its own, an article's are siblings."""
    together: dict[int, int] = {}
    for paragraph in tree.css("p"):
        parent = paragraph.parent
        if parent is None:
            continue
        key = parent.mem_id
        held = together[key] = together.get(key, 0) + len(paragraph.text(strip=True))
        if held >= _PROSE_CHARS:
            return False
    return True


def _links_away(heading: LexborNode) -> bool:
    """Tell whether a heading is a link to another page (not an anchor within this one)."""
    return _leads_away(heading.css_first("a[href]") or enclosing_link(heading))


def _leads_away(link: LexborNode | None) -> bool:
    """Tell whether a link goes to another page (not an anchor within this one)."""
    return link is not None and not (link.attrs.sget("href") or "#").startswith("#")
