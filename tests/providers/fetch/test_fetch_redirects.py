"""Redirects by who asked: ``web_fetch`` follows the same site (``www.`` added or removed,
``http`` → ``https`` on the default ports), reads nobody asked for one by one (search passages,
deep search's pages) follow any origin, at most five hops, each through the guard. Several
names and ports on 127.0.0.1 stand for distinct origins."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import httpcore2
import httpx2
import pytest

from _servers import LocalServer, respond, tls_contexts
from providers_for_tests import register_owned
from webreach.cache import MemoryStore
from webreach.providers.fetch.http import HttpFetchProvider, same_site
from webreach.seam import FetchRequest, HtmlBody, TextBody, WebError, WebRuntime
from webreach.seam import WebErrorCode as Code
from webreach.server.core.turn.events import PageOutcome
from webreach.server.core.web_tools.pages import OpenedPages, run_open_call
from webreach.testing import ScriptedSearch
from webreach.tools import ToolOptions, web_search_tool


class NameResolver:
    """Each name answers its scripted addresses; every lookup is recorded."""

    def __init__(self, names: Mapping[str, Sequence[str]]) -> None:
        self.names = names
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls.append(host)
        return self.names[host]


class PortDialer(httpcore2.AsyncNetworkBackend):
    """Dials 127.0.0.1 at the local port standing for the port asked (80 and 443, say), and
    records every address it was asked to dial."""

    def __init__(self, ports: Mapping[int, int]) -> None:
        self.ports = ports
        self.dialled: list[tuple[str, int]] = []
        self._real = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore2's interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        self.dialled.append((host, port))
        return await self._real.connect_tcp(
            "127.0.0.1", self.ports.get(port, port), timeout=timeout
        )

    async def sleep(self, seconds: float) -> None:
        await self._real.sleep(seconds)


LOCAL = ["127.0.0.1"]
NAMES = {
    "site.test": LOCAL,
    "www.site.test": LOCAL,
    "api.site.test": LOCAL,
    "other.test": LOCAL,
    "third.test": LOCAL,
    "inner.test": ["10.0.0.5"],
}


def redirect(location: str, status: int = 302) -> Any:
    return lambda ex: respond(ex, status, b"", {"Location": location})


def text(body: bytes) -> Any:
    return lambda ex: respond(ex, 200, body, {"Content-Type": "text/plain"})


def fetcher(**options: Any) -> HttpFetchProvider:
    return HttpFetchProvider(**{"allow": "127.0.0.1", "resolver": NameResolver(NAMES), **options})


async def fetch(url: str, rule: str = "same_site", **options: Any) -> Any:
    provider = fetcher(**options)
    try:
        return await provider.fetch(FetchRequest(url, redirects=rule))  # type: ignore[arg-type]
    finally:
        await provider.aclose()


async def refused(url: str, rule: str = "same_site", **options: Any) -> WebError:
    with pytest.raises(WebError) as caught:
        await fetch(url, rule, **options)
    return caught.value


# --- the same-site rule, as a pure function -----------------------------------------------


@pytest.mark.parametrize(
    ("current", "target", "expected"),
    [
        ("http://example.com/", "http://example.com/b", True),
        ("http://example.com/", "http://www.example.com/", True),
        ("http://www.example.com/", "http://example.com/", True),
        ("http://example.com/", "https://example.com/", True),
        ("http://example.com/", "https://www.example.com/", True),
        ("http://example.com:80/", "https://example.com:443/", True),
        ("https://example.com/", "http://example.com/", False),  # a downgrade
        ("http://example.com:8080/", "https://example.com/", False),
        ("http://example.com/", "https://example.com:8443/", False),
        ("http://example.com/", "http://api.example.com/", False),
        ("http://www.example.com/", "http://api.example.com/", False),
        ("http://example.com/", "http://example.org/", False),
        ("http://www.com/", "http://com/", False),  # www. of a top-level name is a host
        ("https://example.com:8443/", "https://www.example.com:8443/", True),
        ("https://example.com:8443/", "https://www.example.com/", False),
    ],
)
def test_same_site(current: str, target: str, expected: bool) -> None:
    assert same_site(httpx2.URL(current), httpx2.URL(target)) is expected


# --- web_fetch: the same site -------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end"), [("site.test", "www.site.test"), ("www.site.test", "site.test")]
)
async def test_web_fetch_follows_www_added_or_removed(start: str, end: str) -> None:
    async with LocalServer() as srv:
        srv.routes["/"] = lambda ex: (
            respond(ex, 200, b"page", {"Content-Type": "text/plain"})
            if ex.request.headers["host"].startswith(end)
            else respond(ex, 301, b"", {"Location": f"http://{end}:{srv.port}/"})
        )
        result = await fetch(f"http://{start}:{srv.port}/")
    assert (result.url, result.body) == (f"http://{end}:{srv.port}/", TextBody("page"))
    assert [r.headers["host"] for r in srv.requests] == [f"{start}:{srv.port}", f"{end}:{srv.port}"]


async def test_web_fetch_follows_http_to_https_on_the_default_ports() -> None:
    pytest.importorskip("cryptography")
    server_tls, client_tls = tls_contexts("www.site.test")
    async with (
        LocalServer({"/": redirect("https://www.site.test/home")}) as plain,
        LocalServer({"/home": text(b"secure home")}, tls=server_tls) as secure,
    ):
        dialer = PortDialer({80: plain.port, 443: secure.port})
        result = await fetch("http://site.test/", dialer=dialer, verify=client_tls)
    assert (result.url, result.body) == ("https://www.site.test/home", TextBody("secure home"))
    assert [port for _, port in dialer.dialled] == [80, 443]
    assert secure.requests[0].headers["host"] == "www.site.test"


@pytest.mark.parametrize(
    "target",
    [
        "http://other.test:{port}/",  # another site
        "http://api.site.test:{port}/",  # a sub-domain that is not www.
        "https://site.test:{port}/",  # https, but not to the default port
        "http://site.test:1/",  # another port
        "http://inner.test/",  # another site, private at that: never resolved
    ],
)
async def test_web_fetch_refuses_every_other_redirect_naming_the_target(target: str) -> None:
    async with LocalServer() as srv:
        location = target.format(port=srv.port)
        srv.routes["/"] = redirect(location)
        resolver = NameResolver(NAMES)
        error = await refused(f"http://site.test:{srv.port}/", resolver=resolver)
    assert error.code == Code.WEB_REDIRECT_BLOCKED
    assert location in error.message and "new call" in error.message
    assert [r.target for r in srv.requests] == ["/"]
    assert resolver.calls == ["site.test"]


async def test_a_downgrade_to_http_is_refused() -> None:
    pytest.importorskip("cryptography")
    server_tls, client_tls = tls_contexts("site.test")
    async with (
        LocalServer({"/": redirect("http://site.test/")}, tls=server_tls) as secure,
        LocalServer({"/": text(b"plain")}) as plain,
    ):
        dialer = PortDialer({80: plain.port, 443: secure.port})
        error = await refused("https://site.test/", dialer=dialer, verify=client_tls)
    assert error.code == Code.WEB_REDIRECT_BLOCKED
    assert "http://site.test/" in error.message
    assert plain.requests == []


# --- reads nobody asked for one by one: any origin ----------------------------------------


async def test_cross_origin_redirects_are_followed_when_asked() -> None:
    async with LocalServer() as a, LocalServer() as b, LocalServer() as c:
        a.routes["/r"] = redirect(f"http://other.test:{b.port}/doi/10.1000/1")
        b.routes["/doi/10.1000/1"] = redirect(f"http://third.test:{c.port}/article", 301)
        c.routes["/article"] = lambda ex: respond(
            ex, 200, b"<p>words</p>", {"Content-Type": "text/html"}
        )
        result = await fetch(f"http://site.test:{a.port}/r", "cross_origin")
    assert result.url == f"http://third.test:{c.port}/article"
    assert result.body == HtmlBody("<p>words</p>")
    assert [len(s.requests) for s in (a, b, c)] == [1, 1, 1]


async def test_cross_origin_redirects_stop_after_five_hops() -> None:
    async with LocalServer() as srv:
        names = ["site.test", "other.test", "third.test", "www.site.test", "api.site.test"]
        for n in range(6):
            srv.routes[f"/{n}"] = redirect(f"http://{names[n % 5]}:{srv.port}/{n + 1}")
        srv.routes["/6"] = text(b"end")
        error = await refused(f"http://site.test:{srv.port}/0", "cross_origin")
    assert error.code == Code.WEB_REDIRECT_BLOCKED
    assert "more than 5 times" in error.message
    assert len(srv.requests) == 6


async def test_a_chain_ending_at_a_private_address_is_refused_at_that_hop() -> None:
    async with LocalServer() as a, LocalServer() as b:
        a.routes["/"] = redirect(f"http://other.test:{b.port}/next")
        b.routes["/next"] = redirect("http://inner.test/admin")
        dialer = PortDialer({})
        resolver = NameResolver(NAMES)
        error = await refused(
            f"http://site.test:{a.port}/", "cross_origin", dialer=dialer, resolver=resolver
        )
    assert error.code == Code.WEB_BLOCKED_URL
    assert "inner.test (resolves to 10.0.0.5)" in error.message
    assert resolver.calls == ["site.test", "other.test", "inner.test"]
    assert [host for host, _ in dialer.dialled] == ["127.0.0.1", "127.0.0.1"]


@pytest.mark.parametrize(
    "target", ["http://169.254.169.254/latest/meta-data/", "http://127.0.0.2/", "http://[::1]/"]
)
async def test_a_hop_to_a_blocked_literal_is_refused(target: str) -> None:
    async with LocalServer({"/": redirect(target)}) as srv:
        error = await refused(f"http://site.test:{srv.port}/", "cross_origin")
    assert error.code == Code.WEB_BLOCKED_URL
    assert len(srv.requests) == 1


async def test_a_hop_off_the_allow_list_is_refused() -> None:
    """Only 127.0.0.1 on one port is opened: the chain's second server is not."""
    async with LocalServer() as a, LocalServer({"/": text(b"never")}) as b:
        a.routes["/"] = redirect(f"http://127.0.0.1:{b.port}/")
        error = await refused(a.url("/"), "cross_origin", allow=f"127.0.0.1:{a.port}")
    assert error.code == Code.WEB_BLOCKED_URL
    assert b.requests == []


