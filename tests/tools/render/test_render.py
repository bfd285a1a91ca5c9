"""The HTML→Markdown renderer: reader-mode Markdown of a page's main content.

`render_page` finds the main content the way Mozilla Readability does, writes it as Markdown with
absolute links, and falls back to the whole page when no article stands out.
"""

from __future__ import annotations

import pytest

from webreach.tools.render import RenderedPage, render_html, render_page
from webreach.tools.render.markdown.urls import UrlResolver
from webreach.tools.render.markdown.writer import MarkdownWriter

PARAGRAPH = (
    "Reader mode keeps the words a person came for, and drops the chrome around them, "
    "which is exactly what a language model wants to read as well."
)


def article_page(body: str, *, head: str = "") -> str:
    """A realistic page: site chrome around an article holding `body` and enough prose."""
    prose = "".join(f"<p>{PARAGRAPH} Paragraph {n}, with commas, here.</p>" for n in range(6))
    return f"""<!doctype html>
<html><head><title>The article | Example Site</title>{head}
<style>.x {{ color: red }}</style><script>var tracking = "script text";</script></head>
<body>
  <header class="site-header"><a href="/">Example Site home</a></header>
  <nav class="menu"><ul><li><a href="/news">News navigation</a></li>
    <li><a href="/sport">Sport navigation</a></li></ul></nav>
  <div id="main"><article class="post-content">
    <h1>The article</h1>
    {body}
    {prose}
  </article></div>
  <aside class="sidebar"><p>Sidebar teaser, subscribe to our newsletter today.</p></aside>
  <div class="comments"><p>Comment by a reader, who disagrees strongly.</p></div>
  <footer class="site-footer"><p>Copyright footer text, all rights reserved.</p></footer>
</body></html>"""


# Main content ---------------------------------------------------------------------------------


def test_keeps_the_article_and_drops_navigation_chrome_scripts_and_styles() -> None:
    markdown = render_html(article_page("<p>The opening paragraph of the story.</p>"))

    assert "The opening paragraph of the story." in markdown
    assert "Paragraph 5, with commas, here." in markdown
    for chrome in ("navigation", "Sidebar teaser", "Comment by a reader", "Copyright footer"):
        assert chrome not in markdown
    assert "script text" not in markdown
    assert "color: red" not in markdown


def test_render_html_is_the_markdown_of_render_page() -> None:
    html = article_page("<p>Same either way.</p>")

    assert render_html(html) == render_page(html).markdown


def test_falls_back_to_the_whole_page_when_no_article_stands_out() -> None:
    html = """<html><body>
      <nav><a href="https://example.com/a">Alpha</a> <a href="https://example.com/b">Beta</a></nav>
      <div><span>Opening hours: 9 to 5</span></div>
      <footer>Contact us</footer>
    </body></html>"""

    markdown = render_html(html)

    assert "[Alpha](https://example.com/a)" in markdown
    assert "Opening hours: 9 to 5" in markdown
    assert "Contact us" in markdown


def test_a_page_without_an_article_is_read_without_its_menus_header_and_footer() -> None:
    """A grid of short items has no block that reads as an article: the fallback is the page,
    but not its furniture, so the items are what a reader gets."""
    items = "".join(
        f'<div class="tile"><a href="/p/{n}">Roast number {n}</a><span>$1{n}.99</span></div>'
        for n in range(12)
    )
    html = f"""<html><body>
      <header><a href="/">Home</a> <a href="/shop">Shop every coffee we roast</a></header>
      <nav><a href="/a">Light roasts and blends</a> <a href="/b">Dark roasts and blends</a></nav>
      <div class="grid">{items}</div>
      <aside>Subscribe to our newsletter for ten percent off your first order</aside>
      <footer>Copyright and the addresses of every shop we keep</footer>
    </body></html>"""

    markdown = render_html(html, base_url="https://shop.example/")

    assert all(f"Roast number {n}" in markdown and f"$1{n}.99" in markdown for n in range(12))
    for furniture in ("Shop every coffee", "Light roasts", "newsletter", "Copyright"):
        assert furniture not in markdown


