"""The ``browser`` fetch provider: a page read over HTTP, then drawn by a headless browser.

Every page is read by the ``http`` fetcher first, with its guard, limits and redirect rule; a
PDF or any other document that is not HTML is returned as it is. An HTML page is then run in
a locked-down Chromium whose every request passes the same guard (see :mod:`._guard_proxy`),
and its final DOM is the body. ``auto`` (:mod:`.auto`) shares this machinery and renders only
the pages that need it.

It needs the ``browser`` extra (Playwright) and a Chromium; without them it is unavailable,
saying which is missing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Annotated, Literal
from weakref import WeakKeyDictionary

from pydantic import BeforeValidator, Field

from ...seam import FetchProvider, FetchRequest, FetchResult, HtmlBody
from ..spec import ProviderContext, ProviderSettings, ProviderSpec
from ._browser_engine import BrowserEngine, BrowserLimits
from .app_shell import app_shell

__all__ = [
    "PROVIDER",
    "BrowserFetchProvider",
    "BrowserSettings",
    "engine_for",
]

logger = logging.getLogger("webreach.browser")


def _blank_is_none(value: object) -> object:
    return None if isinstance(value, str) and not value.strip() else value


class BrowserSettings(ProviderSettings):
    """Where the browser comes from, and the bounds of one rendered page."""

    webreach_browser_cdp_url: Annotated[
        str | None, BeforeValidator(_blank_is_none), Field(examples=["ws://127.0.0.1:3000/"])
    ] = None
    """A browser to drive over CDP (Browserless, a Playwright server) instead of starting one."""
    webreach_browser_executable: Annotated[
        str | None, BeforeValidator(_blank_is_none), Field(examples=["/usr/bin/chromium"])
    ] = None
    """A Chromium or Chrome binary to start; unset, Playwright's own Chromium, then ``chromium``,
    ``chromium-browser`` or ``google-chrome`` on ``PATH``."""
    webreach_browser_timeout: Annotated[float, Field(gt=0)] = 10.0
    """Seconds one page may take to render, within ``WEBREACH_FETCH_TIMEOUT``."""
    webreach_browser_max_pages: Annotated[int, Field(gt=0)] = 4
    """Pages rendering at once; more wait their turn."""
    webreach_browser_max_bytes: Annotated[int, Field(gt=0)] = 20 * 1024 * 1024
    """Bytes one page may pull in (scripts, data, frames, images) beyond its document."""
    webreach_browser_no_sandbox: bool = False
    """Run Chromium without its sandbox, which cannot start as root: a decision for the operator."""

    def limits(self) -> BrowserLimits:
        return BrowserLimits(
            cdp_url=self.webreach_browser_cdp_url,
            executable=self.webreach_browser_executable,
            timeout=self.webreach_browser_timeout,
            max_pages=self.webreach_browser_max_pages,
            max_bytes=self.webreach_browser_max_bytes,
            no_sandbox=self.webreach_browser_no_sandbox,
        )


ShellRule = Callable[[str, str], str | None]
"""``(html, url) -> reason`` when a page read over HTTP is an app shell; None for a page."""

_RULE_IN_THREAD_CHARS = 500_000
"""A page this long is judged in a worker thread (about 3 ms per 500,000 characters)."""


class BrowserFetchProvider:
    """``always``: every HTML page is rendered (``browser``); ``app_shell``: only the pages the
    app-shell rule flags, and only when a browser can be had (``auto``)."""

    def __init__(
        self,
        engine: BrowserEngine,
        *,
        mode: Literal["always", "app_shell"] = "always",
        rule: ShellRule | None = None,
    ) -> None:
        self.id = "browser" if mode == "always" else "auto"
        self._engine = engine
        self._mode = mode
        self._rule = rule
        engine.hold()

    def available(self) -> bool:
        return self._mode == "app_shell" or self._engine.available()

    def unavailable_reason(self) -> str | None:
        return None if self._mode == "app_shell" else self._engine.unavailable_reason()

    def precheck(self, request: FetchRequest) -> None:
        self._engine.http.precheck(request)

    def cache_scope(self) -> str:
        return self._engine.scope()

    async def aclose(self) -> None:
        await self._engine.release()

    async def read_document(self, data: bytes, media_type: str | None, name: str) -> FetchResult:
        """Read by the HTTP fetcher this provider draws on: a held file has no page to render."""
        return await self._engine.http.read_document(data, media_type, name)

    async def fetch(self, request: FetchRequest) -> FetchResult:
        started = time.monotonic()
        result = replace(await self._engine.http.fetch(request), rendered_by="http")
        if not isinstance(result.body, HtmlBody):
            return result
        engine = self._engine
        drawable = self._mode == "always" or engine.available()
        if not drawable and not logger.isEnabledFor(logging.DEBUG):
            return result  # the rule's verdict would change nothing: spare the page its parse
        reason = await self._why(result)
        if reason is None:
            return result
        if not drawable:
            logger.debug(
                "fetch %s: %s; not rendered (%s)", result.url, reason, engine.unavailable_reason()
            )
            return result
        rendered = await engine.render(result, reason, started + engine.timeout)
        logger.debug(
            "fetch %s: rendered by %s (%s)",
            result.url,
            rendered.rendered_by,
            rendered.render_reason,
        )
        return rendered

    async def _why(self, result: FetchResult) -> str | None:
        assert isinstance(result.body, HtmlBody)
        if self._mode == "always":
            return "the browser provider renders every HTML page"
        rule, html = self._rule or app_shell, result.body.content
        if len(html) >= _RULE_IN_THREAD_CHARS:
            return await asyncio.to_thread(rule, html, result.url)
        return rule(html, result.url)


_engines: WeakKeyDictionary[ProviderContext, BrowserEngine] = WeakKeyDictionary()


def engine_for(context: ProviderContext, settings: BrowserSettings | None) -> BrowserEngine:
    """The engine of ``context`` (one per runtime), so ``browser`` and ``auto`` share one
    browser and one HTTP fetcher.

    ``auto`` passes None: it takes the engine as it is, or one read from the environment. The
    ``browser`` provider passes its settings, which the shared engine takes while none of its
    pages has started; other settings (a trial with other values) get an engine of their own.
    """
    engine = _engines.get(context)
    if engine is not None and (settings is None or engine.adopt(settings.limits())):
        return engine
    own = (settings or BrowserSettings()).limits()
    engine = BrowserEngine(
        own,
        timeout=context.fetch_timeout,
        max_bytes=context.fetch_max_bytes,
        max_chars=context.fetch_max_body_chars,
        allow=context.fetch_allow or "",
        provisional=settings is None,
        user_agent=context.fetch_user_agent,
        proxy=context.fetch_proxy,
        draws=context.draws_pages,
    )
    _engines.setdefault(context, engine)
    return engine


def _create(settings: BrowserSettings, context: ProviderContext) -> FetchProvider:
    return BrowserFetchProvider(engine_for(context, settings))


PROVIDER: ProviderSpec[BrowserSettings, FetchProvider] = ProviderSpec(
    "browser", BrowserSettings, _create
)
