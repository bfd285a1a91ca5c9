"""The ``browser`` and ``auto`` fetch providers against real Chromium and servers on 127.0.0.1:
shells drawn by script, the guard on every request the page makes, and the bounds."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from browser_harness import (
    Canary,
    Site,
    browser_processes,
    needs_browser,
    provider_for,
    wait_for,
)
from loopback_dialer import LoopbackDialer
from webreach.providers.fetch._browser_page import MAX_FRAMES
from webreach.seam import FetchRequest, FetchResult, HtmlBody, TextBody, WebError, WebErrorCode

pytestmark = needs_browser

PUBLIC_IP = "93.184.215.14"  # a public address the guard accepts; never put on the wire
WORDS = "The river rises in the hills and runs to the sea past seven towns. " * 6


STORY = (
    "fetch('/api/story').then(r => r.json()).then(d => {"
    "document.getElementById('root').innerHTML = '<h1>' + d.title + '</h1><p>' + d.body"
    " + '</p>';});"
)


def shell(script: str, head: str = "") -> str:
    return (
        f"<!doctype html><html><head><title>app</title>{head}</head>"
        f'<body><div id="root"></div><script>{script}</script></body></html>'
    )


def draw(text: str) -> str:
    return f"document.getElementById('root').innerHTML = {json.dumps(text)};"


async def fetch(site: Site, path: str = "/", mode: str = "always", **options: Any) -> FetchResult:
    async with provider_for(f"127.0.0.1:{site.port}", mode=mode, **options) as provider:
        return await provider.fetch(FetchRequest(site.url + path))


# --- shells ---------------------------------------------------------------------------------


async def test_a_shell_filled_from_a_json_call_is_drawn_by_auto() -> None:
    async with Site() as site:
        site.html("/", shell(STORY))
        site.json("/api/story", {"title": "Seven towns", "body": WORDS})
        async with provider_for(f"127.0.0.1:{site.port}", mode="app_shell") as provider:
            result = await provider.fetch(FetchRequest(site.url + "/"))
        assert provider.id == "auto"
    assert isinstance(result.body, HtmlBody)
    assert "<h1>Seven towns</h1>" in result.body.content
    assert result.rendered_by == "browser"
    assert result.render_reason is not None and result.render_reason.startswith("app shell")
    assert site.hits["/api/story"] == 1


async def test_the_operators_user_agent_names_the_document_and_the_pages_own_requests() -> None:
    agent = "AcmeResearch/2.1 (+https://acme.example/bot)"
    seen: list[str] = []
    async with Site() as site:
        site.html("/", shell(STORY))

        async def story(request: web.Request) -> web.StreamResponse:
            seen.append(request.headers.get("User-Agent", ""))
            return web.json_response({"title": "Seven towns", "body": WORDS})

        site.pages["/api/story"] = story
        allow = f"127.0.0.1:{site.port}"
        async with provider_for(allow, mode="app_shell", user_agent=agent) as provider:
            result = await provider.fetch(FetchRequest(site.url + "/"))
    assert result.rendered_by == "browser"
    assert seen == [agent]


async def test_a_shell_filled_by_inline_script() -> None:
    async with Site() as site:
        site.html("/", shell(draw(f"<article><p>{WORDS}</p></article>")))
        result = await fetch(site, mode="app_shell")
    assert "seven towns" in result.body.content
    assert result.rendered_by == "browser"


async def test_a_shell_filled_after_a_one_second_timer() -> None:
    async with Site() as site:
        site.html("/", shell(f"setTimeout(() => {{ {draw('<p>' + WORDS + '</p>')} }}, 1000);"))
        result = await fetch(site, mode="app_shell")
    assert "seven towns" in result.body.content
    assert result.rendered_by == "browser"


async def test_a_shell_that_routes_on_the_client() -> None:
    script = (
        "history.pushState({}, '', '/articles/rivers');"
        "fetch('/api' + location.pathname).then(r => r.json()).then(d => {"
        "document.getElementById('root').innerHTML = '<h1>' + d.title + '</h1><p>' + d.body"
        " + '</p>';});"
    )
    async with Site() as site:
        site.html("/", shell(script))
        site.json("/api/articles/rivers", {"title": "Rivers", "body": WORDS})
        result = await fetch(site, mode="app_shell")
    assert "<h1>Rivers</h1>" in result.body.content
    assert result.url == site.url + "/articles/rivers"


async def test_an_ordinary_page_is_not_rendered_by_auto_and_starts_no_browser() -> None:
    before = len(browser_processes())
    async with Site() as site:
        site.html("/", f"<title>plain</title><script>var x = 1;</script><p>{WORDS}</p>")
        async with provider_for(f"127.0.0.1:{site.port}", mode="app_shell") as provider:
            result = await provider.fetch(FetchRequest(site.url + "/"))
            assert len(browser_processes()) == before
    assert result.rendered_by == "http"
    assert result.render_reason is None


async def test_non_html_never_reaches_the_browser() -> None:
    async with Site() as site:
        site.json("/data", {"a": 1})
        async with provider_for(f"127.0.0.1:{site.port}") as provider:
            result = await provider.fetch(FetchRequest(site.url + "/data"))
            assert browser_processes() == []
    assert isinstance(result.body, TextBody)
    assert result.rendered_by == "http"


async def test_the_browser_provider_draws_every_html_page() -> None:
    async with Site() as site:
        site.html(
            "/",
            f"<title>plain</title><p>{WORDS}</p><script>document.body.insertAdjacentHTML("
            "'beforeend', '<p>added by script</p>')</script>",
        )
        result = await fetch(site)
    assert "added by script" in result.body.content
    assert result.rendered_by == "browser"


# --- the guard ------------------------------------------------------------------------------


def attempts(canary: int) -> str:
    target = f"http://127.0.0.1:{canary}"
    return f"""
      const tries = [
        () => fetch('{target}/fetch'),
        () => fetch('http://localhost:{canary}/fetch-by-name'),
        () => fetch('http://2130706433:{canary}/fetch-by-number'),
        () => fetch('/hop'),
        () => new Promise((ok, no) => {{ const x = new XMLHttpRequest();
                x.open('GET', '{target}/xhr'); x.onload = ok; x.onerror = no; x.send(); }}),
        () => new Promise((ok) => {{ const w = new WebSocket('ws://127.0.0.1:{canary}/ws');
                w.onerror = ok; w.onopen = ok; }}),
      ];
      const img = document.createElement('img'); img.src = '{target}/img.png';
      document.body.appendChild(img);
      const frame = document.createElement('iframe'); frame.src = '{target}/frame';
      document.body.appendChild(frame);
      Promise.allSettled(tries.map(t => t())).then(() => {{
        document.getElementById('root').innerHTML = '<p>' + {json.dumps(WORDS)} + '</p>';
        setTimeout(() => {{ location = '{target}/navigated'; }}, 50);
      }});
    """


async def test_a_page_cannot_reach_a_private_address_by_any_means() -> None:
    async with Canary() as canary, Site() as site:
        site.html(
            "/",
            shell(
                attempts(canary.port),
                f'<meta http-equiv="refresh" content="0.2;url=http://127.0.0.1:{canary.port}/refresh">',
            ),
        )

        async def hop(_request: web.Request) -> web.StreamResponse:
            raise web.HTTPFound(f"http://127.0.0.1:{canary.port}/redirected")

        site.pages["/hop"] = hop
        result = await fetch(site)
        await asyncio.sleep(0.5)  # anything late would have arrived by now
        assert canary.connections == 0
    assert result.rendered_by == "browser"
    assert "seven towns" in result.body.content
    assert result.url == site.url + "/"
    assert site.hits["/hop"] == 1


async def test_a_refused_top_level_url_is_the_http_providers_error() -> None:
    async with Canary() as canary:
        async with provider_for("") as provider:
            with pytest.raises(WebError) as caught:
                await provider.fetch(FetchRequest(f"http://127.0.0.1:{canary.port}/"))
        assert canary.connections == 0
    assert caught.value.code == WebErrorCode.WEB_BLOCKED_URL
    assert caught.value.provider == "http"


class ScriptedResolver:
    """Each lookup gets the next answer (the last repeats)."""

    def __init__(self, *answers: list[str]) -> None:
        self.answers = answers
        self.calls = 0

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls += 1
        return self.answers[min(self.calls, len(self.answers)) - 1]


async def test_a_host_that_resolves_public_then_private_is_refused_the_second_time() -> None:
    async with Site() as site:
        site.html(
            "/",
            shell(
                "fetch('/api/secret').then(r => r.text()).then(t => {"
                + "document.getElementById('root').innerHTML = '<p>' + t + '</p>'; });"
            ),
        )
        site.text("/api/secret", "SECRET " * 40)
        resolver = ScriptedResolver([PUBLIC_IP], ["127.0.0.1"])
        dialer = LoopbackDialer(site.port)
        async with provider_for("", resolver=resolver, dialer=dialer) as provider:
            result = await provider.fetch(FetchRequest(f"http://rebind.test:{site.port}/"))
    assert result.rendered_by == "browser"
    assert "SECRET" not in result.body.content
    assert dialer.dialled == [PUBLIC_IP]
    assert resolver.calls >= 2
    assert site.hits["/api/secret"] == 0


# --- bounds ---------------------------------------------------------------------------------


async def test_a_page_that_never_stops_loading_is_taken_at_the_deadline() -> None:
    hold = asyncio.Event()
    async with Site() as site:

        async def forever(_request: web.Request) -> web.StreamResponse:
            await hold.wait()
            return web.Response(text="late")

        site.pages["/forever.png"] = forever
        site.html("/", shell(draw(f"<p>{WORDS}</p><img src='/forever.png'>")))
        try:
            result = await fetch(site, browser={"timeout": 6.0})
        finally:
            hold.set()
    assert result.rendered_by == "browser"
    assert "seven towns" in result.body.content
    assert "deadline" in (result.render_reason or "")


async def test_a_thousand_frames_are_bounded_and_the_browser_serves_the_next_page() -> None:
    frames = (
        "for (let i = 0; i < 1000; i++) { const f = document.createElement('iframe');"
        " f.src = '/frame?' + i; document.body.appendChild(f); }"
    )
    async with Site() as site:
        site.html("/frame", "<p>frame</p>")
        site.html("/", shell(frames + draw(f"<p>{WORDS}</p>")))
        site.html("/next", shell(draw(f"<p>{WORDS}</p>")))
        async with provider_for(f"127.0.0.1:{site.port}", browser={"timeout": 8.0}) as provider:
            result = await provider.fetch(FetchRequest(site.url + "/"))
            after = await provider.fetch(FetchRequest(site.url + "/next"))
    # Drawn at the deadline, or (the renderer too busy to answer) the page as served.
    assert result.rendered_by in ("browser", "http")
    assert result.render_reason is not None
    # Past the cap a frame's navigation is answered in the browser; a few of those already
    # under way when the cap is reached still arrive.
    assert site.hits["/frame"] <= 2 * MAX_FRAMES
    assert after.rendered_by == "browser"
    assert "seven towns" in after.body.content


async def test_a_page_that_allocates_in_a_loop_gives_the_http_result() -> None:
    page = shell("const hoard = []; while (true) { hoard.push(new Array(1 << 20).fill(7)); }")
    async with Site() as site:
        site.html("/", page)
        site.html("/next", shell(draw(f"<p>{WORDS}</p>")))
        async with provider_for(f"127.0.0.1:{site.port}", browser={"timeout": 20.0}) as provider:
            result = await provider.fetch(FetchRequest(site.url + "/"))
            after = await provider.fetch(FetchRequest(site.url + "/next"))
    assert result.rendered_by == "http"
    assert result.render_reason is not None
    assert result.body == HtmlBody(page)
    assert after.rendered_by == "browser"
    assert "seven towns" in after.body.content


async def test_a_page_that_spins_gives_the_http_result_at_the_deadline() -> None:
    page = shell("while (true) {}")
    async with Site() as site:
        site.html("/", page)
        site.html("/next", shell(draw(f"<p>{WORDS}</p>")))
        async with provider_for(f"127.0.0.1:{site.port}", browser={"timeout": 6.0}) as provider:
            result = await provider.fetch(FetchRequest(site.url + "/"))
            after = await provider.fetch(FetchRequest(site.url + "/next"))
    assert (result.rendered_by, result.body) == ("http", HtmlBody(page))
    assert "in time" in (result.render_reason or "")
    assert after.rendered_by == "browser"


async def test_a_page_past_its_byte_budget_is_cut() -> None:
    big = "x" * (2 * 1024 * 1024)
    async with Site() as site:
        site.text("/big", big)
        site.html(
            "/",
            shell(
                draw(f"<p>{WORDS}</p>")
                + "fetch('/big').then(r => r.text()).then(t => { document.title = t.length; });"
            ),
        )
        result = await fetch(site, browser={"max_bytes": 256 * 1024})
    assert result.rendered_by == "browser"
    assert result.truncated is True
    assert "byte budget" in (result.render_reason or "")


async def test_a_caller_that_leaves_mid_render_leaves_no_page_behind() -> None:
    asked = asyncio.Event()
    hung_up = asyncio.Event()
    async with Site() as site:

        async def slow(request: web.Request) -> web.StreamResponse:
            asked.set()
            response = web.StreamResponse()
            await response.prepare(request)
            try:
                while True:
                    await response.write(b" ")
                    await asyncio.sleep(0.05)
            except (ConnectionError, asyncio.CancelledError):
                hung_up.set()
                raise

        site.pages["/slow"] = slow
        site.html("/", shell("fetch('/slow').then(r => r.text())"))
        async with provider_for(f"127.0.0.1:{site.port}", browser={"timeout": 60.0}) as provider:
            task = asyncio.create_task(provider.fetch(FetchRequest(site.url + "/")))
            await asyncio.wait_for(asked.wait(), 60)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.wait_for(hung_up.wait(), 60)
            browser = provider._engine._browser
            assert browser is not None and browser.contexts == []
        await wait_for(lambda: browser_processes() == [], "the browser to exit")


async def test_no_browser_process_outlives_failures_timeouts_and_cancellation() -> None:
    async with Site() as site:
        site.html("/", shell("while (true) {}"))
        site.html("/ok", shell(draw(f"<p>{WORDS}</p>")))
        async with provider_for(f"127.0.0.1:{site.port}", browser={"timeout": 2.0}) as provider:
            await provider.fetch(FetchRequest(site.url + "/"))
            task = asyncio.create_task(provider.fetch(FetchRequest(site.url + "/ok")))
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert browser_processes() != []
        await wait_for(lambda: browser_processes() == [], "the browser to exit")


async def test_pages_beyond_max_pages_wait_their_turn() -> None:
    now = peak = 0

    async def held(request: web.Request) -> web.StreamResponse:
        nonlocal now, peak
        now += 1
        peak = max(peak, now)
        try:
            await asyncio.sleep(0.3)
        finally:
            now -= 1
        return web.json_response({"n": request.query["n"]})

    page = (
        "fetch('/api?n=' + location.pathname.slice(1)).then(r => r.json()).then(d => {"
        f"document.getElementById('root').innerHTML = '<p>' + d.n + ' {WORDS}</p>'; }});"
    )
    async with Site() as site:
        site.pages["/api"] = held
        for n in range(4):
            site.html(f"/{n}", shell(page))
        async with provider_for(f"127.0.0.1:{site.port}", browser={"max_pages": 2}) as provider:
            results = await asyncio.gather(
                *(provider.fetch(FetchRequest(f"{site.url}/{n}")) for n in range(4))
            )
            browser = provider._engine._browser
            assert browser is not None and browser.contexts == []
    assert [r.rendered_by for r in results] == ["browser"] * 4
    assert all(f"{n} The river" in r.body.content for n, r in enumerate(results))
    assert site.hits["/api"] == 4
    assert 1 <= peak <= 2


# --- a remote browser over CDP --------------------------------------------------------------


@pytest.fixture
async def remote_chromium(tmp_path: Path) -> AsyncIterator[str]:
    """A Chromium started on its own (as a Browserless or a sidecar would be), its CDP on a
    loopback port; yields the endpoint's URL."""
    from browser_harness import AS_ROOT, CHROMIUM

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = [
        str(CHROMIUM),
        "--headless",
        f"--remote-debugging-port={port}",
        "--remote-debugging-address=127.0.0.1",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--no-first-run",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        *(["--no-sandbox"] if AS_ROOT else []),
        "about:blank",
    ]
    process = await asyncio.create_subprocess_exec(
        *args, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient() as client:

            async def answers() -> bool:
                try:
                    return (await client.get(url + "/json/version")).status_code == 200
                except httpx.HTTPError:
                    return False

            for _ in range(600):
                if await answers():
                    break
                await asyncio.sleep(0.1)
        yield url
    finally:
        process.terminate()
        await process.wait()


async def test_a_remote_browser_over_cdp_is_guarded_the_same_way(remote_chromium: str) -> None:
    async with Canary() as canary, Site() as site:
        page = attempts(canary.port) + STORY
        site.html("/", shell(page))
        site.json("/api/story", {"title": "Seven towns", "body": WORDS})
        site.pages["/hop"] = _hop_to(canary.port)
        allow = f"127.0.0.1:{site.port}"
        async with provider_for(allow, browser={"cdp_url": remote_chromium}) as provider:
            result = await provider.fetch(FetchRequest(site.url + "/"))
        await asyncio.sleep(0.5)
        assert canary.connections == 0
        assert site.hits["/api/story"] == 1  # the page's own calls go through the guard
    assert result.rendered_by == "browser", result.render_reason
    assert "seven towns" in result.body.content
    async with httpx.AsyncClient() as client:  # closing the engine left the remote browser up
        assert (await client.get(remote_chromium + "/json/version")).status_code == 200


def _hop_to(port: int) -> Any:
    async def hop(_request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound(f"http://127.0.0.1:{port}/redirected")

    return hop


async def test_a_page_cannot_install_a_service_worker_or_keep_a_pop_up() -> None:
    script = (
        "navigator.serviceWorker && navigator.serviceWorker.register('/sw.js').catch(() => {});"
        "window.open('/popup');" + draw(f"<p>{WORDS}</p>")
    )
    async with Site() as site:
        site.text("/sw.js", "self.addEventListener('fetch', () => {});")
        site.html("/popup", "<p>popup</p>")
        site.html("/", shell(script))
        async with provider_for(f"127.0.0.1:{site.port}") as provider:
            result = await provider.fetch(FetchRequest(site.url + "/"))
            browser = provider._engine._browser
            assert browser is not None and browser.contexts == []
    assert result.rendered_by == "browser", result.render_reason
    assert site.hits["/sw.js"] == 0
    assert site.hits["/popup"] == 0


async def test_a_browser_that_cannot_start_gives_the_http_result(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with Site() as site:
        site.html("/", shell(draw(f"<p>{WORDS}</p>")))
        dead = {"executable": "/bin/false"}
        async with provider_for(f"127.0.0.1:{site.port}", browser=dead) as provider:
            first = await provider.fetch(FetchRequest(site.url + "/"))
            again = await provider.fetch(FetchRequest(site.url + "/"))
    assert (first.rendered_by, again.rendered_by) == ("http", "http")
    assert "could not start" in (first.render_reason or "")
    starts = [r for r in caplog.records if "could not start" in r.getMessage()]
    assert len(starts) == 1  # not tried again for every page
    await wait_for(lambda: browser_processes() == [], "Playwright's driver to exit")
