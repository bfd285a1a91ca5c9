"""The renderer on pages that are not plain articles: content only a no-JavaScript reader gets,
class names that only look like furniture, furigana, and the kinds of page (forum, product,
listing, documentation) that need their own keeping rules."""

from __future__ import annotations

from webreach.tools.render import render_html
from webreach.tools.render.content.prune import is_unlikely

SENTENCE = (
    "The valve sticks after every reboot, and the log shows the same warning each time, "
    "so I have started to wonder whether the update broke the driver for everyone."
)


def prose(count: int, tag: str = "p") -> str:
    return "".join(f"<{tag}>{SENTENCE} Post {n}, again.</{tag}>" for n in range(count))


def test_a_thread_shipped_inside_noscript_is_rendered() -> None:
    html = (
        "<html><body><section id='main'></section>"
        f"<noscript><div class='topic-body'>{prose(4)}</div></noscript></body></html>"
    )
    assert "Post 3, again." in render_html(html)


def test_noscript_beside_a_real_article_stays_out() -> None:
    html = (
        f"<html><body><article>{prose(6)}</article>"
        "<noscript><p>Please enable JavaScript to use every feature of this fine site, "
        "which works far better with it than without it, as most sites do today, sadly."
        "</p><img src='https://pixel.example/t.gif'></noscript></body></html>"
    )
    markdown = render_html(html)
    assert "Post 5, again." in markdown
    assert "enable JavaScript" not in markdown


def test_a_streamed_react_chunk_takes_its_placeholder() -> None:
    html = (
        "<html><body><main><h1>Release notes</h1><!--$?--><template id='B:0'></template>"
        "<p>Loading the story…</p><!--/$--></main>"
        f"<div hidden id='S:0'><article>{prose(5)}</article></div></body></html>"
    )
    markdown = render_html(html)
    assert "Post 4, again." in markdown
    assert "Loading the story" not in markdown


def test_streamed_chunks_numbered_in_hexadecimal_fill_segments_and_boundaries() -> None:
    specs = "<dl><dt>Seat height</dt><dd>20 to 23 inches, adjustable with a gas lift</dd></dl>"
    html = (
        "<html><body><main><h1>Executive chair</h1><template id='P:2e'></template>"
        "<!--$?--><template id='B:1f'></template><p>Loading reviews…</p><!--/$--></main>"
        f"<div hidden id='S:2e'><section>{prose(4)}{specs}</section></div>"
        "<div hidden id='S:1f'><p>Sturdy and comfortable, say the reviews of this chair, which"
        " most buyers put together in under an hour.</p></div></body></html>"
    )
    markdown = render_html(html)
    assert "Post 3, again." in markdown
    assert "20 to 23 inches" in markdown
    assert "Sturdy and comfortable" in markdown
    assert "Loading reviews" not in markdown


def test_a_streamed_chunk_without_its_placeholder_is_shown_where_it_is() -> None:
    """A browser whose scripts did not run leaves the chunks in place, still hidden."""
    html = (
        f"<html><body><div id='root'><h1>Executive chair</h1><div>{prose(3)}</div>"
        "<div hidden id='S:1a'><section><p>Specifications: the seat rises from 20 to 23"
        " inches, the base is 27 inches wide, and the chair weighs 58 pounds.</p></section>"
        "</div></div></body></html>"
    )
    markdown = render_html(html)
    assert "Post 2, again." in markdown
    assert "the seat rises from 20 to 23 inches" in markdown


def test_a_folded_accordion_panel_is_read() -> None:
    details = "".join(
        f"<li>Detail {n}: the frame is manufactured wood, the seat is upholstered, and the arms"
        " are fixed to the base.</li>"
        for n in range(6)
    )
    html = (
        f"<html><body><main><h1>Executive chair</h1>{prose(3)}"
        "<button aria-expanded='false'>Specifications</button>"
        "<div id='react-collapsed-panel-:r4:' role='region' aria-hidden='true'"
        f" style='display:none;height:0px'><ul>{details}</ul></div>"
        f"<div class='accordion__body' hidden><p>Care: spot clean only, with a damp cloth"
        " and no solvent, as the vinyl cracks.</p></div>"
        "<div hidden><p>A hidden promotion nobody is shown, with its own long text that a"
        " reader never sees on this page.</p></div></main></body></html>"
    )
    markdown = render_html(html)
    assert "Detail 5:" in markdown
    assert "spot clean only" in markdown
    assert "hidden promotion" not in markdown


def test_class_names_match_whole_words() -> None:
    assert is_unlikely("site-footer")
    assert is_unlikely("commentList")
    assert is_unlikely("relatedposts")
    assert not is_unlikely("seofootercopy")
    assert not is_unlikely("mainstream-2col")


