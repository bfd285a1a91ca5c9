"""App-shell versions of real pages: the same content, drawn by script in the browser.

``build_shell(kind, page_html, path)`` turns a page (a corpus page's ``source.html``) into a
shell whose body is empty until its script draws the page's own content, in one of four ways:

* ``json``: React-like (an empty ``#root`` under a header and footer drawn on the server); a
  module script fetches ``data.json`` beside the page and draws it;
* ``inline``: Vue-like (``<div id="app" data-v-app>``); the content is a JavaScript string in an
  inline script;
* ``timer``: Next.js-like, drawn in the browser (an empty ``#__next``); the content is in
  ``__NEXT_DATA__`` and drawn 1 s after load;
* ``route``: Angular-like (``<app-root>``); the script moves to the route ``view`` with
  ``history.pushState``, fetches ``data.json`` and draws what the route names.

A shell is a set of files, ``{path: (content type, body)}``, for a local page server to serve;
``MINIMAL`` adds hand-written shells (``<div id="root"></div><script src=app.js>`` and kin).
The content keeps the page's body without its scripts, styles, frames and media, so that what
a browser draws is the text the page holds; its title stays in the head. Used by
``bench/fetch_browser.py``, ``bench/search_substance.py`` and
``tests/providers/fetch/test_app_shell.py`` (which loads this file by path); it reads nothing
from disk itself.
"""

from __future__ import annotations

import json
from typing import Final, Literal

from selectolax.lexbor import LexborHTMLParser

Kind = Literal["json", "inline", "timer", "route"]
KINDS: Final[tuple[Kind, ...]] = ("json", "inline", "timer", "route")
Files = dict[str, tuple[str, bytes]]

HTML: Final = "text/html; charset=utf-8"
JS: Final = "text/javascript; charset=utf-8"
JSON: Final = "application/json"
_DROPPED: Final = [
    "script", "noscript", "style", "link", "iframe", "frame", "object", "embed", "img",
    "picture", "video", "audio", "source", "svg", "canvas",
]  # fmt: skip

# What a shop or app shows around its mount node, drawn on the server: about 600 characters.
_HEADER: Final = (
    '<header class="site-header"><a class="logo" href="/">Northwind</a><nav><ul>'
    + "".join(
        f'<li><a href="/{slug.lower().replace(" ", "-")}">{slug}</a></li>'
        for slug in (
            "Home", "Products", "Solutions", "Pricing", "Customers", "Resources", "Blog",
            "Careers", "Contact sales", "Sign in", "Start free trial",
        )
    )
    + "</ul></nav></header>"
)  # fmt: skip
_FOOTER: Final = (
    '<footer class="site-footer"><p>© 2026 Northwind Traders, Inc. All rights reserved.</p>'
    '<ul><li><a href="/privacy">Privacy policy</a></li><li><a href="/terms">Terms of service'
    '</a></li><li><a href="/cookies">Cookie settings</a></li><li><a href="/status">System '
    'status</a></li><li><a href="/security">Security</a></li></ul></footer>'
)


def page_parts(html: str) -> tuple[str, str]:
    """The page's title and its body's markup without scripts, styles, frames or media."""
    tree = LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = " ".join((title_node.text() if title_node is not None else "").split())
    tree.strip_tags(_DROPPED)
    body = tree.body
    return title, (body.inner_html or "") if body is not None else ""


def _script_json(value: object) -> str:
    """`value` as JSON that can sit inside a ``<script>`` element (no ``</script>`` in it)."""
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _document(title: str, head: str, body: str) -> bytes:
    escaped = title.replace("&", "&amp;").replace("<", "&lt;")
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escaped}</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">{head}</head>'
        f"<body>{body}</body></html>"
    ).encode()


