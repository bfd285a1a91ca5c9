"""What the ``browser`` and ``auto`` providers of one runtime share: the HTTP fetcher that reads
every page first, one browser (started on first use, closed with the runtime), and the page
slots that bound how many render at once.

A render that fails in any way (the deadline, a crash, a context that will not close, a browser
that cannot start) gives the page as HTTP read it, saying why; a browser that misbehaved is
ended and started again on next use.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import socket
import ssl
import time
from typing import TYPE_CHECKING

from ...net.allow import AllowList
from ...seam import FetchResult, HtmlBody
from ._browser_launch import BrowserSource, find_browser, launch, refusing_port
from .http import HttpFetchProvider, chars_limit

if TYPE_CHECKING:
    import httpcore2
    from playwright.async_api import Browser, Playwright

    from ...net.pinning import PinningBackend, Resolver
    from ._browser_page import Rendered

__all__ = ["HANDED_BACK", "BrowserEngine", "BrowserLimits"]

logger = logging.getLogger("webreach.browser")
HANDED_BACK = "left to the process that asked, which draws it"
"""What a page's reason says when an engine that does not draw was asked to."""
_CLOSE_S = 10.0
_MIN_RENDER_S = 1.0
"""Less time than this left, and the page is not rendered."""
_RETRY_START_S = 60.0
"""A browser that failed to start is not tried again for this long: each try costs seconds."""


@dataclasses.dataclass(frozen=True, slots=True)
class BrowserLimits:
    """Where the browser comes from and what one page may take."""

    cdp_url: str | None = None
    executable: str | None = None
    timeout: float = 10.0
    max_pages: int = 4
    max_bytes: int = 20 * 1024 * 1024
    no_sandbox: bool = False