def test_a_page_without_an_article_is_its_declared_main_region() -> None:
    tiles = "".join(
        f'<div class="tile"><a href="/p/{n}">Roast number {n}</a><span>$1{n}.99</span></div>'
        for n in range(12)
    )
    html = f"""<html><body>
      <div class="top"><span>The site's own banner, a line about the site and its owner</span></div>
      <main><h1>Coffee</h1><div class="grid">{tiles}</div></main>
      <div class="bottom"><span>The rest of the site, and its terms of use</span></div>
    </body></html>"""

    markdown = render_html(html, base_url="https://shop.example/")

    assert markdown.startswith("# Coffee")
    assert "Roast number 11" in markdown
    assert "banner" not in markdown and "terms of use" not in markdown


def test_hidden_elements_are_not_content() -> None:
    body = (
        '<p style="display: none">Invisible text.</p><p hidden>Hidden text.</p>'
        '<p aria-hidden="true">Aria hidden text.</p><p>Visible text.</p>'
    )

    markdown = render_html(article_page(body))

    assert "Visible text." in markdown
    assert "Invisible" not in markdown
    assert "Hidden text" not in markdown
    assert "Aria hidden" not in markdown


# Title ----------------------------------------------------------------------------------------


def test_title_prefers_og_title_over_the_title_element() -> None:
    html = article_page("", head='<meta property="og:title" content="  The   article ">')

    assert render_page(html).title == "The article"


def test_title_falls_back_to_the_title_element_then_none() -> None:
    assert render_page(article_page("")).title == "The article | Example Site"
    assert render_page("<p>No title anywhere.</p>").title is None


def test_the_heading_that_repeats_the_title_is_left_to_the_caller() -> None:
    html = article_page("", head='<meta property="og:title" content="The article">')

    page = render_page(html)

    assert page.title == "The article"
    assert "# The article" not in page.markdown


# Links ----------------------------------------------------------------------------------------


def test_links_are_made_absolute_against_the_page_url() -> None:
    body = (
        '<p>See <a href="/docs/intro">the intro</a>, <a href="guide.html">the guide</a> and '
        '<a href="//cdn.example.net/file.pdf">the file</a>.</p>'
    )

    markdown = render_html(article_page(body), base_url="https://example.com/blog/post")

    assert "[the intro](https://example.com/docs/intro)" in markdown
    assert "[the guide](https://example.com/blog/guide.html)" in markdown
    assert "[the file](https://cdn.example.net/file.pdf)" in markdown


def test_base_element_overrides_the_page_url() -> None:
    html = article_page(
        '<p>Read <a href="chapter-2">chapter two</a>.</p>',
        head='<base href="https://mirror.example.org/book/">',
    )

    assert "[chapter two](https://mirror.example.org/book/chapter-2)" in render_html(
        html, base_url="https://example.com/post"
    )


def test_relative_base_element_resolves_against_the_page_url() -> None:
    html = article_page('<p>Read <a href="ch-3">chapter three</a>.</p>', head='<base href="/v2/">')

    markdown = render_html(html, base_url="https://example.com/post/1")

    assert "[chapter three](https://example.com/v2/ch-3)" in markdown


def test_without_any_base_relative_links_stay_relative() -> None:
    markdown = render_html(article_page('<p>Go <a href="/about">about us</a>.</p>'))

    assert "[about us](/about)" in markdown


def test_script_links_and_in_page_anchors_keep_only_their_text() -> None:
    body = (
        '<p>Click <a href="javascript:alert(1)">this script link</a>, '
        '<a href=" JaVaScRiPt:void(0)">that one</a>, <a href="data:text/html,x">a data link</a> '
        'or <a href="#notes">the notes</a>.</p>'
    )

    markdown = render_html(article_page(body), base_url="https://example.com/")

    assert "Click this script link, that one, a data link or the notes." in markdown
    assert "javascript" not in markdown.lower()
    assert "data:" not in markdown


def test_link_urls_cannot_break_out_of_markdown() -> None:
    body = '<p>A <a href="/a page (draft)">tricky link</a>.</p>'

    markdown = render_html(article_page(body), base_url="https://example.com/")

    assert "[tricky link](https://example.com/a%20page%20%28draft%29)" in markdown


def test_images_are_dropped_and_data_urls_never_emitted() -> None:
    body = (
        '<p>Chart: <img src="/chart.png" alt="A chart"> '
        '<img src="data:image/png;base64,AAAA" alt="inline"></p>'
    )

    markdown = render_html(article_page(body), base_url="https://example.com/")

    assert "chart.png" not in markdown
    assert "data:" not in markdown


