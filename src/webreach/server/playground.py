"""The playground: one static page at ``/`` (and its script and style sheet) that talks to this
server's own endpoints from the browser, so a newcomer can try it without writing a client.

The files ship as package data and are read once; a strict Content-Security-Policy lets the
page load nothing but them and call nothing but this origin.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["PATHS", "routes"]

_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/playground/playground.js": ("playground.js", "text/javascript; charset=utf-8"),
    "/playground/playground.css": ("playground.css", "text/css; charset=utf-8"),
    "/playground/favicon.svg": ("favicon.svg", "image/svg+xml"),
}
PATHS = frozenset(_FILES)
"""Served without a key: the page holds nothing secret; the calls it makes need one."""

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@cache
def _body(name: str) -> bytes:
    return (files("webreach.server") / "playground_files" / name).read_bytes()


async def _serve(request: Request) -> Response:
    name, media_type = _FILES[request.url.path]
    return Response(_body(name), headers=_HEADERS, media_type=media_type)


def routes() -> list[Route]:
    return [Route(path, _serve, methods=["GET"]) for path in _FILES]
