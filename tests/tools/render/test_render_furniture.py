"""Reader view keeps the article and drops the furniture left inside its container.

Readability's scoring chooses the element that holds the story; news containers also hold menus,
related-link lists, tag rows and gallery captions repeated per slide. These rules run after that
choice and never cut a story below a short article.
"""

from __future__ import annotations

import pytest

from webreach.tools.render import render_html

OTHER = "More from the town hall, where the parks committee meets on Thursday, as it always does"
STORY = (
    "The council approved the new budget on Tuesday evening, after a debate that ran for "
    "more than four hours and drew a large, divided crowd to the town hall."
)


def news_page(inside: str, *, paragraphs: int = 5) -> str:
    """A news page whose article container holds the story's paragraphs and `inside` after them.

    `inside` may place the paragraphs itself with `{p1}`, `{p2}`….
    """
    story = {f"p{n}": f"<p>{STORY} Paragraph {n}, with commas, here.</p>" for n in range(1, 6)}
    if "{p1}" in inside:
        body = inside.format(**story)
    else:
        body = "".join(list(story.values())[:paragraphs]) + inside
    return f"""<html><head><title>Budget approved</title></head><body>
      <div id="masthead"><a href="/">The Town Crier</a></div>
      <div class="story-body"><h1>Budget approved</h1>{body}</div>
      <div class="footer">Copyright The Town Crier</div>
    </body></html>"""


def links(*titles: str) -> str:
    return "".join(f'<li><a href="/news/{n}">{title}</a></li>' for n, title in enumerate(titles))


RELATED = links(
    "Mayor announces re-election bid at packed rally",
    "School board votes to extend the academic year",
    "Road works to close the high street for a month",
)


def test_a_list_of_related_stories_after_the_article_is_dropped() -> None:
    markdown = render_html(news_page(f"<ul>{RELATED}</ul>"))

    assert "Paragraph 5, with commas, here." in markdown
    assert "Mayor announces re-election bid" not in markdown


def test_a_menu_before_the_article_is_dropped() -> None:
    menu = f"<ul>{links('News', 'Sport', 'Weather', 'Opinion')}</ul>"

    markdown = render_html(news_page(menu + "{p1}{p2}{p3}{p4}{p5}"))

    assert "Paragraph 1, with commas, here." in markdown
    assert "Weather" not in markdown


def test_a_menu_between_the_articles_paragraphs_is_dropped_as_its_items_are_a_word_or_two() -> None:
    menu = f"<ul>{links('Home', 'Local news', 'Sport', 'Contact us')}</ul>"

    markdown = render_html(news_page("{p1}{p2}" + menu + "{p3}{p4}{p5}"))

    assert "Local news" not in markdown
    assert "Paragraph 3, with commas, here." in markdown


def test_a_list_of_links_between_the_articles_paragraphs_is_the_articles_own() -> None:
    markdown = render_html(news_page("{p1}{p2}<ul>" + RELATED + "</ul>{p3}{p4}{p5}"))

    assert "[Mayor announces re-election bid at packed rally](/news/0)" in markdown
    assert "Paragraph 3, with commas, here." in markdown


def test_a_line_of_links_after_the_article_is_dropped_but_a_credit_with_prose_stays() -> None:
    inside = (
        '<p><a href="/tag/budget">Budget</a> | <a href="/tag/council">Council</a></p>'
        '<p>Reporting by Jane Doe; additional reporting by <a href="/staff/roe">Richard Roe</a>'
        " in the council chamber.</p>"
    )

    markdown = render_html(news_page(inside))

    assert "[Budget]" not in markdown
    assert "additional reporting by" in markdown


def test_a_linked_headline_with_its_date_after_the_article_is_a_teaser_and_is_dropped() -> None:
    teaser = '<p><a href="/news/9">Mayor announces re-election bid</a><br>08 Jan 08 | Politics</p>'

    markdown = render_html(news_page(teaser))

    assert "Mayor announces" not in markdown
    assert "Paragraph 5, with commas, here." in markdown


def test_a_gallery_caption_repeated_on_every_slide_is_kept_once() -> None:
    caption = "<figcaption>Councillors vote on the budget.</figcaption>"
    slide = f"<figure><img src='/s.jpg'>{caption}</figure>"

    markdown = render_html(news_page("{p1}{p2}" + slide * 4 + "{p3}{p4}{p5}"))

    assert markdown.count("Councillors vote on the budget.") == 1


def test_only_captions_are_kept_once_as_a_page_that_repeats_a_paragraph_means_it() -> None:
    repeated = f"<p>{STORY} Said twice on purpose.</p>"

    markdown = render_html(news_page("{p1}{p2}" + repeated * 2 + "{p3}"))

    assert markdown.count("Said twice on purpose.") == 2


def test_the_rules_never_cut_a_story_below_a_short_article() -> None:
    short = f"<p>{STORY}</p><p>{STORY} Again.</p>"
    page = news_page(short + f"<ul>{RELATED}{RELATED}{RELATED}{RELATED}</ul>", paragraphs=0)

    markdown = render_html(page)

    assert "Mayor announces re-election bid" in markdown


def test_a_sign_up_form_inside_the_article_is_dropped() -> None:
    sign_up = (
        "<form action='/subscribe'><p>Get the Crier's morning letter, every weekday, with the "
        "council's votes, the week's planning applications and what the schools decided.</p>"
        "<input type='EMAIL' name='address'><p>By giving us your address you agree to receive "
        "our letters and offers, and may unsubscribe whenever you like.</p></form>"
    )
    markdown = render_html(news_page("{p1}{p2}" + sign_up + "{p3}{p4}{p5}"))
    assert all(f"Paragraph {n}, with commas, here." in markdown for n in range(1, 6))
    assert "morning letter" not in markdown
    assert "unsubscribe" not in markdown


@pytest.mark.parametrize("part", ["header", "footer"])
def test_the_pages_own_header_and_footer_are_never_the_content(part: str) -> None:
    # On a page of short items the site's header or footer, a block of prose about the shop,
    # outscores every item; one in no article or section of the page is the site's, and goes.
    items = "".join(
        f"<li><a href='/plants/{n}'>Cast-iron plant {n}</a> <span>$1{n}.00</span></li>"
        for n in range(12)
    )
    about = (
        "Our nursery, in a valley, has grown plants for dark rooms since 1921, ships them, by"
        " post, to every town, packs them, by hand, and answers, always, every letter."
    )
    page = (
        "<html><head><title>Plants</title></head><body><div class='range'><h1>Plants</h1>"
        f"<ul>{items}</ul></div><{part}><p>{about}</p><p>{about}</p><p>{about}</p></{part}>"
        "</body></html>"
    )
    markdown = render_html(page)
    assert "Cast-iron plant 11" in markdown
    assert "Our nursery" not in markdown


def test_a_header_that_holds_the_pages_heading_is_the_pages_own() -> None:
    # A landing page may put its heading and the prose under it in a header of the body, with
    # less of the page's own below it.
    paragraphs = "".join(f"<p>{STORY} Paragraph {n}, with commas, here.</p>" for n in range(5))
    page = (
        "<html><head><title>The Town Crier</title></head><body>"
        f"<header><h1>Budget approved</h1>{paragraphs}</header>"
        f"<div class='more'><p>{OTHER}</p><p>{OTHER}</p><p>{OTHER}</p><p>{OTHER}</p></div>"
        "</body></html>"
    )
    markdown = render_html(page)
    assert all(f"Paragraph {n}, with commas, here." in markdown for n in range(5))