def test_the_writer_can_keep_images_but_never_data_urls() -> None:
    page = render_page  # the tree comes from the public parser
    del page
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(
        '<p><img src="data:image/png;base64,AAAA" alt="inline">'
        '<img src="data:image/gif;base64,R0" data-src="/real.png" alt="lazy"></p>'
    )
    assert tree.body is not None
    writer = MarkdownWriter(UrlResolver("https://example.com/"), images=True)

    assert writer.convert([tree.body]) == "![lazy](https://example.com/real.png)"


# Structure ------------------------------------------------------------------------------------


def test_headings_emphasis_and_inline_code_are_kept() -> None:
    body = (
        "<h2>Second level</h2><h3>Third   level</h3>"
        "<p>Some <strong>bold</strong>, <em>italic</em> and <code>inline_code()</code>.</p>"
    )

    markdown = render_html(article_page(body))

    assert "## Second level" in markdown
    assert "### Third level" in markdown
    assert "Some **bold**, *italic* and `inline_code()`." in markdown


def test_lists_and_nested_lists_are_kept() -> None:
    body = """<ul><li>First item</li><li>Second item
        <ol start="3"><li>Nested three</li><li>Nested four</li></ol></li></ul>"""

    markdown = render_html(article_page(body))

    assert "- First item\n- Second item\n  3. Nested three\n  4. Nested four" in markdown


def test_data_tables_become_pipe_tables() -> None:
    body = """<table><thead><tr><th>Name</th><th>Score</th></tr></thead>
        <tbody><tr><td>Ada</td><td>10</td></tr><tr><td>Grace | Hopper</td><td>9</td></tr></tbody>
        </table>"""

    markdown = render_html(article_page(body))

    assert "| Name | Score |\n| --- | --- |\n| Ada | 10 |\n| Grace \\| Hopper | 9 |" in markdown


def test_layout_tables_are_unwrapped_into_blocks() -> None:
    html = f"""<html><body><table role="presentation"><tr><td>
        <p>{PARAGRAPH} First.</p><p>{PARAGRAPH} Second.</p><p>{PARAGRAPH} Third.</p>
        <p>{PARAGRAPH} Fourth.</p></td></tr></table></body></html>"""

    markdown = render_html(html)

    assert "|" not in markdown
    assert f"{PARAGRAPH} First.\n\n{PARAGRAPH} Second." in markdown


def test_preformatted_code_becomes_a_fenced_block_with_its_language() -> None:
    body = """<pre><code class="language-python">def greet(name):
    return f"hi {name}"  # *not* emphasis
</code></pre>"""

    markdown = render_html(article_page(body))

    assert '```python\ndef greet(name):\n    return f"hi {name}"  # *not* emphasis\n```' in markdown


def test_code_containing_backticks_gets_a_longer_fence() -> None:
    body = "<pre>```\nnested fence\n```</pre><p>Use <code>a`b</code> here.</p>"

    markdown = render_html(article_page(body))

    assert "````\n```\nnested fence\n```\n````" in markdown
    assert "Use ``a`b`` here." in markdown


def test_blockquotes_are_quoted_line_by_line() -> None:
    body = "<blockquote><p>First quoted line.</p><p>Second quoted line.</p></blockquote>"

    markdown = render_html(article_page(body))

    assert "> First quoted line.\n>\n> Second quoted line." in markdown


def test_double_line_breaks_split_paragraphs_and_single_ones_break_lines() -> None:
    body = "<div>Roses are red,<br>violets are blue.<br><br>Second stanza starts here.</div>"

    markdown = render_html(article_page(body))

    assert "Roses are red,\nviolets are blue.\n\nSecond stanza starts here." in markdown


# Escaping and robustness ----------------------------------------------------------------------


def test_markdown_characters_in_text_are_escaped() -> None:
    body = (
        "<p>2 * 3 = 6, [not a link], _emphasis_ but snake_case stays, a &lt;tag&gt; too.</p>"
        "<p># not a heading</p><p>1. not a list</p><p>- nor this</p>"
    )

    markdown = render_html(article_page(body))

    assert r"2 \* 3 = 6, \[not a link\], \_emphasis\_ but snake_case stays, a \<tag> too." in (
        markdown
    )
    assert "\n\\# not a heading\n" in markdown
    assert "\n1\\. not a list\n" in markdown
    assert "\n\\- nor this\n" in markdown