def test_a_layout_class_on_the_page_wrapper_keeps_the_page() -> None:
    about = "We are a small club of valve owners, founded long ago, and we meet every month."
    html = (
        "<html><body><div class='full-width-template-with-sidebar'>"
        f"<div class='entry'>{prose(8)}</div></div>"
        f"<div class='about'>{''.join(f'<p>{about} {n}</p>' for n in range(7))}</div>"
        "</body></html>"
    )
    assert "Post 5, again." in render_html(html)


def test_furigana_is_dropped() -> None:
    html = (
        "<html><body><article>"
        + "".join(
            f"<p><ruby>漢字<rp>(</rp><rt>かんじ</rt><rp>)</rp></ruby>を読む。{SENTENCE} {n}</p>"
            for n in range(5)
        )
        + "</article></body></html>"
    )
    markdown = render_html(html)
    assert "漢字を読む" in markdown
    assert "かんじ" not in markdown


def thread(head: str) -> str:
    """A forum thread: a long question and three short answers, each in its own post block with
    its author line, beside a sidebar of prose that is no post."""
    posts = "".join(
        f"<div class='row'><div class='topic-post'><div class='names'>"
        f"<a href='/u/user{n}'>user{n}</a></div><div class='body'><div class='cooked'>"
        f"{prose(6 if n == 0 else 1)}<p>Reply {n} says more, so.</p>"
        f"<p>{SENTENCE} Reply {n} ends here.</p></div></div></div></div>"
        for n in range(4)
    )
    return (
        f"<html><head>{head}</head><body><div class='posts'>{posts}</div>"
        "<div class='about'><p>This forum is run by volunteers who answer questions about "
        "valves, pumps and drivers, every day of the week, for free.</p></div></body></html>"
    )


def test_every_post_of_a_declared_thread_is_kept() -> None:
    markdown = render_html(thread('<meta name="generator" content="Discourse 3.5.0">'))
    assert all(f"Reply {n} says more, so." in markdown for n in range(4))
    assert "user3" in markdown


def test_json_ld_declares_a_thread() -> None:
    head = (
        '<script type="application/ld+json">'
        '{"@context": "https://schema.org", "@type": "DiscussionForumPosting"}</script>'
    )
    markdown = render_html(thread(head))
    assert all(f"Reply {n} ends here." in markdown for n in range(4))


def commented(declared: str, post: str) -> str:
    """A page that declares itself ``declared``: four posts of class and id ``post`` (``{n}``
    its number), each with a remark under it in a block named a comment, beside an overview of
    prose long enough to pass for the content by itself."""
    posts = "".join(
        f"<article class='entry' id='{post.format(n=n)}'><p>{SENTENCE} Post {n} ends here.</p>"
        f"<div class='comment-list'><p>A remark under post {n}, one line long.</p></div>"
        "</article>"
        for n in range(4)
    )
    overview = "".join(f"<p>{SENTENCE} Overview {n}.</p>" for n in range(4))
    head = f'<script type="application/ld+json">{{"@type": "{declared}"}}</script>'
    return (
        f"<html><head>{head}</head><body><div class='overview'>{overview}</div>"
        f"<form action='/moderate'>{posts}</form></body></html>"
    )


def test_a_thread_keeps_the_posts_it_names_comments_and_a_question_drops_its_remarks() -> None:
    # Forum software names its posts comments (Invision's elComment_123): on a thread they are
    # the content. On a page of questions and answers, comments are the remarks under them.
    thread_page = render_html(commented("DiscussionForumPosting", "elComment_{n}"))
    assert all(f"Post {n} ends here." in thread_page for n in range(4))
    questions = render_html(commented("QAPage", "answer-{n}"))
    assert all(f"Post {n} ends here." in questions for n in range(4))
    assert "A remark under post" not in questions


def test_page_kinds_are_read_from_what_the_page_declares() -> None:
    from selectolax.lexbor import LexborHTMLParser

    from webreach.tools.render.content.kinds import Kind, page_kind

    def kind(head: str) -> Kind:
        return page_kind(LexborHTMLParser(f"<html><head>{head}</head><body></body></html>"))

    assert kind('<meta name="generator" content="XenForo">') is Kind.FORUM
    declared = '<script type="application/ld+json">{{"@type": "{}"}}</script>'
    assert kind(declared.format("DiscussionForumPosting")) is Kind.FORUM
    assert kind(declared.format("QAPage")) is Kind.QUESTIONS
    assert kind('<meta property="og:type" content="product">') is Kind.PRODUCT
    assert kind('<script type="application/ld+json">{"@type": "Product"}</script>') is Kind.PRODUCT
    assert kind('<meta property="og:type" content="article">') is Kind.ARTICLE
    listing = '<script type="application/ld+json">[{"@type": "Product"}, {"@type": "Product"}]'
    assert kind(listing + "</script>") is Kind.ARTICLE


