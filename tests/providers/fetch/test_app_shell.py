"""The app-shell rule: which pages read over HTTP the ``auto`` provider draws in a browser.

It fires on shells of every kind ``bench/shells.py`` builds (loaded by path, as the bench uses
it) from the pages below, and on hand-written ones; it does not fire on ordinary pages of each
type, a forum that serves its thread in ``<noscript>``, or a page drawn on the server with its
``__NEXT_DATA__``; hostile input gets an answer, not an error.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

from repo_paths import ROOT
from webreach.providers.fetch.app_shell import MAX_PIECES, MIN_TEXT, MOUNT_TEXT, PIECE_TAGS
from webreach.providers.fetch.app_shell import app_shell as rule

SHELLS_PATH = ROOT / "bench" / "shells.py"


def _load_shells() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_shells", SHELLS_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


shells = _load_shells()

ANALYTICS = (
    '<script async src="https://www.googletagmanager.com/gtag/js?id=G-1"></script>'
    "<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments)}"
    " gtag('js', new Date()); gtag('config', 'G-1');</script>"
)
PARAGRAPHS = "".join(
    f"<p>{sentence} {sentence.lower()} The harbour master keeps the record for every boat.</p>"
    for sentence in (
        "Tides rise twice a day along most of the coast.",
        "A spring tide follows each new and full moon.",
        "Neap tides come when the moon is at its quarters.",
        "Onshore wind can hold the water up for hours.",
        "Charts give depths at the lowest astronomical tide.",
    )
)
NAV = "<nav><ul>" + "".join(f'<li><a href="/{n}">{n}</a></li>' for n in "abcdefgh") + "</ul></nav>"


def page(title: str, body: str, head: str = "") -> str:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f'<link rel="stylesheet" href="/site.css">{head}{ANALYTICS}</head>'
        f"<body>{body}</body></html>"
    )


ARTICLE = page(
    "Reading a tide table",
    f"<header>{NAV}</header><main><article><h1>Reading a tide table</h1>"
    f'<p class="byline">By Ann Smith</p>{PARAGRAPHS}</article></main>'
    '<footer><p>© 2026 Harbour News</p></footer><script src="/js/comments.js" defer></script>',
)
FORUM = page(
    "Which anchor for sand? - Sailing forum",
    NAV
    + "".join(
        f'<div class="post" id="p{n}"><div class="author">sailor{n}</div>'
        f'<div class="content"><p>Reply {n}: a plough anchor sets well in sand, and a longer'
        " chain rode helps it hold when the wind veers overnight.</p></div></div>"
        for n in range(8)
    )
    + '<script src="/forum.js"></script>',
)
DOCS = page(
    "tide.predict — tides 2.1 documentation",
    '<div class="sphinxsidebar"><ul><li><a href="/api">API</a></li></ul></div>'
    '<div class="body" role="main"><h1>tide.predict</h1><dl class="function"><dt>'
    "predict(constants, start, hours)</dt><dd><p>Return the predicted height of the water for"
    " each hour from start, computed from harmonic constants.</p></dd></dl>"
    f"{PARAGRAPHS}</div>",
    head='<script src="/_static/searchtools.js"></script>',
)
PRODUCT = page(
    "Galvanised plough anchor 10 kg",
    f'{NAV}<div class="page"><div class="product"><h1>Galvanised plough anchor 10 kg</h1>'
    f"<p class=price>€ 89.00</p><div class=description>{PARAGRAPHS}</div>"
    # A reviews widget mounts itself on an empty #app, deep in the content it joins.
    '<section class="reviews"><div id="app"></div></section></div></div>'
    '<script type="module" src="/reviews.js"></script>',
)
LISTING = page(
    "Anchors — Chandlery",
    "<ul class=products>"
    + "".join(
        f'<li><a href="/p/{n}">Plough anchor {n} kg</a> <span>€ {40 + n}.00</span>'
        " <span>In stock, ships in two days</span></li>"
        for n in range(2, 30)
    )
    + '</ul><script src="/cart.js"></script>',
)
# Discourse serves the whole thread inside <noscript> to browsers, its app's mount empty.
NOSCRIPT_FORUM = page(
    "Best first telescope? - Astronomy",
    '<section id="main"><div id="main-outlet"></div></section>'
    '<noscript data-path="/t/best-first-telescope/1555"><div id="topic-title"><h1>Best first'
    " telescope?</h1></div>"
    + "".join(
        f'<div class="topic-body crawler-post"><span class="creator">user{n}</span>'
        f'<div class="post"><p>Post {n}: a small refractor on a steady mount shows the moon'
        " and the planets well, and it cools down faster than a reflector.</p></div></div>"
        for n in range(6)
    )
    + "</noscript>"
    + "".join(f'<script defer src="/assets/chunk-{n}.js"></script>' for n in range(30)),
)
NEXT_SSR = page(
    "Tides | Next.js blog",
    f'<div id="__next"><main><h1>Tides</h1>{PARAGRAPHS}</main></div>'
    '<script id="__NEXT_DATA__" type="application/json">{"props":{"pageProps":{"slug":"tides"'
    '}},"page":"/[slug]","buildId":"b1"}</script>'
    '<script src="/_next/static/chunks/main.js" defer></script>',
)
ORDINARY = {
    "article": ARTICLE,
    "forum": FORUM,
    "docs": DOCS,
    "product": PRODUCT,
    "listing": LISTING,
    "noscript forum": NOSCRIPT_FORUM,
    "Next.js drawn on the server": NEXT_SSR,
}


@pytest.mark.parametrize("name", ORDINARY)
def test_an_ordinary_page_is_no_shell(name: str) -> None:
    assert rule(ORDINARY[name], "https://example.com/page") is None


@pytest.mark.parametrize("kind", shells.KINDS)
@pytest.mark.parametrize("name", ["article", "forum", "docs", "product"])
def test_every_shell_built_from_a_page_fires(kind: str, name: str) -> None:
    files = shells.build_shell(kind, ORDINARY[name], f"/{kind}/{name}/")
    html = files[f"/{kind}/{name}/"][1].decode()
    reason = rule(html, f"http://127.0.0.1/{kind}/{name}/")
    assert reason is not None and reason.startswith("app shell: ")
    # The shell holds the page's content (as data or code), yet none of it is readable text.
    phrase = "chain rode helps it hold" if name == "forum" else "harbour master keeps the record"
    assert phrase in b"".join(body for _, body in files.values()).decode()


def test_a_shell_names_its_empty_mount_when_furniture_surrounds_it() -> None:
    files = shells.build_shell("json", ARTICLE, "/json/article/")
    reason = rule(files["/json/article/"][1].decode())
    assert reason is not None and reason.startswith("app shell: empty #root, ")


@pytest.mark.parametrize("name", shells.MINIMAL)
def test_hand_written_shells_fire(name: str) -> None:
    files = shells.MINIMAL[name]
    html = next(iter(files.values()))[1].decode()
    reason = rule(html)
    assert reason is not None and "readable characters" in reason and "script" in reason


def test_the_reason_counts_characters_and_scripts() -> None:
    html = '<html><body><div id="root">Loading</div><script src="a.js"></script></body></html>'
    assert rule(html) == "app shell: 7 readable characters, 1 script"
    two = html.replace("</body>", '<script type="module">go()</script></body>')
    assert rule(two) == "app shell: 7 readable characters, 2 scripts"


def test_an_empty_mount_counts_at_the_top_of_the_body_only() -> None:
    """An app mounts at the top of the body; a widget's empty mount sits deep in its page."""
    top = PRODUCT.replace('<section class="reviews"><div id="app"></div></section>', "")
    top = top.replace("<body>", '<body><div class="layout"><main><div id="app"></div></main></div>')
    assert rule(top) == "app shell: empty #app, 647 readable characters, 3 scripts"
    assert rule(PRODUCT) is None