def test_whitespace_is_collapsed_like_a_browser_does() -> None:
    body = "<p>  Spread\n\t over    many\n  lines&nbsp;and <b> spaced </b>words.  </p>"

    assert "Spread over many lines and **spaced** words." in render_html(article_page(body))


@pytest.mark.parametrize("html", ["", "   \n ", "<html></html>", "<!-- only a comment -->"])
def test_empty_input_gives_empty_markdown(html: str) -> None:
    assert render_page(html) == RenderedPage(title=None, markdown="")


def test_malformed_html_is_repaired_not_rejected() -> None:
    html = "<div><p>Unclosed <b>bold <i>and italic<p>Next paragraph</div></span></table>"

    markdown = render_html(html)

    assert "Unclosed **bold *and italic***" in markdown
    assert "Next paragraph" in markdown


def test_a_title_left_open_does_not_swallow_the_page() -> None:
    html = article_page("<p>The story survives a broken head.</p>").replace("</title>", "", 1)

    page = render_page(html)

    assert "The story survives a broken head." in page.markdown
    assert page.title is not None and page.title.startswith("The article | Example Site")


def test_rendered_page_is_immutable() -> None:
    page = render_page("<p>x</p>")

    with pytest.raises(AttributeError):
        page.markdown = "changed"  # type: ignore[misc]


# Fast paths keep the general behaviour --------------------------------------------------------


@pytest.mark.parametrize(
    "href",
    ["/a/b.html", "/a/./b", "/a/../b", "/a;p?q", "/a?", "/a#", "/a?#f", "//cdn.example/x", "/a\tb"],
)
def test_root_relative_links_resolve_exactly_as_urljoin_does(href: str) -> None:
    from urllib.parse import urljoin

    resolver = UrlResolver("https://Example.com:8080/dir/page.html?q=1")

    expected = urljoin("https://Example.com:8080/dir/page.html?q=1", href.strip())
    assert resolver.resolve(href) == expected.translate(
        str.maketrans({" ": "%20", "(": "%28", ")": "%29", "<": "%3C", ">": "%3E"})
    )


def test_a_link_around_block_content_keeps_its_blocks() -> None:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(
        '<div><a href="/card"><h3>Card title</h3><p>Card text.</p></a>'
        '<a href="/plain">plain link</a> <em>stressed</em></div>'
    )
    root = tree.css_first("div")
    assert root is not None

    markdown = MarkdownWriter(UrlResolver("https://example.com/"), images=False).convert([root])

    # Markdown has no link around blocks: the card's title takes it.
    assert "### [Card title](https://example.com/card)" in markdown
    assert "Card text." in markdown
    assert "[plain link](https://example.com/plain) *stressed*" in markdown


def test_nested_link_densities_equal_measuring_each_element_whole() -> None:
    from selectolax.lexbor import LexborHTMLParser

    from webreach.tools.render.content.density import NestedDensities, measure

    tree = LexborHTMLParser(
        """<body><div id="outer"> lead text <a href="/x">out link</a>
          <div id="middle"><p>Para <a href="#n">anchor</a> more.</p>
            <div id="inner"><p>Inner <a href="/y">link text</a> and words.</p></div>
            <!-- comment --> tail <span>span text</span>
          </div>
          <a href="/card"><div id="in-link"><p>Card <a href="#z">x</a></p></div></a>
        </div></body>"""
    )
    ids = ["inner", "middle", "outer", "in-link"]
    nodes = {name: tree.css_first(f"#{name}") for name in ids}
    densities = NestedDensities()

    for name in ids + list(reversed(ids)):
        node = nodes[name]
        assert node is not None
        assert densities.lengths(node) == measure(node, text_always=True), name
        assert densities.link_density(node) == measure(node).density