def test_a_page_of_linked_item_titles_is_a_listing() -> None:
    from selectolax.lexbor import LexborHTMLParser

    from webreach.tools.render.content.kinds import Kind, page_kind

    def kind(head: str, body: str = "") -> Kind:
        return page_kind(LexborHTMLParser(f"<html><head>{head}</head><body>{body}</body></html>"))

    items = "".join(f"<h3><a href='/story/{n}'>Story {n}</a></h3><p>Teaser.</p>" for n in range(7))
    anchors = "".join(f"<h3><a href='#part-{n}'>Part {n}</a></h3><p>Text.</p>" for n in range(7))
    article = '<meta property="og:type" content="article">'
    assert kind("", items) is Kind.LISTING
    # Blogs call every page an article: the items say listing, unless a body of prose stands
    # beside them (a story with a rail of related ones).
    assert kind(article, items) is Kind.LISTING
    story = f"<div><p>{SENTENCE * 4}</p><p>{SENTENCE * 4}</p></div>"
    assert kind(article, story + items) is Kind.ARTICLE
    assert kind("", anchors) is Kind.ARTICLE
    collection = '<script type="application/ld+json">{"@type": "CollectionPage"}</script>'
    assert kind(collection) is Kind.LISTING


def listing_page() -> str:
    """Eight story cards in two sections of a front page, each a linked title and a teaser."""
    cards = [
        f"<div class='card'><h3><a href='/story/{n}'>Story {n} of the day</a></h3>"
        f"<p>{SENTENCE} Teaser {n}, in short.</p></div>"
        for n in range(8)
    ]
    return (
        "<html><body><nav><a href='/'>Home</a> <a href='/world'>World</a></nav><main>"
        f"<section class='top'>{''.join(cards[:4])}</section>"
        f"<section class='more'><h2>More stories</h2>{''.join(cards[4:])}</section>"
        "</main><footer><p>Copyright the newspaper, all rights kept, since long ago.</p>"
        "</footer></body></html>"
    )


def test_every_item_of_a_listing_is_kept() -> None:
    markdown = render_html(listing_page())
    assert all(f"Teaser {n}, in short." in markdown for n in range(8))
    assert "[Story 7 of the day](" in markdown
    assert "Copyright" not in markdown


def test_the_posts_of_a_thread_are_other_blocks_than_the_best_posts_wrappers() -> None:
    """A long first post, wrapped in blocks that score nearly as high as it does, does not hide
    the short replies: the wrappers are the same post, not other posts."""
    posts = "".join(
        f"<article class='message'><div class='message-user'><a href='/u/{n}'>user{n}</a>"
        "</div><div class='message-cell'><div class='message-content'><div class='message-body'>"
        f"<div class='bbWrapper'>{prose(8 if n == 0 else 2)}<p>Reply {n} says more, so.</p>"
        "</div></div></div></div></article>"
        for n in range(4)
    )
    head = '<meta name="generator" content="XenForo 2.2">'
    html = f"<html><head>{head}</head><body><div class='block-body'>{posts}</div></body></html>"
    markdown = render_html(html)
    assert all(f"Reply {n} says more, so." in markdown for n in range(4))


def test_a_cookie_banner_is_not_the_content() -> None:
    notice = (
        "<p>We, and our partners, use cookies and similar methods to recognise visitors, "
        "remember their preferences, measure campaigns, and analyse traffic, as explained at "
        "length in our policy, which you should read.</p>"
    )
    banner = f"<div id='onetrust-banner-sdk'>{notice * 6}</div>"
    markdown = render_html(f"<html><body>{banner}<div>{prose(4)}</div></body></html>")
    assert "Post 1, again." in markdown
    assert "partners" not in markdown


def test_a_consent_managers_banner_stays_out_when_the_page_is_all_links() -> None:
    """Relaxed retries, run when the first pass finds too little text on a page of links, still
    drop what only a consent banner is named."""
    notice = (
        "<p>We and our partners store and access information on your device, such as cookies, "
        "to measure audiences and personalise what you see, as our notice explains.</p>"
    )
    items = "".join(
        f"<li><h3><a href='/story/{n}'>A story about valves, number {n}</a></h3>"
        "<p>Why it sticks.</p></li>"
        for n in range(6)
    )
    html = (
        f"<html><body><div id='fides-banner' class='fides-banner'>{notice * 5}</div>"
        f"<main><ul>{items}</ul></main></body></html>"
    )
    markdown = render_html(html)
    assert "number 5" in markdown
    assert "partners" not in markdown


