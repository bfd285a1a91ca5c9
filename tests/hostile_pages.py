"""Hostile pages for the renderer: absurd nesting and sheer width.

Shared by tests/tools/render/test_render_hostile*.py and bench/hostile.py (``sys.path`` the
tests folder).
"""

from __future__ import annotations

TEXT = "The deepest words on the page."


def nested(open_tags: str, close_tags: str, depth: int, text: str = TEXT) -> str:
    """A page whose body is `open_tags` nested `depth` times around `text`."""
    return f"<html><body>{open_tags * depth}{text}{close_tags * depth}</body></html>"


def nested_divs(depth: int, text: str = TEXT) -> str:
    """`depth` nested `<div>`s: 2,000 is 22 KB, 40,000 is 430 KB."""
    return nested("<div>", "</div>", depth, text)


def nested_spans(depth: int, text: str = TEXT) -> str:
    return nested("<span>", "</span>", depth, text)


def nested_lists(depth: int, text: str = TEXT) -> str:
    """`depth` lists, each the only item of the one around it (two elements per level)."""
    return nested("<ul><li>", "</li></ul>", depth, text)


def nested_quotes(depth: int, text: str = TEXT) -> str:
    return nested("<blockquote>", "</blockquote>", depth, text)


def nested_tables(depth: int, text: str = TEXT) -> str:
    return nested("<table><tr><td>", "</td></tr></table>", depth, text)


def unclosed_divs(depth: int, text: str = TEXT) -> str:
    """`depth` `<div>`s never closed, each after a stray end tag that closes nothing."""
    return f"<html><body>{'<div></i>' * depth}{text}</body></html>"


def wide_page(paragraphs: int) -> str:
    """A flat page of many short linked paragraphs: 50,000 are 4.4 MB."""
    body = "".join(
        f"<p>Paragraph {n}, with some commas, and a <a href='/p{n}'>link</a> in it.</p>"
        for n in range(paragraphs)
    )
    return f"<html><body>{body}</body></html>"


HOSTILE = {
    "divs-2k": nested_divs(2_000),
    "divs-20k": nested_divs(20_000),
    "divs-40k": nested_divs(40_000),
    "spans-20k": nested_spans(20_000),
    "lists-20k": nested_lists(20_000),
    "quotes-20k": nested_quotes(20_000),
    "tables-2k": nested_tables(2_000),
    "unclosed-20k": unclosed_divs(20_000),
}
"""Every hostile page by name; each holds `TEXT` once, at its deepest."""