def test_column_spans_widen_rows_and_odd_values_count_as_one_column() -> None:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(
        "<table><tr><th colspan=2>Wide</th><th>C</th></tr>"
        '<tr><td colspan="0">a</td><td colspan="²">b</td><td>c</td></tr>'
        "<tr><td>1</td></tr></table>"
    )
    table = tree.css_first("table")
    assert table is not None

    markdown = MarkdownWriter(UrlResolver(None), images=False).convert([table])

    assert markdown.splitlines() == [
        "| Wide |  | C |",
        "| --- | --- | --- |",
        "| a | b | c |",
        "| 1 |  |  |",
    ]


def test_a_one_column_table_is_rendered_as_blocks() -> None:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser("<table><tr><td><p>First</p></td></tr><tr><td>Second</td></tr></table>")
    table = tree.css_first("table")
    assert table is not None

    markdown = MarkdownWriter(UrlResolver(None), images=False).convert([table])

    assert markdown == "First\n\nSecond"


def test_loose_text_beside_blocks_becomes_its_own_paragraph() -> None:
    body = (
        "<div><p>A paragraph of the story, long enough to be scored as prose here.</p>"
        " Loose text written straight into the layout div, beside the blocks.<br><br>"
        "And its second line after a double break.<!-- note --></div>"
        "<div><!-- lone --><p>The lone paragraph of a wrapper div.</p><!-- end --></div>"
    )

    markdown = render_html(article_page(body))

    blocks = markdown.split("\n\n")
    assert "Loose text written straight into the layout div, beside the blocks." in blocks
    assert "And its second line after a double break." in blocks
    assert "The lone paragraph of a wrapper div." in blocks


@pytest.mark.parametrize("size", [0, 3, 40])
def test_searching_by_tag_finds_what_the_selector_finds(size: int) -> None:
    from selectolax.lexbor import LexborHTMLParser

    from webreach.tools.render.dom import descendants, has_descendant, select, tags

    filler = "<span>x</span>" * size
    tree = LexborHTMLParser(
        f"<div id=root><p>a {filler}<a href=#x>in</a></p><!-- c --><ul><li><a>out</a></li></ul>"
        f"{filler}<table><tr><td>1</td></tr></table></div>"
    )
    root = tree.css_first("#root")
    assert root is not None

    for wanted in ("a", "p,li", "div", "table,td", "h1"):
        want = tags(wanted)
        expected = [node.mem_id for node in root.css(wanted)]
        assert [node.mem_id for node in select(root, want)] == expected
        below = [key for key in expected if key != root.mem_id]
        assert [node.mem_id for node in descendants(root, want)] == below
        assert has_descendant(root, want) == bool(below)


def test_title_metadata_is_matched_ignoring_case_and_property_outranks_name() -> None:
    head = (
        '<meta property="og:description" name="og:title" content="Not a title">'
        '<meta NAME="Twitter:Title" content="The twitter title">'
    )

    assert render_page(article_page("<p>x</p>", head=head)).title == "The twitter title"


def test_several_equally_good_candidates_widen_the_choice_to_their_ancestor() -> None:
    sections = "".join(
        f'<div class="part"><div class="copy"><p>{PARAGRAPH} Part {n}, first, with commas.</p>'
        f"<p>{PARAGRAPH} Part {n}, second, with commas.</p></div></div>"
        for n in range(4)
    )
    html = (
        "<html><body><nav><a href='/a'>Menu link</a></nav>"
        f'<div id="parts">{sections}</div>'
        "<div class='teaser'><p>Teaser paragraph, short, with a comma.</p></div></body></html>"
    )

    markdown = render_html(html)

    for n in range(4):
        assert f"Part {n}, first, with commas." in markdown
    assert "Menu link" not in markdown


@pytest.mark.parametrize(
    ("head", "body", "expected"),
    [
        (
            '<meta property="article:published_time" content="2026-01-02T03:04:05Z">',
            "",
            "2026-01-02T03:04:05Z",
        ),
        (
            '<meta name="date" content="2025-10-15">'
            '<meta itemprop="datePublished" content="2025-01-01">',
            "",
            "2025-01-01",
        ),
        ("", '<time datetime="2024-05-06">May 6</time>', "2024-05-06"),
        ("", "<p>No date here.</p>", None),
    ],
)
def test_the_page_says_when_it_was_published(head: str, body: str, expected: str | None) -> None:
    page = render_page(f"<html><head><title>T</title>{head}</head><body>{body}</body></html>")
    assert page.published == expected
