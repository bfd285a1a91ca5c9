"""One page rendered in a context of its own: the fetched document in, the final DOM out.

The document the HTTP fetcher read (and vetted) is handed to the browser as the answer to its
first navigation, so the page runs at its real origin without a second fetch. Everything else it
asks for goes through the fetch's guard proxy. The context lives for this one page: cookies,
storage and caches go with it, and it is closed whatever happens.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Request, Route

__all__ = ["MAX_FRAMES", "ContextStuck", "NotDrawn", "Rendered", "render_page"]

MAX_FRAMES = 50
"""Frame documents one page may load; past it a frame's navigation is aborted."""
_POLL_S = 0.1
_QUIET_WITH_TEXT_S = 0.5
_QUIET_WITHOUT_TEXT_S = 1.5
_READABLE_CHARS = 200
_CONTENT_GRACE_S = 1.0
_CLOSE_S = 5.0

# What every frame runs first: when the DOM last changed and how much text it shows, and no
# WebRTC (its UDP would not pass the proxy, but nothing should try).
_INIT_SCRIPT = """
(() => {
  let last = performance.now();
  const watch = () => new MutationObserver(() => { last = performance.now(); })
    .observe(document, {subtree: true, childList: true, characterData: true});
  try { watch(); } catch (e) {}
  for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel",
                      "RTCSessionDescription", "RTCIceCandidate"]) {
    try { delete window[name]; } catch (e) {}
  }
  Object.defineProperty(window, "__webreachSettle", {
    value: () => [performance.now() - last, document.readyState,
                  document.body ? document.body.innerText.length : 0],
  });
})();
"""


@dataclass(frozen=True, slots=True)
class Rendered:
    html: str
    url: str
    settled: bool
    """False when the deadline came before the page was quiet: the DOM as it was then."""


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port


class _Requests:
    """The page's requests: the first navigation answered with the fetched document, other
    origins' top-level navigations and frames past :data:`MAX_FRAMES` refused, the rest sent on
    (through the context's proxy)."""

    def __init__(self, url: str, status: int, html: str) -> None:
        self.url = url
        self.status = status
        self.html = html
        self.served = False
        self.frames = 0
        self.in_flight = 0
        self.page: Page | None = None

    async def route(self, route: Route, request: Request) -> None:
        """Decide one request; a handler that failed would fail the whole render, so a request
        it cannot judge is refused instead."""
        try:
            await self._decide(route, request)
        except Exception:
            with contextlib.suppress(Exception):
                await route.abort("blockedbyclient")

    async def _decide(self, route: Route, request: Request) -> None:
        url = request.url
        navigation = request.is_navigation_request()
        if not url.startswith(("http://", "https://")):
            await (_stay(route) if navigation else route.abort("blockedbyclient"))
            return
        try:
            frame = request.frame
        except Exception:
            # A pop-up's first navigation comes before its frame exists: it never loads.
            await _stay(route)
            return
        main = navigation and self.page is not None and frame == self.page.main_frame
        if main and not self.served and url == self.url:
            self.served = True
            await route.fulfill(
                status=self.status, content_type="text/html; charset=utf-8", body=self.html
            )
            return
        if main and _origin(url) != _origin(self.url):
            await _stay(route)
            return
        if navigation and not main:
            self.frames += 1
            if self.frames > MAX_FRAMES:
                await _stay(route)
                return
        await route.continue_()

    def started(self, _request: Request) -> None:
        self.in_flight += 1

    def ended(self, _request: Request) -> None:
        self.in_flight = max(0, self.in_flight - 1)


async def _stay(route: Route) -> None:
    """Refuse a navigation so that the frame stays where it is: a 204 answer leaves the current
    document in place, where an aborted one would put the browser's error page there."""
    await route.fulfill(status=204, body="")


async def render_page(
    browser: Browser,
    proxy_url: str,
    url: str,
    status: int,
    html: str,
    deadline: float,
    *,
    user_agent: str | None = None,
) -> Rendered:
    """``html`` (fetched from ``url`` with ``status``) as the browser leaves it once quiet, or at
    ``deadline`` (a ``time.monotonic()`` instant); raises ``TimeoutError`` when even the DOM
    cannot be read by then, and Playwright's ``Error`` when the page crashes. ``user_agent``,
    the operator's product name, replaces the browser's own in the page's requests."""
    context = await browser.new_context(
        user_agent=user_agent,
        proxy={"server": proxy_url, "bypass": "<-loopback>"},
        accept_downloads=False,
        service_workers="block",
        permissions=[],
        java_script_enabled=True,
    )
    try:
        return await _in(context, url, status, html, deadline)
    finally:
        await _close(context)


async def _in(
    context: BrowserContext, url: str, status: int, html: str, deadline: float
) -> Rendered:
    requests = _Requests(url, status, html)
    await context.add_init_script(_INIT_SCRIPT)
    await context.route(lambda _url: True, requests.route)
    context.on("page", _close_popup)
    page = await context.new_page()
    requests.page = page
    page.on("request", requests.started)
    page.on("requestfinished", requests.ended)
    page.on("requestfailed", requests.ended)
    async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
        await page.goto(url, wait_until="commit")
        settled = await _settle(page, requests, deadline - _CONTENT_GRACE_S)
        content = await page.content()
    if not page.url.startswith(("http://", "https://")):
        raise NotDrawn(f"the page ended on {page.url.split(':')[0]}:, not on the web")
    return Rendered(content, page.url if _origin(page.url) == _origin(url) else url, settled)


async def _settle(page: Page, requests: _Requests, until: float) -> bool:
    """Wait until nothing is loading and the DOM has been still for a while (shorter once the
    page shows readable text); False when ``until`` came first."""
    while time.monotonic() < until:
        quiet_ms, state, chars = await page.evaluate("() => window.__webreachSettle()")
        needed = _QUIET_WITH_TEXT_S if chars >= _READABLE_CHARS else _QUIET_WITHOUT_TEXT_S
        if state != "loading" and requests.in_flight == 0 and quiet_ms >= needed * 1000:
            return True
        await asyncio.sleep(_POLL_S)
    return False


async def _close_popup(page: Page) -> None:
    """A page opened by the page (``window.open``) is closed at once: one fetch, one page."""
    if await page.opener() is not None:
        with contextlib.suppress(Exception):
            await page.close()


async def _close(context: BrowserContext) -> None:
    """Close the context within a bound; one that will not close is the engine's to end."""
    try:
        async with asyncio.timeout(_CLOSE_S):
            await context.close()
    except TimeoutError:
        raise ContextStuck("the browser did not close a page's context") from None


class NotDrawn(RuntimeError):
    """The page left nothing to read (it ended on the browser's error page, say)."""


class ContextStuck(RuntimeError):
    """A context would not close: the browser is ended and started again on next use."""