def test_a_page_without_scripts_is_never_a_shell() -> None:
    """A browser would draw nothing the HTML does not already hold."""
    assert rule('<html><body><div id="root"></div></body></html>') is None
    data_only = (
        '<div id="root"></div><script type="application/json">{"a": 1}</script>'
        '<script type="application/ld+json">{}</script><script></script>'
    )
    assert rule(data_only) is None
    assert rule(data_only + '<script src="app.js"></script>') is not None


def test_the_thresholds_are_where_they_say() -> None:
    def shell(text: str, mount: str = "") -> str:
        return f"<body><p>{text}</p>{mount}<script src=app.js></script></body>"

    assert rule(shell("x" * (MIN_TEXT - 1))) is not None
    assert rule(shell("x" * MIN_TEXT)) is None
    assert rule(shell("x" * (MOUNT_TEXT - 1), '<div id="app"></div>')) is not None
    assert rule(shell("x" * MOUNT_TEXT, '<div id="app"></div>')) is None
    assert rule(shell("x" * 500, '<div id="app"><p>' + "y" * 100 + "</p></div>")) is None


def test_noscript_text_counts_only_when_it_is_content() -> None:
    """A "please enable JavaScript" notice is no content; a thread in <noscript> is."""
    notice = "<noscript>You need to enable JavaScript to run this app.</noscript>"
    assert rule(f'{notice}<div id="root"></div><script src=a.js></script>') is not None
    assert (
        rule(NOSCRIPT_FORUM.replace("<noscript", "<div").replace("</noscript>", "</div>")) is None
    )


