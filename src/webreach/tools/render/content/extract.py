"""Main-content detection: Readability's passes, each relaxing a heuristic until one finds
enough text, and the cleaning of what the scoring chose.

Each pass reads a freshly parsed tree, because a pass prunes the one it reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from selectolax.lexbor import LexborHTMLParser, LexborNode

from .. import patterns
from ..budget import check
from ..dom import has_ancestor
from .candidates import choose_content
from .clean import prepare_article
from .copies import drop_copies
from .density import text_length
from .furniture import remove_furniture
from .kinds import page_kind
from .prune import prune
from .reading import READINGS, Reading
from .reveal import reveal

CHAR_THRESHOLD: Final = 500
# Chosen blocks of fewer characters are too short to say the cleaning misjudged them.
_JUDGED_CLEANING_CHARS: Final = 1000
_ASKS_FOR_EMAIL: Final = 'input[type="email" i]'
_SECTIONING: Final = patterns.words(
    "main article section aside nav blockquote details fieldset figure td dialog"
)
"""The parts of a page a header or footer can be the header or footer of; one in none of them is
the page's."""


@dataclass(frozen=True, slots=True)
class Flags:
    """Heuristics Readability relaxes one by one when a pass yields too little text."""

    strip_unlikely: bool = True
    weight_classes: bool = True
    clean_conditionally: bool = True


ATTEMPTS: Final = (
    Flags(),
    Flags(strip_unlikely=False),
    Flags(strip_unlikely=False, weight_classes=False),
    Flags(strip_unlikely=False, weight_classes=False, clean_conditionally=False),
)


@dataclass(slots=True)
class Article:
    """The chosen content: sibling elements of one tree, in document order."""

    nodes: list[LexborNode]
    text_length: int
    uncleaned: int = 0
    """The chosen blocks' text length before the cleaning."""


def extract_article(source: bytes, tree: LexborHTMLParser, title: str | None) -> Article | None:
    """Find the main content, relaxing heuristics until enough text is found.

    Each retry re-parses `source` (the page as UTF-8) because a pass prunes its tree; lexbor
    parses fast enough that this is cheaper than cloning.
    """
    best: Article | None = None
    kind = page_kind(tree)
    reading = READINGS[kind]
    for attempt, flags in enumerate(ATTEMPTS):
        check()
        body = _readable_body(LexborHTMLParser(source) if attempt else tree)
        if body is None:
            return None
        if attempt == 1 and text_length(body) < CHAR_THRESHOLD:
            break
        article = _grab_article(body, flags, title, reading)
        if article is not None:
            if article.text_length >= reading.enough:
                best = _lightly_cleaned(article, source, flags, title, reading)
                break
            # A cleaning that took the chosen blocks below enough may have misread them too: the
            # reading by link farms alone stands beside the later passes' when none finds enough.
            article = _lightly_cleaned(article, source, flags, title, reading)
            if best is None or article.text_length > best.text_length:
                best = article
    if best is not None:
        best.text_length -= remove_furniture(best.nodes, best.text_length)
        best.text_length -= drop_copies(best.nodes, reading.quotes_repeat)
    return best


def _readable_body(tree: LexborHTMLParser) -> LexborNode | None:
    """The body with what is hidden until a script shows it revealed, and what never holds
    content removed; only the body is read from here on (the title was read before).

    A form that asks for an email address is a sign-up (a newsletter's, an account's), and its
    consent lines and promises are never what the page is about; its fields go with the rest.
    Nor are the page's own header and footer: a ``<header>`` or ``<footer>`` in no article,
    section or other part of the page is the site's (its logo and menus; its links, address and
    legal lines), where one inside an article is the article's, left to the cleaning. A header
    that holds the page's ``<h1>`` heads the page's content and stays.
    """
    body = tree.body
    if body is not None:
        reveal(body)
        for form in body.css("form"):
            if form.css_first(_ASKS_FOR_EMAIL) is not None:
                form.decompose(recursive=False)
        for part in body.css("header,footer"):
            if not has_ancestor(part, _SECTIONING) and (
                part.tag == "footer" or part.css_first("h1") is None
            ):
                part.decompose(recursive=False)
        for node in body.css(patterns.NEVER_CONTENT):
            node.decompose(recursive=False)
    return body


def _lightly_cleaned(
    article: Article, source: bytes, flags: Flags, title: str | None, reading: Reading
) -> Article:
    """The same page read again with only link farms cleaned away, when the full cleaning took
    more of the chosen blocks' text than ``reading`` allows (whether or not what it left is
    enough); a pass prunes its tree, so the page is parsed anew."""
    if (
        not (flags.clean_conditionally and reading.clean_conditionally)
        or article.uncleaned < _JUDGED_CLEANING_CHARS
        or article.text_length >= (1.0 - reading.cleaning_may_take) * article.uncleaned
    ):
        return article
    body = _readable_body(LexborHTMLParser(source))
    if body is None:
        return article
    again = _grab_article(body, flags, title, reading, links_only=True)
    return again if again is not None and again.text_length >= reading.enough else article


def _grab_article(
    body: LexborNode,
    flags: Flags,
    title: str | None,
    reading: Reading,
    *,
    links_only: bool = False,
) -> Article | None:
    prune(
        body,
        strip_unlikely=flags.strip_unlikely,
        title=title,
        furniture=reading.furniture,
        furniture_selector=reading.furniture_selector,
        posts=reading.posts,
    )
    choice = choose_content(body, flags.weight_classes, reading)
    if choice is None:
        return None
    nodes = choice.nodes
    uncleaned = sum(map(text_length, nodes))
    clean = flags.clean_conditionally and reading.clean_conditionally
    weights = flags.weight_classes and not links_only
    prepare_article(nodes, clean, weights, choice.paragraph_divs, links_only=links_only)
    return Article(nodes, sum(map(text_length, nodes)), uncleaned)
