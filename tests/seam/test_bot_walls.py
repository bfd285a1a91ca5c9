"""Bot walls are named, never bypassed: a challenge or block page (Cloudflare, Akamai, DataDome,
HUMAN) is ``WEB_BOT_CHALLENGE`` on every face, never passages, never cached as content; the
fetcher's user agent is webreach's own, or the operator's product name."""

from __future__ import annotations

import json
from typing import Any

import pytest

from _servers import LocalServer, respond
from cli_helpers import clean_env, run_cli
from providers_for_tests import register_owned
from replay_server import ReplayServer, Reply
from webreach.cache import MemoryStore
from webreach.providers.fetch.http import HttpFetchProvider
from webreach.seam import (
    FetchRequest,
    FetchResult,
    HtmlBody,
    SearchResult,
    SearchSource,
    WebError,
    WebRuntime,
    bot_wall,
)
from webreach.seam import WebErrorCode as Code
from webreach.testing import ScriptedSearch
from webreach.tools import ToolError, ToolOptions, web_fetch_tool, web_search_tool

CF_CHALLENGE = (
    b'<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>'
    b'<meta http-equiv="refresh" content="390"></head><body><div class="main-wrapper">'
    b"<noscript>Enable JavaScript and cookies to continue</noscript></div>"
    b"<script>(function(){window._cf_chl_opt={cvId: '3',cZone: 'example.com'};"
    b"var a=document.createElement('script');a.src='/cdn-cgi/challenge-platform/h/b/orchestrate/"
    b"chl_page/v1?ray=8d';document.getElementsByTagName('head')[0].appendChild(a);}());"
    b"</script></body></html>"
)
CF_BLOCK = (
    b"<html><head><title>Attention Required! | Cloudflare</title></head><body>"
    b"<h1>Sorry, you have been blocked</h1><p>You are unable to access example.com</p></body>"
)
DATADOME = (
    b"<html><head><title>example.com</title></head><body><p>Please enable JS and disable any ad"
    b" blocker</p><script>var dd={'rt':'c','cid':'AHrlqAAA','hsh':'2211F5','b':1,"
    b"'host':'geo.captcha-delivery.com'}</script>"
    b'<script src="https://ct.captcha-delivery.com/c.js"></script></body></html>'
)
HUMAN = (
    b"<html><head><title>Access to this page has been denied</title></head><body>"
    b'<div id="px-captcha"></div><p>Press &amp; Hold to confirm you are a human</p>'
    b"<script>window._pxAppId = 'PXabc123';</script></body></html>"
)
AKAMAI = (
    b"<HTML><HEAD>\n<TITLE>Access Denied</TITLE>\n</HEAD><BODY>\n<H1>Access Denied</H1>\n"
    b'You don\'t have permission to access "http&#58;&#47;&#47;www&#46;example&#46;com&#47;" '
    b"on this server.<P>\nReference&#32;&#35;18&#46;2a3b&#46;1700000000&#46;abc\n"
    b"<P>https&#58;&#47;&#47;errors&#46;edgesuite&#46;net&#47;18&#46;2a3b</P>\n</BODY>\n</HTML>\n"
)


@pytest.mark.parametrize(
    ("status", "headers", "body", "vendor"),
    [
        (403, {"cf-mitigated": "challenge"}, "", "Cloudflare"),
        (200, {"CF-Mitigated": "challenge"}, "<p>ok</p>", "Cloudflare"),
        (503, {}, CF_CHALLENGE.decode(), "Cloudflare"),
        (403, {}, CF_CHALLENGE.decode(), "Cloudflare"),
        (403, {"cf-ray": "8d-AMS"}, CF_BLOCK.decode(), "Cloudflare"),
        (403, {}, DATADOME.decode(), "DataDome"),
        (403, {"x-dd-b": "1", "x-datadome": "protected"}, "", "DataDome"),
        (403, {}, HUMAN.decode(), "HUMAN"),
        (403, {"server": "AkamaiGHost"}, "<h1>Access Denied</h1>", "Akamai"),
        (403, {}, AKAMAI.decode(), "Akamai"),
    ],
)
def test_the_documented_signatures(
    status: int, headers: dict[str, str], body: str, vendor: str
) -> None:
    assert bot_wall(status, headers, body) == vendor


@pytest.mark.parametrize(
    ("status", "headers", "body"),
    [
        (200, {}, CF_CHALLENGE.decode()),  # an article quoting a challenge page
        (200, {"x-datadome": "protected"}, "<p>a page DataDome let through</p>"),
        (200, {"server": "AkamaiGHost"}, "<p>a page served by Akamai</p>"),
        (403, {}, "<h1>Forbidden</h1>"),
        (503, {"cf-ray": "8d-AMS"}, "<h1>Service unavailable</h1>"),
        (404, {}, DATADOME.decode()),
    ],
)
def test_ordinary_answers_are_no_wall(status: int, headers: dict[str, str], body: str) -> None:
    assert bot_wall(status, headers, body) is None


def wall(status: int, body: bytes, **headers: str) -> Any:
    return lambda ex: respond(ex, status, body, {"Content-Type": "text/html", **headers})


ROUTES = {
    "/cf": wall(403, CF_CHALLENGE, **{"cf-mitigated": "challenge"}),
    "/cf-body": wall(503, CF_CHALLENGE),
    "/datadome": wall(403, DATADOME),
    "/human": wall(403, HUMAN),
    "/akamai": wall(403, AKAMAI),
    "/page": wall(200, b"<title>Lava</title><p>The lava field grew.</p>"),
}


