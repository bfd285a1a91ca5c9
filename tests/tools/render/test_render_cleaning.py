"""The article cleaning inside the chosen blocks: boilerplate by its names and shape goes, but a
cleaning that takes most of the blocks has misread the layout, and the page is read again with
only its link farms cleaned away."""

from __future__ import annotations

from webreach.tools.render import render_html

PROSE = (
    "The cast-iron plant grows in the darkest corner of a room, asks for water once a fortnight"
    " and keeps its deep green leaves for years, which is why it filled Victorian parlours"
)


def builder_page(extra: str = "") -> str:
    """An article drawn by a page builder: every block of its body is named a widget."""
    widgets = "".join(
        f"<div class='ck-widget bs-grid'><h3>Plant {n}</h3>"
        f"<p>{PROSE}, as plant {n} does.</p><p>{PROSE}; plant {n} even more so.</p></div>"
        for n in range(6)
    )
    return (
        "<html><head><title>Plants for dark rooms</title></head><body>"
        "<header><nav><a href='/'>Home</a> <a href='/plants'>Plants</a></nav></header>"
        f"<div class='entry'><h1>Plants for dark rooms</h1><p>{PROSE}, to begin with.</p>"
        f"<p>{PROSE}, once more.</p><p>{PROSE}, a last time.</p>{widgets}{extra}</div>"
        "<footer><p>The garden's own pages.</p></footer></body></html>"
    )


def test_a_page_builder_article_keeps_the_blocks_named_widgets() -> None:
    markdown = render_html(builder_page())
    assert f"{PROSE}, to begin with." in markdown
    for n in range(6):
        assert f"{PROSE}, as plant {n} does." in markdown
        assert f"{PROSE}; plant {n} even more so." in markdown


def test_read_again_the_article_still_drops_a_farm_of_links_inside_it() -> None:
    links = "".join(f"<li><a href='/plants/{n}'>Another plant, {n}</a></li>" for n in range(20))
    markdown = render_html(builder_page(f"<div class='more'><ul>{links}</ul></div>"))
    assert f"{PROSE}, as plant 5 does." in markdown
    assert "/plants/3" not in markdown


def test_a_cleaning_that_takes_little_is_kept_whole() -> None:
    story = "".join(f"<p>{PROSE}, part {n} of the story.</p>" for n in range(8))
    page = (
        "<html><body><div class='entry'><h1>Dark rooms</h1>"
        f"{story}<div class='widget'><p>Sign up for the weekly letter on plants.</p>"
        "<p>Or follow the garden elsewhere.</p></div>"
        "</div></body></html>"
    )
    markdown = render_html(page)
    assert f"{PROSE}, part 7 of the story." in markdown
    assert "weekly letter" not in markdown


def test_a_grid_of_cards_the_cleaning_empties_is_read_by_links_when_no_pass_finds_more() -> None:
    # Each card sits deep in a page builder's widget, so without class weights a lone intro
    # outscores every card; with them the grid is chosen and the full cleaning empties it (the
    # cards' 1,000 characters and more are enough to judge the cleaning by).
    line = (
        "grows in the darkest corner of a room, needs water once a fortnight, and lives for years"
        " in its pot"
    )
    cards = "".join(
        "<div class='elementor-widget cta'><div class='wrap'><div class='inner'><div class='box'>"
        f"<div class='card__content'><h3>Room plant {n}</h3><p>Plant {n} {line}.</p>"
        f"<a href='/plants/{n}'>See plant {n}</a></div></div></div></div></div>"
        for n in range(8)
    )
    note = (
        "Our nursery, in a valley, has grown plants for dark rooms since 1921, ships them, by"
        " post, to every town, packs them, by hand, and answers, always, every letter"
    )
    markdown = render_html(
        f"<html><head><title>Plants</title></head><body><div class='intro'><p>{note}.</p>"
        f"<p>{note}, again.</p></div><div class='grid'>{cards}</div></body></html>"
    )
    assert f"{note}, again." in markdown
    for n in range(8):
        assert f"Plant {n} {line}." in markdown