def product_page(body: str) -> str:
    data = (
        '{"@context": "https://schema.org", "@type": "Product", "name": "Trail pack 25",'
        ' "description": "A light daypack of recycled nylon, with a padded back panel, two side'
        ' pockets and a rain cover folded in its lid.",'
        ' "offers": {"@type": "Offer", "price": "89.95", "priceCurrency": "USD"}}'
    )
    return (
        f'<html><head><script type="application/ld+json">{data}</script></head>'
        f"<body>{body}</body></html>"
    )


def test_a_products_declared_description_is_read_when_the_page_lacks_it() -> None:
    reviews = "".join(
        f"<p>Review {n}: {SENTENCE}</p>" for n in range(4)
    )  # the description itself is drawn by script
    markdown = render_html(product_page(f"<main><h1>Trail pack 25</h1><div>{reviews}</div></main>"))
    assert "recycled nylon" in markdown
    assert "89.95 USD" in markdown
    assert markdown.count("Trail pack 25") == 1


def test_a_products_declared_description_is_not_repeated() -> None:
    shown = (
        "<main><h1>Trail pack 25</h1><p>$89.95</p><p>A light daypack of recycled nylon, with a"
        " padded back panel, two side pockets and a rain cover folded in its lid.</p>"
        f"{prose(3)}</main>"
    )
    markdown = render_html(product_page(shown))
    assert markdown.count("recycled nylon") == 1
    assert "USD" not in markdown


def test_a_shops_cart_and_reviews_beside_the_product_stay_out() -> None:
    cart = "".join(
        f"<tr><td>Trail pack 25, blue, size {n}: price per piece, quantity and the line total "
        "with taxes, discounts and shipping calculated at checkout.</td></tr>"
        for n in range(6)
    )
    reviews = "".join(f"<p>Reviewer {n} wrote: {SENTENCE}</p>" for n in range(4))
    body = (
        f"<div class='cart-drawer'><table>{cart}</table></div><main><h1>Trail pack 25</h1>"
        f"<div class='product__description'>{prose(3)}</div></main>"
        f"<section class='product-reviews'>{reviews}</section>"
    )
    markdown = render_html(product_page(body))
    assert "Post 2, again." in markdown
    assert "checkout" not in markdown
    assert "Reviewer" not in markdown


def test_what_only_looks_like_a_product_page_is_read_as_what_it_is() -> None:
    """A group of products is a collection of them; a product declared only to carry a rating,
    offering nothing, on a page that declares an article, leaves the page an article."""
    from selectolax.lexbor import LexborHTMLParser

    from webreach.tools.render.content.kinds import Kind, page_kind

    def kind(head: str) -> Kind:
        return page_kind(LexborHTMLParser(f"<html><head>{head}</head><body></body></html>"))

    assert kind('<meta property="og:type" content="product.group">') is Kind.LISTING
    rated = (
        '<script type="application/ld+json">[{"@type": "BlogPosting"}, {"@type": "Product",'
        ' "aggregateRating": {"@type": "AggregateRating", "ratingValue": "4.8"}}]</script>'
    )
    assert kind(rated) is Kind.ARTICLE
    sold = rated.replace('"aggregateRating"', '"offers": {"price": "5"}, "aggregateRating"')
    assert kind(sold) is Kind.PRODUCT


def test_a_short_intro_inside_main_does_not_hide_the_items_after_it() -> None:
    """The intro paragraph outscores each short item of a list below it; the page's `<main>`
    around both, mostly not links, is the content."""
    intro = f"<p>{SENTENCE} {SENTENCE}</p>" * 2
    items = "".join(
        f"<div class='trail'><h3>Trail {n}</h3><div>Difficulty: beginner</div>"
        f"<div>Length: {n + 3} miles</div><div>Steward: volunteer {n}</div></div>"
        for n in range(8)
    )
    html = (
        "<html><body><nav><a href='/'>Home</a> <a href='/join'>Join</a></nav>"
        f"<main><h1>Trails</h1><div class='intro'>{intro}</div><div class='grid'>{items}</div>"
        "</main><footer><p>Copyright the association.</p></footer></body></html>"
    )
    markdown = render_html(html)
    assert "Steward: volunteer 7" in markdown
    assert "Copyright" not in markdown


def test_a_description_written_as_bullet_points_is_the_content() -> None:
    bullets = "".join(f"<li><strong>Feature {n}:</strong> {SENTENCE}</li>" for n in range(5))
    notes = "".join(
        f"<tr><td>Variant {n}, blue, price per piece and quantity, sold out</td></tr>"
        for n in range(3)
    )
    body = (
        f"<div class='variants'><table>{notes}</table></div><div class='product'><h1>Trail"
        f" pack 25</h1><div class='product__description'><ul>{bullets}</ul></div></div>"
        "<div class='promo'><p>Free shipping on orders over fifty dollars, this week only, "
        "for members.</p></div>"
    )
    markdown = render_html(product_page(body))
    assert "Feature 4:" in markdown
    assert "Variant 2" not in markdown
