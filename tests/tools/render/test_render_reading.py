"""How each kind of page is read: a listing keeps its items (linked titles with a line of text)
and drops its filters and pagination; a product keeps its name, price and specifications, and a
shop that draws its page by script is read from its declared product, not its menus."""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser

from webreach.tools.render import render_html, render_page
from webreach.tools.render.content.kinds import Kind, page_kind

TEASER = "A short line on what the story tells, with a detail or two"


def card_listing(head: str = "") -> str:
    """A blog's category page: cards whose whole body is one link, a row of filters, pages."""
    cards = "".join(
        f"<article class='card'><a href='/post/{n}'><div><div><h3>Post {n} of the week</h3>"
        f"<p>{TEASER} ({n}).</p></div></div></a></article>"
        for n in range(8)
    )
    filters = "".join(f"<li><a href='/tag/{tag}'>{tag}</a></li>" for tag in "abcdef")
    pages = "".join(f"<li><a href='/page/{n}'>{n}</a></li>" for n in range(2, 7))
    return (
        f"<html><head>{head}</head><body><header><nav><a href='/'>Home</a></nav></header><main>"
        f"<h1>Recipes</h1><aside class='filters'><ul>{filters}</ul></aside>"
        f"<section class='grid'>{cards}</section>"
        f"<nav class='pagination'><ul>{pages}</ul></nav></main>"
        "<footer><p>All rights kept by the blog and its many writers, since long ago.</p>"
        "</footer></body></html>"
    )


def test_a_page_of_card_titles_is_a_listing_whatever_it_declares() -> None:
    article = '<meta property="og:type" content="article">'
    assert page_kind(LexborHTMLParser(card_listing(article))) is Kind.LISTING


def test_a_listing_keeps_its_items_with_their_links_and_drops_its_filters() -> None:
    markdown = render_html(card_listing('<meta property="og:type" content="article">'))
    for n in range(8):
        assert f"{TEASER} ({n})." in markdown
        assert f"/post/{n})" in markdown
    assert "/tag/" not in markdown
    assert "/page/" not in markdown
    assert "All rights kept" not in markdown


def test_a_story_beside_a_rail_of_linked_headings_is_an_article() -> None:
    story = "".join(f"<p>{TEASER}, told at length this time, {n}.</p>" for n in range(12))
    page = card_listing().replace("<h1>Recipes</h1>", f"<h1>Recipes</h1><div>{story}</div>")
    assert page_kind(LexborHTMLParser(page)) is Kind.ARTICLE


def job_board(cards: int, head: str = "") -> str:
    """A job board: each card a link and a line, none of their titles a heading."""
    jobs = "".join(
        f"<div class='job-card'><a href='/jobs/{n}'>Engineer number {n}</a>"
        f"<span>Remote, full time, from 60,000 a year ({n})</span></div>"
        for n in range(cards)
    )
    return (
        f"<html><head>{head}</head><body><main><div class='jobs'>{jobs}</div></main></body></html>"
    )


def test_a_page_of_many_cards_without_headings_is_a_listing() -> None:
    assert page_kind(LexborHTMLParser(job_board(12))) is Kind.LISTING
    markdown = render_html(job_board(12))
    assert all(f"/jobs/{n})" in markdown for n in range(12))


def test_a_few_cards_or_a_declared_article_are_not_a_listing() -> None:
    assert page_kind(LexborHTMLParser(job_board(11))) is Kind.ARTICLE
    article = '<meta property="og:type" content="article">'
    assert page_kind(LexborHTMLParser(job_board(12, article))) is Kind.ARTICLE


def shop_page(data: str, body: str) -> str:
    return (
        "<html><head><title>Trail Pack 40 | The Shop</title>"
        f'<script type="application/ld+json">{data}</script></head><body>'
        "<header><nav><a href='/'>Home</a> <a href='/shop'>Shop</a> <a href='/cart'>Cart</a>"
        f"</nav></header><main>{body}</main></body></html>"
    )


PRODUCT = (
    '{"@type": "Product", "name": "Trail Pack 40", "description": "A forty litre pack of'
    ' ripstop nylon with a rain cover, for long days on the hills.",'
    ' "offers": {"price": "59.00", "priceCurrency": "EUR"}}'
)


def test_a_product_keeps_its_name_price_and_specifications() -> None:
    specs = "".join(
        f"<tr><th>{name}</th><td>{value}</td></tr>"
        for name, value in (("Volume", "40 litres"), ("Weight", "1.1 kg"), ("Fabric", "210D"))
    )
    body = (
        "<div class='product'><h1>Trail Pack 40</h1><p class='price'>€59.00</p>"
        "<div class='description'><p>A forty litre pack of ripstop nylon with a rain cover,"
        " for long days on the hills, and pockets for what you reach for most.</p></div>"
        f"<table class='specs'>{specs}</table></div>"
        "<div class='cart-drawer'><p>Your cart is empty. Free shipping over 50 euros.</p></div>"
    )
    page = render_page(shop_page(PRODUCT, body))
    markdown = page.markdown
    assert page.title is not None and "Trail Pack 40" in page.title
    assert "€59.00" in markdown
    assert "40 litres" in markdown and "1.1 kg" in markdown
    assert "Your cart is empty" not in markdown


def test_a_product_drops_the_cart_form_drawn_into_its_page() -> None:
    rows = "".join(
        f"<tr><td><p>{colour} / {size}L</p></td><td>{price}/ea</td>"
        f"<td><label>Quantity</label><input name='q' value='0'></td><td>{price}/ea $0.00</td></tr>"
        for colour in ("Blue", "Black", "Khaki", "Green", "Purple", "Red")
        for size, price in (("40", "$39.99"), ("50", "$47.99"))
    )
    body = (
        "<div class='product'><h1>Trail Pack 40</h1>"
        # Shopify's theme names the description as one its quick-add popup hides, so the first
        # pass drops it and would keep the cart alone.
        "<div class='product__description quick-add-hidden'><p>A forty litre pack of ripstop"
        " nylon with a rain cover, for long days on the hills, and pockets for what you reach"
        " for most.</p><p>Its back panel breathes, its straps are padded, and its hip belt"
        " carries the load.</p></div></div>"
        "<div class='quick-order'><form action='/cart/update' method='post'><table>"
        "<caption>Your cart</caption><thead><tr><th>Variant</th><th>Price</th><th>Quantity</th>"
        f"<th>Total</th></tr></thead><tbody>{rows}</tbody></table></form></div>"
    )
    markdown = render_html(shop_page(PRODUCT, body))
    assert "forty litre pack" in markdown and "hip belt" in markdown
    assert "Your cart" not in markdown and "$47.99" not in markdown


def test_a_shop_drawn_by_script_is_read_from_its_declared_product_not_its_menus() -> None:
    markdown = render_html(shop_page(PRODUCT, "<div id='app'><p>Loading</p></div>"))
    assert "forty litre pack" in markdown
    assert "59.00 EUR" in markdown
    assert "Cart" not in markdown


def test_a_product_group_is_one_product_in_its_variants() -> None:
    variants = ", ".join(
        f'{{"@type": "Product", "name": "Trail Pack {size}"}}' for size in (30, 40, 50)
    )
    data = f'{{"@type": "ProductGroup", "name": "Trail Pack", "hasVariant": [{variants}]}}'
    assert page_kind(LexborHTMLParser(shop_page(data, "<p>Pack</p>"))) is Kind.PRODUCT