class BrowserEngine:
    """One HTTP fetcher and one browser for every page a runtime renders."""

    def __init__(
        self,
        limits: BrowserLimits,
        *,
        timeout: float = 30.0,
        max_bytes: int = 10 * 1024 * 1024,
        max_chars: int = 2_000_000,
        allow: str | AllowList = "",
        resolver: Resolver | None = None,
        dialer: httpcore2.AsyncNetworkBackend | None = None,
        verify: ssl.SSLContext | bool = True,
        provisional: bool = False,
        user_agent: str | None = None,
        proxy: str | None = None,
        draws: bool = True,
    ) -> None:
        """``provisional`` limits (read from the environment for ``auto``) give way once to the
        ``browser`` provider's (:meth:`adopt`). Without ``draws`` no browser is started: a page
        to draw comes back as served, its reason saying it is handed back (:data:`HANDED_BACK`)."""
        self.limits = limits
        self.draws = draws
        self.timeout = timeout
        self._max_chars = max_chars
        self._allow = allow if isinstance(allow, AllowList) else AllowList.parse(allow)
        self.http = HttpFetchProvider(
            timeout=timeout,
            max_bytes=max_bytes,
            max_chars=max_chars,
            allow=self._allow,
            resolver=resolver,
            dialer=dialer,
            verify=verify,
            user_agent=user_agent,
            proxy=proxy,
        )
        self.user_agent = user_agent
        """The operator's product name (``WEBREACH_FETCH_USER_AGENT``), the browser's too."""
        self._dialing = (resolver, dialer)
        self._backend: PinningBackend | None = None
        """What the guard proxy of a rendered page resolves and connects with, made with the
        first page rendered."""
        self._source: BrowserSource | None = None
        self._found: str | None = None
        self._slots = asyncio.Semaphore(limits.max_pages)
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._starting: asyncio.Task[Browser] | None = None
        self._dead_end: socket.socket | None = None
        self._closed = False
        self._provisional = provisional
        self._holders = 0
        self._retry_start_at = 0.0

    def adopt(self, limits: BrowserLimits) -> bool:
        """Take ``limits`` when this engine's were provisional and nothing has started, or when
        they are its own already; False when another engine must hold them."""
        if limits == self.limits:
            self._provisional = False
            return True
        if self._starting is not None or not self._provisional:
            return False
        self.limits, self._provisional = limits, False
        self._found = self._source = None
        self._slots = asyncio.Semaphore(limits.max_pages)
        return True

    def _find(self) -> BrowserSource | None:
        if self._found is None:
            limits = self.limits
            self._source, self._found = find_browser(
                limits.cdp_url, limits.executable, no_sandbox=limits.no_sandbox
            )
        return self._source

    def available(self) -> bool:
        return self._find() is not None

    def unavailable_reason(self) -> str | None:
        """One line saying why no browser can be used, or None when one can."""
        return None if self._find() is not None else self._found

    def scope(self) -> str:
        """What, beside the HTTP fetcher's policy, decides what a page may hold: whether a
        browser can draw it at all (so a shell read before one was installed is not served after)
        and its byte budget."""
        drawn = ("drawn" if self.available() else "served") if self.draws else "handed back"
        return f"{self.http.cache_scope()}|browser:{drawn}:{self.limits.max_bytes}"

    async def render(self, result: FetchResult, reason: str, deadline: float) -> FetchResult:
        """``result``'s HTML as the browser leaves it; the HTTP result, saying why, when the
        browser cannot draw it.

        The page has ``WEBREACH_BROWSER_TIMEOUT`` from when a page slot is free and the browser
        is up, and never past ``deadline`` (the fetch's own, a ``time.monotonic()`` instant):
        a browser's first start, or a queue of pages, does not eat one page's time."""
        assert isinstance(result.body, HtmlBody)
        if not self.draws:
            return _as_served(result, f"{reason}; {HANDED_BACK}")
        source = self._find()
        if source is None:
            return _as_served(result, f"{reason}; not rendered: {self._found}")
        from playwright.async_api import Error as PlaywrightError

        from ...net.pinning import PinningBackend
        from ._browser_page import ContextStuck, NotDrawn, render_page
        from ._guard_proxy import GuardProxy

        if time.monotonic() < self._retry_start_at:
            return _as_served(result, f"{reason}; the browser could not start")
        async with self._slots:
            browser = await self._started(source)
            if browser is None:
                return _as_served(result, f"{reason}; the browser could not start")
            until = min(time.monotonic() + self.limits.timeout, deadline)
            if until - time.monotonic() < _MIN_RENDER_S:
                return _as_served(result, f"{reason}; no time left to render")
            if self._backend is None:
                resolver, dialer = self._dialing
                self._backend = PinningBackend(self._allow, resolver=resolver, inner=dialer)
            proxy = GuardProxy(self._backend, self._allow, self.limits.max_bytes)
            await proxy.start()
            try:
                rendered = await render_page(
                    browser,
                    proxy.url,
                    result.url,
                    result.status_code,
                    result.body.content,
                    until,
                    user_agent=self.user_agent,
                )
            except TimeoutError:
                return _as_served(result, f"{reason}; the page did not render in time")
            except NotDrawn as error:
                return _as_served(result, f"{reason}; {error}")
            except ContextStuck:
                await self._end_browser()
                return _as_served(result, f"{reason}; the browser stopped answering")
            except PlaywrightError as error:
                logger.debug("browser: %s: %s", result.url, _line(error))
                return _as_served(result, f"{reason}; the browser failed ({_line(error)})")
            finally:
                await proxy.aclose()
        if proxy.refused:
            logger.debug("browser: %s: refused %s", result.url, "; ".join(proxy.refused[:5]))
        return self._drawn(result, rendered, proxy.over_budget, reason)

    async def _started(self, source: BrowserSource) -> Browser | None:
        """The browser, up; ``None`` when it could not start, and no new start is tried for a
        while (each page that wants it would wait on another failing start)."""
        try:
            return await self._ready(source)
        except Exception as error:
            self._retry_start_at = time.monotonic() + _RETRY_START_S
            logger.warning(
                "browser: could not start %s: %s; trying again in %g s on a page that needs it",
                self._found,
                _line(error),
                _RETRY_START_S,
            )
            return None

    def _drawn(
        self, result: FetchResult, rendered: Rendered, over_budget: bool, reason: str
    ) -> FetchResult:
        """The drawn page as the fetch's result, cut to the character cap, its notes saying
        whether it settled and which limit cut it."""
        html = rendered.html
        cut = len(html) > self._max_chars
        notes = [reason]
        if not rendered.settled:
            notes.append("drawn as it was at the deadline")
        if over_budget:
            notes.append(f"the page's byte budget ({self.limits.max_bytes} bytes) was spent")
        by = result.truncated_by
        if cut:
            by = chars_limit(self._max_chars)
        elif over_budget:
            spent = self.limits.max_bytes
            by = f"{spent:,} bytes a drawn page may pull in (WEBREACH_BROWSER_MAX_BYTES)"
        return FetchResult(
            url=rendered.url,
            status_code=result.status_code,
            body=HtmlBody(html[: self._max_chars]),
            truncated=result.truncated or cut or over_budget,
            truncated_by=by,
            rendered_by="browser",
            render_reason="; ".join(notes),
        )

    async def _ready(self, source: BrowserSource) -> Browser:
        """The browser, started once by a task of its own, so a caller that gives up halfway
        leaves no half-started process."""
        if self._closed:
            raise RuntimeError("the browser engine is closed")
        browser = self._browser
        if browser is not None and browser.is_connected():
            return browser
        if self._starting is None or self._starting.done():
            self._starting = asyncio.create_task(self._start(source))
        return await asyncio.shield(self._starting)

    async def _start(self, source: BrowserSource) -> Browser:
        from playwright.async_api import async_playwright

        await self._end_browser()
        if self._playwright is None:
            self._playwright = await async_playwright().start()
        if self._dead_end is None:
            self._dead_end = refusing_port()
        started = time.monotonic()
        browser = await launch(
            self._playwright,
            source,
            no_sandbox=self.limits.no_sandbox,
            dead_end=self._dead_end.getsockname()[1],
        )
        logger.debug("browser: started %s in %.1f s", self._found, time.monotonic() - started)
        self._browser = browser
        return browser

    async def _end_browser(self) -> None:
        browser, self._browser = self._browser, None
        if browser is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(_CLOSE_S):
                    await browser.close()

    def hold(self) -> None:
        """One more provider uses this engine."""
        self._holders += 1

    async def release(self) -> None:
        """One provider is done with it; the last one closes it."""
        self._holders -= 1
        if self._holders <= 0:
            await self.aclose()

    async def aclose(self) -> None:
        """End the browser and its driver, and close the HTTP fetcher."""
        self._closed = True
        starting, self._starting = self._starting, None
        if starting is not None:
            starting.cancel()
            await asyncio.wait([starting])
            if not starting.cancelled():
                starting.exception()
        await self._end_browser()
        playwright, self._playwright = self._playwright, None
        if playwright is not None:
            with contextlib.suppress(Exception):
                await playwright.stop()
        dead_end, self._dead_end = self._dead_end, None
        if dead_end is not None:
            dead_end.close()
        await self.http.aclose()


def _as_served(result: FetchResult, why: str) -> FetchResult:
    logger.debug("browser: %s: %s", result.url, why)
    return dataclasses.replace(result, rendered_by="http", render_reason=why)


def _line(error: BaseException) -> str:
    """An error's first line: Playwright's messages run on with call logs."""
    text = str(error).strip().splitlines()
    return text[0][:200] if text else type(error).__name__
