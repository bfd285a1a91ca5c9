"""Blocks a page says twice are read once when they are another screen's layout or, in a thread,
a quote of a post; a block repeated within one layout is the page's own and stays."""

from __future__ import annotations

from webreach.tools.render import render_html

LINE = (
    "Join the class each Monday night for a live meditation of forty minutes, with questions"
    " at the end and a recording for whoever missed it"
)


def count(markdown: str, text: str) -> int:
    return " ".join(markdown.split()).count(text)


def test_a_description_drawn_for_desktop_and_for_phones_is_read_once() -> None:
    description = f"<p>{LINE}.</p><ul><li>{LINE}, the list's first item.</li></ul>"
    page = (
        "<html><body><main><h1>Monday meditation</h1><p>$39.00 every month</p>"
        f"<div class='product-description hidden-md-down'>{description}</div>"
        "<button>Subscribe</button>"
        f"<div class='product-description hidden-md-up'>{description}</div>"
        "</main></body></html>"
    )
    markdown = render_html(page)
    assert count(markdown, f"{LINE}.") == 1
    assert count(markdown, f"{LINE}, the list's first item.") == 1


def test_a_paragraph_the_page_itself_repeats_stays_repeated() -> None:
    sections = "".join(
        f"<h2>Week {n}</h2><div><p>Week {n} begins with a short talk.</p><p>{LINE}.</p></div>"
        for n in range(3)
    )
    markdown = render_html(f"<html><body><article>{sections}</article></body></html>")
    assert count(markdown, f"{LINE}.") == 3


def test_a_thread_reads_a_quoted_post_once() -> None:
    posts = [
        f"<p>{LINE}, says the first post of the thread.</p>",
        f"<blockquote><p>{LINE}, says the first post of the thread.</p></blockquote>"
        "<p>Thanks, that is what I needed to know before I sign up for the next one.</p>",
    ]
    body = "".join(
        f"<div class='post'><div class='author'>user{n}</div><div class='cooked'>{post}"
        f"<p>More from user {n}: {LINE}, once more in other words {n}.</p></div></div>"
        for n, post in enumerate(posts)
    )
    page = (
        '<html><head><meta name="generator" content="Discourse 3.5.0"></head>'
        f"<body><main>{body}</main></body></html>"
    )
    markdown = render_html(page)
    assert count(markdown, f"{LINE}, says the first post of the thread.") == 1
    assert "what I needed to know" in markdown
