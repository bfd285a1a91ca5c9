"""The renderer's entry points: parse once, find the main content, write Markdown."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from selectolax.lexbor import LexborHTMLParser, LexborNode

from .budget import RENDER_BUDGET, BudgetSpent, budget
from .content.density import text_length
from .content.extract import extract_article
from .content.prune import prune
from .content.reveal import reveal
from .depth import parse_capped
from .markdown.urls import UrlResolver, effective_base
from .markdown.writer import MarkdownWriter, escape_text
from .metadata import base_href, close_runaway_title, page_published, page_title
from .patterns import NEVER_CONTENT
from .product import declared_product, missing_facts

# Dropped: image syntax only adds URLs and alt text that readers of the extract rarely need (on the
# Readability corpus, word F1 is 0.982 without images against 0.970 with them).
KEEP_IMAGES: Final = False
# Below this many characters of article text, the extraction is judged to have missed the page
# and the whole page is rendered instead.
_MIN_ARTICLE_CHARS: Final = 140


@dataclass(frozen=True, slots=True)
class RenderedPage:
    """A page rendered for reading: its title (if any) and its main content as Markdown."""

    title: str | None
    markdown: str
    published: str | None = None
    """The publication date the page declares, as written there."""


def render_page(
    html: str,
    *,
    base_url: str | None = None,
    time_budget: float | None = RENDER_BUDGET,
    stop: Callable[[], bool] | None = None,
) -> RenderedPage:
    """Render the main content of `html` as Markdown, with links made absolute against the page.

    Falls back to the whole page when no article-like content is found, and to the page's plain
    text when rendering takes longer than `time_budget` seconds (None: no limit) or `stop()`
    turns true (polled as the budget is).
    """
    if not html or html.isspace():
        return RenderedPage(title=None, markdown="")
    source, tree = _parse(html)
    title = page_title(tree)
    published = page_published(tree)
    writer = MarkdownWriter(
        UrlResolver(effective_base(base_url, base_href(tree))), images=KEEP_IMAGES
    )
    try:
        with budget(time_budget, stop):
            markdown = _reader_markdown(source, tree, title, writer)
    except BudgetSpent:
        markdown = _plain_text(LexborHTMLParser(source))
    return RenderedPage(title=title, markdown=markdown, published=published)


def plain_page(html: str) -> RenderedPage:
    """The page's title, date and plain text, as when the budget is spent: one capped parse and
    one walk inside lexbor, for a page whose render could not finish."""
    if not html or html.isspace():
        return RenderedPage(title=None, markdown="")
    _, tree = _parse(html)
    title = page_title(tree)
    published = page_published(tree)
    return RenderedPage(title=title, markdown=_plain_text(tree), published=published)


def _parse(html: str) -> tuple[bytes, LexborHTMLParser]:
    # Encoded once (as lexbor itself would): extraction retries and the fallback parse again.
    source, tree = parse_capped(html)
    repaired = close_runaway_title(source, tree)
    if repaired is not None:
        source = repaired
        tree = LexborHTMLParser(source)
    return source, tree


def _reader_markdown(
    source: bytes, tree: LexborHTMLParser, title: str | None, writer: MarkdownWriter
) -> str:
    product = declared_product(tree)
    article = extract_article(source, tree, title)
    markdown = ""
    if article is not None and article.text_length >= _MIN_ARTICLE_CHARS:
        markdown = writer.convert(article.nodes)
    # A shop's declared description stands in for the page it draws by script: the whole page
    # would be its menus and cart.
    if not markdown and (product is None or not product.description):
        root = _whole_page(source)
        markdown = writer.convert([root]) if root is not None else ""
    if product is not None:
        facts = missing_facts(product, markdown)
        markdown = f"{facts}\n\n{markdown}" if facts and markdown else facts or markdown
    # A page with text never renders to nothing: the last resort is its plain text.
    return markdown or _plain_text(LexborHTMLParser(source))


def _whole_page(source: bytes) -> LexborNode | None:
    """The page when no block of it reads as its content (a grid of short items, a page of
    forms): its declared main region, or else its body, without the furniture every page
    carries (menus, header, footer, asides, banners); the whole body when that leaves too
    little."""
    trimmed = LexborHTMLParser(source).body
    if trimmed is not None:
        reveal(trimmed)
        for node in trimmed.css(f"{NEVER_CONTENT},{_FURNITURE_TAGS},{_FURNITURE_ROLES}"):
            node.decompose(recursive=False)
        prune(trimmed, strip_unlikely=True, title=None)
        main = trimmed.css_first("main,[role=main]")
        if main is not None and text_length(main) >= _MIN_ARTICLE_CHARS:
            return main
        if text_length(trimmed) >= _MIN_ARTICLE_CHARS:
            return trimmed
    whole = LexborHTMLParser(source)
    root = whole.body or whole.root
    if root is not None:
        reveal(root)
    return root


_FURNITURE_TAGS: Final = "nav,header,footer,aside,form"
_FURNITURE_ROLES: Final = ",".join(
    f"[role={role}]" for role in ("navigation", "banner", "contentinfo", "complementary", "search")
)


def _plain_text(tree: LexborHTMLParser) -> str:
    """The page's text, a line per text node: one walk inside lexbor, whatever the page."""
    for node in tree.css(NEVER_CONTENT):
        node.decompose(recursive=False)
    root = tree.body or tree.root
    if root is None:
        return ""
    lines = (escape_text(line).strip() for line in root.text(separator="\n").split("\n"))
    return "\n".join(line for line in lines if line)


def render_html(html: str, *, base_url: str | None = None) -> str:
    """Return the Markdown of the page's main content (see `render_page`)."""
    return render_page(html, base_url=base_url).markdown