def test_text_in_scripts_styles_and_templates_is_not_readable() -> None:
    hidden = "word " * 1000
    html = (
        f"<head><style>/* {hidden} */</style></head><body><template><p>{hidden}</p></template>"
        f"<svg><title>{hidden}</title></svg><script>var s = '{hidden}';</script></body>"
    )
    assert rule(html) == "app shell: 0 readable characters, 1 script"


def test_a_frameset_is_left_to_http() -> None:
    html = '<frameset cols="50%,50%"><frame src="a.html"><frame src="b.html"></frameset>'
    assert rule(html + "<script src=a.js></script>") is None


@pytest.mark.parametrize(
    "html",
    [
        "",
        "   ",
        "<",
        "<<<<>>>>&&&;;",
        "\x00\x01\ufffd\udcff binary \x7f",
        "<script",
        "<script>unterminated",
        "<html><body><div><p><span>",
        "</div></body></html></html>",
        "<!-- never closed <script>x</script>",
        "<title>never closed <script>x</script>",
        '<div id="root" <script src=a.js>',
        "<svg><script>1</script><foreignObject><p>x</p>",
        "<table><tr><td>" * 300,
    ],
)
def test_garbage_gets_an_answer(html: str) -> None:
    reason = rule(html, "not a url at all")
    assert reason is None or reason.startswith("app shell: ")


def test_deep_nesting_is_read_in_bounded_pieces() -> None:
    """lexbor's tree building is quadratic in depth: 200,000 nested <div> must not reach it
    in one piece. The rule reads at most MAX_PIECES pieces, so text past them is never seen."""
    deep = "<div>" * 200_000 + "<p>" + "deep words " * 100 + "</p><script src=a.js></script>"
    assert rule(deep) is None  # its script lies past the pieces read: no script seen
    shell_first = '<div id="root"></div><script src=a.js></script>' + "<div>" * 200_000
    assert rule(shell_first) is not None
    late_text = "<script src=a.js></script>" + "<b></b>" * (PIECE_TAGS * MAX_PIECES)
    assert rule(late_text + "<p>" + "words " * 1000 + "</p>") is not None


def test_a_huge_page_is_read_until_it_shows_its_text() -> None:
    big = "<body><script src=a.js></script>" + "<p>plenty of readable words here</p>" * 60_000
    assert len(big) > 2_000_000
    assert rule(big) is None
    bundle = "<script>" + "if (a < b) { render('<li>' + b + '</li>'); }\n" * 40_000 + "</script>"
    assert rule(f'<body><div id="root"></div>{bundle}</body>') is not None


def test_a_cut_inside_a_script_or_title_reads_no_code_as_text() -> None:
    """Pieces are cut every PIECE_TAGS "<"; one cut inside a script's code (full of "<")
    resumes after its end tag, and a title that never closes hides the rest, as in a browser."""
    code = "for (let i = 0; i < n; i++) { html += '<p>' + items[i] + '</p>'; }\r\n"
    script = "<script>" + code * (3 * PIECE_TAGS) + "</script>"
    nav = "<ul>" + '<li><a href="/x">x</a></li>' * (PIECE_TAGS // 2) + "</ul>"
    assert rule(f'<body>{nav}<div id="app"></div>{script}</body>') is not None
    assert rule(f"<body>{nav}{script}<p>{'text ' * 1000}</p></body>") is None
    swallowed = "<title>" + "<p>x</p>" * (2 * PIECE_TAGS) + "<script src=a.js></script>"
    assert rule(swallowed) is None
