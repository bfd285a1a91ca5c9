"""What the browser fetch tests share: a site on 127.0.0.1 whose pages are written per test, a
canary that counts every connection it is offered, a ready engine, and a process count."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiohttp import web

from process_tree import descendants
from process_tree import name as process_name
from slow_marker import starts_a_process
from webreach.providers.fetch._browser_engine import BrowserEngine, BrowserLimits
from webreach.providers.fetch.browser import BrowserFetchProvider

__all__ = [
    "AS_ROOT",
    "CHROMIUM",
    "Canary",
    "Site",
    "browser_env",
    "browser_processes",
    "needs_browser",
    "provider_for",
    "shell",
    "wait_for",
]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_browser = starts_a_process(
    pytest.mark.skipif(
        CHROMIUM is None or importlib.util.find_spec("playwright") is None,
        reason="no browser here: the tests need Playwright (the browser extra) and Debian's "
        "chromium (.ci/run installs it)",
    )
)
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
"""Chromium's sandbox cannot start as root (CI runs as root): the tests then opt out of it."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Site:
    """An aiohttp site on 127.0.0.1; ``pages`` maps a path to a handler, ``hits`` counts them."""

    def __init__(self) -> None:
        self.pages: dict[str, Handler] = {}
        self.hits: Counter[str] = Counter()
        self.port = 0
        self._runner: web.AppRunner | None = None

    def html(self, path: str, body: str, status: int = 200) -> None:
        async def page(_request: web.Request) -> web.StreamResponse:
            return web.Response(text=body, status=status, content_type="text/html")

        self.pages[path] = page

    def text(self, path: str, body: str) -> None:
        async def page(_request: web.Request) -> web.StreamResponse:
            return web.Response(text=body)

        self.pages[path] = page

    def json(self, path: str, data: Any) -> None:
        async def answer(_request: web.Request) -> web.StreamResponse:
            return web.json_response(data)

        self.pages[path] = answer

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        self.hits[request.path] += 1
        handler = self.pages.get(request.path)
        if handler is None:
            return web.Response(status=404, text="no such page")
        return await handler(request)

    async def __aenter__(self) -> Site:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self._runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


class Canary:
    """A listener on 127.0.0.1 that must never be reached: it counts connections, and what it
    was sent (any request, any WebSocket handshake)."""

    def __init__(self) -> None:
        self.connections = 0
        self.port = 0
        self._server: asyncio.Server | None = None

    async def _accept(self, _reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        writer.close()

    async def __aenter__(self) -> Canary:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


RENDER_S = 60.0
"""A page's render time in tests that do not test the deadline: a safety net on a busy
machine (a page is taken as soon as it is quiet), not a measurement."""


def limits(**given: Any) -> BrowserLimits:
    return BrowserLimits(
        **{"executable": CHROMIUM, "no_sandbox": AS_ROOT, "timeout": RENDER_S, **given}
    )


@asynccontextmanager
async def provider_for(
    allow: str,
    *,
    mode: str = "always",
    browser: dict[str, Any] | None = None,
    **options: Any,
) -> AsyncIterator[BrowserFetchProvider]:
    """A ``browser`` (or ``auto``) provider on its own engine, closed on the way out."""
    options.setdefault("timeout", 2 * RENDER_S)
    engine = BrowserEngine(limits(**(browser or {})), allow=allow, **options)
    provider = BrowserFetchProvider(engine, mode=mode)  # type: ignore[arg-type]
    try:
        yield provider
    finally:
        await provider.aclose()


def browser_processes() -> list[int]:
    """This process's descendants that are a browser or Playwright's driver."""
    return [
        pid
        for pid in descendants()
        if "chrom" in (called := process_name(pid)).lower() or called == "node"
    ]


async def wait_for(condition: Callable[[], bool], what: str, within: float = 60.0) -> None:
    """Poll until ``condition`` holds; the bound is a safety net on a busy machine."""
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.05)


def shell() -> str:
    """An app shell: an empty mount node that its script fills from ``/api/log``."""
    return (
        "<!doctype html><title>Harbour log</title><div id='root'></div><script>"
        "fetch('/api/log').then(r => r.json()).then(d => {"
        "document.getElementById('root').innerHTML = '<article><h1>' + d.title +"
        " '</h1><p>' + d.body + '</p></article>'; });</script>"
    )


def browser_env(site: Site) -> dict[str, str]:
    """The settings that let a runtime built from them draw ``site``'s pages here."""
    env = {
        "WEBREACH_FETCH_ALLOW": f"127.0.0.1:{site.port}",
        "WEBREACH_BROWSER_EXECUTABLE": str(CHROMIUM),
        "WEBREACH_CACHE": "none",
        # Safety nets on a busy machine; a page is taken as soon as it is quiet.
        "WEBREACH_BROWSER_TIMEOUT": "60",
        "WEBREACH_FETCH_TIMEOUT": "120",
    }
    if AS_ROOT:
        env["WEBREACH_BROWSER_NO_SANDBOX"] = "true"
    return env