@pytest.mark.parametrize(
    ("path", "vendor"),
    [
        ("/cf", "Cloudflare"),
        ("/cf-body", "Cloudflare"),
        ("/datadome", "DataDome"),
        ("/human", "HUMAN"),
        ("/akamai", "Akamai"),
    ],
)
async def test_the_fetcher_names_the_wall(path: str, vendor: str) -> None:
    async with LocalServer(ROUTES) as srv:
        fetcher = HttpFetchProvider(allow="127.0.0.1")
        try:
            with pytest.raises(WebError) as caught:
                await fetcher.fetch(FetchRequest(srv.url(path)))
        finally:
            await fetcher.aclose()
    error = caught.value
    assert (error.code, error.provider) == (Code.WEB_BOT_CHALLENGE, "http")
    assert error.message.startswith(f"127.0.0.1 answered with a bot challenge ({vendor}, HTTP ")
    assert "the page could not be read" in error.message
    assert error.status in (403, 503)


async def test_a_wall_is_never_cached() -> None:
    async with LocalServer(ROUTES) as srv, WebRuntime(cache=MemoryStore()) as runtime:
        register_owned(runtime, HttpFetchProvider(allow="127.0.0.1"))
        for _ in range(2):
            with pytest.raises(WebError) as caught:
                await runtime.fetch(FetchRequest(srv.url("/cf")))
            assert caught.value.code == Code.WEB_BOT_CHALLENGE
    assert len(srv.requests) == 2


class DrawnPages:
    """A fetch provider that draws pages itself (as a browser does): no headers reach the
    runtime, only the status and the body."""

    id = "drawn"

    def __init__(self, status: int, html: str) -> None:
        self.status, self.html, self.calls = status, html, 0

    def available(self) -> bool:
        return True

    async def fetch(self, request: FetchRequest) -> FetchResult:
        self.calls += 1
        return FetchResult(request.url, self.status, HtmlBody(self.html), rendered_by="browser")


async def test_the_runtime_names_a_wall_any_provider_drew() -> None:
    drawn = DrawnPages(403, HUMAN.decode())
    async with WebRuntime(cache=MemoryStore()) as runtime:
        runtime.register_fetch_provider(drawn)
        for _ in range(2):
            with pytest.raises(WebError) as caught:
                await runtime.fetch(FetchRequest("https://shop.example/item"))
    assert caught.value.code == Code.WEB_BOT_CHALLENGE
    assert caught.value.provider == "drawn"
    assert "shop.example answered with a bot challenge (HUMAN, HTTP 403)" in caught.value.message
    assert drawn.calls == 2


async def test_web_fetch_reports_the_wall_as_a_tool_error() -> None:
    async with LocalServer(ROUTES) as srv, WebRuntime() as runtime:
        register_owned(runtime, HttpFetchProvider(allow="127.0.0.1"))
        with pytest.raises(ToolError) as caught:
            await web_fetch_tool(runtime).execute({"url": srv.url("/datadome")})
    assert caught.value.code == "WEB_BOT_CHALLENGE"
    assert "bot challenge (DataDome" in caught.value.message


async def test_a_walled_page_gives_no_passages() -> None:
    async with LocalServer(ROUTES) as srv:
        sources = (
            SearchSource(srv.url("/cf-body"), "Walled", "Snippet of the walled page."),
            SearchSource(srv.url("/page"), "Lava", "Snippet of the lava page."),
        )
        search = ScriptedSearch(answers={"lava": SearchResult(sources)})
        async with WebRuntime() as runtime:
            runtime.register_search_provider(search)
            register_owned(runtime, HttpFetchProvider(allow="127.0.0.1"))
            tool = web_search_tool(runtime, ToolOptions(search_context_size="medium"))
            out = await tool.execute({"queries": ["lava"]})
    assert list(out.data.passages) == [srv.url("/page")]
    assert "Just a moment" not in out.text and "Enable JavaScript" not in out.text
    assert "Snippet of the walled page." in out.text


@pytest.mark.slow
def test_webreach_fetch_exits_1_naming_the_wall(replay: ReplayServer) -> None:
    headers = {"content-type": "text/html", "cf-mitigated": "challenge"}
    replay.route("GET", "/wall", Reply(status=403, body=CF_CHALLENGE, headers=headers))
    env = clean_env(WEBREACH_FETCH_ALLOW="127.0.0.1")
    done = run_cli("fetch", f"{replay.url}/wall", "--json", env=env)
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "WEB_BOT_CHALLENGE"
    assert "bot challenge (Cloudflare, HTTP 403)" in error["message"]
    assert replay.requests[0].headers["user-agent"].startswith("webreach/")


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["http", "auto"])
def test_the_operator_names_the_user_agent(replay: ReplayServer, provider: str) -> None:
    replay.route("GET", "/p", Reply(body=b"hello", headers={"content-type": "text/plain"}))
    agent = "AcmeResearch/2.1 (+https://acme.example/bot)"
    env = clean_env(
        WEBREACH_FETCH_ALLOW="127.0.0.1",
        WEBREACH_FETCH_USER_AGENT=agent,
        WEBREACH_FETCH_PROVIDER=provider,
    )
    done = run_cli("fetch", f"{replay.url}/p", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert replay.requests[0].headers["user-agent"] == agent
    shown = json.loads(run_cli("config", "--json", env=env).stdout)
    names = {s["variable"]: s for s in shown["settings"]}
    assert names["WEBREACH_FETCH_USER_AGENT"]["value"] == agent
    assert "WEBREACH_FETCH_ROBOTS" in names and "WEBREACH_FETCH_PROXY" in names


@pytest.mark.slow
def test_a_user_agent_on_two_lines_is_refused() -> None:
    env = clean_env(WEBREACH_FETCH_USER_AGENT="Acme/1.0\r\nX-Evil: 1")
    done = run_cli("fetch", "https://example.com/", env=env)
    assert done.returncode == 2
    assert "WEBREACH_FETCH_USER_AGENT" in done.stderr