# --- the runtime's cache keeps the two rules apart ----------------------------------------


async def test_a_page_reached_across_origins_is_never_served_to_web_fetch() -> None:
    async with LocalServer() as a, LocalServer({"/end": text(b"far page")}) as b:
        a.routes["/r"] = redirect(f"http://other.test:{b.port}/end")
        async with WebRuntime(cache=MemoryStore()) as runtime:
            register_owned(runtime, fetcher())
            url = f"http://site.test:{a.port}/r"
            far = await runtime.fetch(FetchRequest(url, redirects="cross_origin"))
            assert far.body == TextBody("far page")
            with pytest.raises(WebError) as caught:
                await runtime.fetch(FetchRequest(url))
            again = await runtime.fetch(FetchRequest(url, redirects="cross_origin"))
    assert caught.value.code == Code.WEB_REDIRECT_BLOCKED
    assert f"http://other.test:{b.port}/end" in caught.value.message
    assert again == far
    assert (len(a.requests), len(b.requests)) == (2, 1)


async def test_a_page_without_redirects_is_shared_by_both_rules() -> None:
    async with LocalServer({"/p": text(b"here")}) as srv, WebRuntime(cache=MemoryStore()) as rt:
        register_owned(rt, fetcher())
        url = f"http://site.test:{srv.port}/p"
        await rt.fetch(FetchRequest(url, redirects="cross_origin"))
        plain = await rt.fetch(FetchRequest(url))
    assert plain.body == TextBody("here")
    assert len(srv.requests) == 1