def build_shell(kind: Kind, page_html: str, path: str) -> Files:
    """The files of `page_html`'s shell of `kind`, the page at `path` (ending in ``/``)."""
    title, content = page_parts(page_html)
    data = json.dumps({"title": title, "html": content}, ensure_ascii=False).encode()
    if kind == "json":
        app = (
            "const root = document.getElementById('root');\n"
            "const response = await fetch(new URL('data.json', document.baseURI));\n"
            "const page = await response.json();\n"
            "root.innerHTML = page.html;\n"
        )
        return {
            path: (
                HTML,
                _document(
                    title,
                    '<script type="module" crossorigin src="assets/index-4f2a9c.js"></script>',
                    f'{_HEADER}<div id="root"></div>{_FOOTER}'
                    "<noscript>You need to enable JavaScript to run this app.</noscript>",
                ),
            ),
            f"{path}assets/index-4f2a9c.js": (JS, app.encode()),
            f"{path}data.json": (JSON, data),
        }
    if kind == "inline":
        script = (
            f"const page = {_script_json({'html': content})};\n"
            "document.getElementById('app').innerHTML = page.html;\n"
        )
        body = f'<div id="app" data-v-app></div><script>{script}</script>'
        return {path: (HTML, _document(title, "", body))}
    if kind == "timer":
        next_data = _script_json({"props": {"pageProps": {"html": content}}, "page": "/[slug]"})
        script = (
            "setTimeout(() => {\n"
            "  const data = JSON.parse(document.getElementById('__NEXT_DATA__').textContent);\n"
            "  document.getElementById('__next').innerHTML = data.props.pageProps.html;\n"
            "}, 1000);\n"
        )
        body = (
            '<div id="__next"></div>'
            f'<script id="__NEXT_DATA__" type="application/json">{next_data}</script>'
            f"<script>{script}</script>"
        )
        return {path: (HTML, _document(title, "", body))}
    script = (
        "const root = document.querySelector('app-root');\n"
        "async function draw() {\n"
        "  if (!location.pathname.endsWith('/view')) { root.textContent = ''; return; }\n"
        "  const response = await fetch(new URL('data.json', location.href));\n"
        "  root.innerHTML = (await response.json()).html;\n"
        "}\n"
        "window.addEventListener('popstate', draw);\n"
        "history.pushState({}, '', new URL('view', location.href));\n"
        "draw();\n"
    )
    body = f'<app-root ng-version="17.3.0"></app-root><script type="module">{script}</script>'
    return {
        path: (HTML, _document(title, '<base href="/">', body)),
        f"{path}data.json": (JSON, data),
    }


DRAWN: Final = (
    "<h1>Tide tables for small harbours</h1>"
    "<p>Every small harbour keeps its own tide table, because the shape of the coast bends the"
    " rise and fall of the sea in ways that a regional forecast cannot follow.</p>"
    "<p>Harbour masters publish the times of high and low water a year ahead, and skippers read"
    " them together with the weather, since a strong onshore wind can hold the water up for"
    " hours after the table says it should have gone.</p>"
    "<p>The tables are computed from harmonic constants measured over many years of records.</p>"
)
"""What every hand-written shell draws."""


def _draws(selector: str) -> bytes:
    return (
        f"document.querySelector({json.dumps(selector)}).innerHTML = {_script_json(DRAWN)};\n"
    ).encode()


MINIMAL: Final[dict[str, Files]] = {
    # <div id="root"></div><script src=app.js>, as create-react-app and Vite leave it.
    "react": {
        "/minimal/react/": (
            HTML,
            _document(
                "React App",
                "",
                "<noscript>You need to enable JavaScript to run this app.</noscript>"
                '<div id="root"></div><script src="app.js"></script>',
            ),
        ),
        "/minimal/react/app.js": (JS, _draws("#root")),
    },
    "vue": {
        "/minimal/vue/": (
            HTML,
            _document(
                "Vite App",
                '<script type="module" crossorigin src="/minimal/vue/assets/index.js"></script>',
                "<noscript><strong>We're sorry but this app doesn't work properly without"
                " JavaScript enabled. Please enable it to continue.</strong></noscript>"
                '<div id="app"></div>',
            ),
        ),
        "/minimal/vue/assets/index.js": (JS, _draws("#app")),
    },
    "angular": {
        "/minimal/angular/": (
            HTML,
            _document(
                "Tides",
                '<base href="/minimal/angular/">',
                '<app-root></app-root><script src="runtime.js" type="module"></script>'
                '<script src="main.js" type="module"></script>',
            ),
        ),
        "/minimal/angular/runtime.js": (JS, b"window.ngRuntime = true;\n"),
        "/minimal/angular/main.js": (JS, _draws("app-root")),
    },
    "loading": {
        "/minimal/loading/": (
            HTML,
            _document(
                "Loading…",
                "",
                '<div id="app"><div class="spinner" role="status">Loading…</div></div>'
                f"<script>setTimeout(() => {{ {_draws('#app').decode()} }}, 300);</script>",
            ),
        ),
    },
}
"""Hand-written shells, by name: each file set's first path is its page."""
