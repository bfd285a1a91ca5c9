"""``auto`` and ``browser`` where no browser can be had: ``auto`` is the HTTP fetcher, the
``browser`` provider is unavailable with one line saying why, and nothing fails with a
traceback. No browser is started here."""

from __future__ import annotations

import logging

import pytest

from _servers import LocalServer, respond
from webreach.providers.fetch import _browser_launch
from webreach.providers.fetch._browser_engine import BrowserEngine, BrowserLimits
from webreach.providers.fetch.browser import BrowserFetchProvider
from webreach.seam import (
    FetchRequest,
    FetchResult,
    HtmlBody,
    TextBody,
    WebError,
    WebErrorCode,
    WebRuntime,
)
from webreach.seam.cache import decode_fetch, encode

SHELL = b'<!doctype html><title>app</title><div id="root"></div><script src="/app.js"></script>'


def html(body: bytes):  # type: ignore[no-untyped-def]
    return lambda ex: respond(ex, 200, body, {"Content-Type": "text/html"})


def nowhere(mode: str = "always") -> BrowserFetchProvider:
    engine = BrowserEngine(BrowserLimits(executable="/no/such/chromium"), allow="127.0.0.1")
    return BrowserFetchProvider(engine, mode=mode)  # type: ignore[arg-type]


async def test_auto_without_a_browser_is_the_http_result(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, "webreach.browser")
    provider = nowhere("app_shell")
    try:
        assert (provider.id, provider.available(), provider.unavailable_reason()) == (
            "auto",
            True,
            None,
        )
        async with LocalServer({"/": html(SHELL)}) as server:
            result = await provider.fetch(FetchRequest(server.url("/")))
    finally:
        await provider.aclose()
    assert result.body == HtmlBody(SHELL.decode())
    assert (result.rendered_by, result.render_reason) == ("http", None)
    assert any("not rendered" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("debug", [False, True], ids=["quiet", "debug-log"])
async def test_auto_without_a_browser_judges_no_page_unless_the_verdict_is_logged(
    caplog: pytest.LogCaptureFixture, debug: bool
) -> None:
    """Without a browser the app-shell verdict changes nothing but a debug line: the rule (a
    parse of the page) runs only when that line is written."""
    caplog.set_level(logging.DEBUG if debug else logging.INFO, "webreach.browser")
    judged: list[str] = []

    def rule(page: str, url: str) -> str | None:
        judged.append(url)
        return "app shell: a test's verdict"

    engine = BrowserEngine(BrowserLimits(executable="/no/such/chromium"), allow="127.0.0.1")
    provider = BrowserFetchProvider(engine, mode="app_shell", rule=rule)
    try:
        async with LocalServer({"/": html(SHELL)}) as server:
            result = await provider.fetch(FetchRequest(server.url("/")))
    finally:
        await provider.aclose()
    assert result.body == HtmlBody(SHELL.decode())
    assert result.rendered_by == "http"
    assert len(judged) == (1 if debug else 0)
    assert any("not rendered" in r.getMessage() for r in caplog.records) is debug


async def test_the_browser_provider_without_a_browser_says_why_when_named() -> None:
    provider = nowhere()
    try:
        assert provider.available() is False
        reason = provider.unavailable_reason()
        assert reason == "WEBREACH_BROWSER_EXECUTABLE=/no/such/chromium is not an executable file"
        async with WebRuntime(fetch_provider="browser") as runtime:
            runtime.register_fetch_provider(provider)
            with pytest.raises(WebError) as caught:
                await runtime.fetch(FetchRequest("http://127.0.0.1/"))
    finally:
        await provider.aclose()
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_CONFIGURED_UNAVAILABLE
    assert reason in caught.value.message


def test_without_playwright_the_reason_is_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_browser_launch.importlib.util, "find_spec", lambda name: None)
    source, why = _browser_launch.find_browser(None, None, no_sandbox=False)
    assert source is None
    assert why.startswith("playwright is not installed: pip install")
    assert "[browser]" in why


def test_as_root_the_sandbox_is_the_operators_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_browser_launch, "_is_root", lambda: True)
    monkeypatch.setattr(_browser_launch.shutil, "which", lambda name: "/usr/bin/true")
    monkeypatch.setattr(_browser_launch, "_playwright_chromium", lambda: False)
    source, why = _browser_launch.find_browser(None, None, no_sandbox=False)
    assert source is None and "WEBREACH_BROWSER_NO_SANDBOX=true" in why
    source, _how = _browser_launch.find_browser(None, None, no_sandbox=True)
    assert source == _browser_launch.BrowserSource("path", "/usr/bin/true")
    source, how = _browser_launch.find_browser("ws://127.0.0.1:3000/", None, no_sandbox=False)
    assert source is not None and source.kind == "cdp" and "WEBREACH_BROWSER_CDP_URL" in how


async def test_documents_that_are_not_html_never_reach_the_browser() -> None:
    provider = nowhere()
    routes = {"/notes": lambda ex: respond(ex, 200, b"plain notes", {"Content-Type": "text/plain"})}
    try:
        async with LocalServer(routes) as server:
            result = await provider.fetch(FetchRequest(server.url("/notes")))
    finally:
        await provider.aclose()
    assert (result.body, result.rendered_by) == (TextBody("plain notes"), "http")


def test_what_drew_a_page_survives_the_cache() -> None:
    drawn = FetchResult(
        "https://example.com/",
        200,
        HtmlBody("<p>x</p>"),
        rendered_by="browser",
        render_reason="app shell: 0 readable characters, 1 script",
    )
    assert decode_fetch(encode(drawn)) == drawn
    plain = FetchResult("https://example.com/", 200, HtmlBody("<p>x</p>"))
    assert decode_fetch(encode(plain)) == plain