# --- the faces: passages cite the final URL; deep search opens across origins -------------


ARTICLE = (
    b"<html><head><title>Lava</title></head><body><article><h1>Lava</h1>"
    + b"".join(
        b"<p>Paragraph %d about the volcano eruption and the lava field near the town.</p>" % n
        for n in range(30)
    )
    + b"</article></body></html>"
)


async def test_search_passages_follow_a_redirector_and_cite_the_final_url() -> None:
    from webreach.seam import SearchResult, SearchSource

    async with LocalServer() as redirector, LocalServer() as site:
        redirector.routes["/url"] = redirect(f"http://other.test:{site.port}/lava")
        site.routes["/lava"] = lambda ex: respond(
            ex, 200, ARTICLE, {"Content-Type": "text/html; charset=utf-8"}
        )
        link = f"http://site.test:{redirector.port}/url"
        found = SearchResult((SearchSource(link, "Lava", "A snippet."),))
        async with WebRuntime() as runtime:
            runtime.register_search_provider(ScriptedSearch(answers={"lava": found}))
            register_owned(runtime, fetcher())
            tool = web_search_tool(runtime, ToolOptions(search_context_size="medium"))
            out = await tool.execute({"queries": ["lava"]})
    final = f"http://other.test:{site.port}/lava"
    assert [s.url for s in out.data.sources] == [final]
    assert out.data.passages[final]
    assert final in out.text and link not in out.text
    assert "volcano eruption" in out.text


async def test_deep_search_opens_a_page_behind_a_cross_origin_redirect() -> None:
    async with LocalServer() as a, LocalServer() as b:
        a.routes["/doi"] = redirect(f"http://other.test:{b.port}/paper")
        b.routes["/paper"] = lambda ex: respond(
            ex, 200, ARTICLE, {"Content-Type": "text/html; charset=utf-8"}
        )
        async with WebRuntime() as runtime:
            register_owned(runtime, fetcher())
            outcome, shown, fetched = await run_open_call(
                f"http://site.test:{a.port}/doi", OpenedPages(), runtime, 4000
            )
    assert isinstance(outcome, PageOutcome)
    assert outcome.url == f"http://other.test:{b.port}/paper"
    assert "volcano eruption" in shown and fetched == 1
