"""``WEBREACH_FETCH_PROXY``: page fetches go through a proxy (a local one on 127.0.0.1 here,
which answers as a forward proxy does), and the guard still judges every URL before it is
sent: IP literals, loopback names, and the addresses the name resolves to here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from _servers import LocalServer, respond
from webreach.providers.fetch.http import HttpFetchProvider
from webreach.seam import FetchRequest, TextBody, WebError
from webreach.seam import WebErrorCode as Code

PUBLIC_IP = "93.184.215.14"  # a public address the guard accepts; never dialled here


class Names:
    def __init__(self, names: dict[str, Sequence[str]]) -> None:
        self.names = names
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls.append(host)
        return self.names[host]


NAMES = Names({"news.test": [PUBLIC_IP], "inner.test": ["10.0.0.5"]})


def proxied(proxy: LocalServer, **options: Any) -> HttpFetchProvider:
    return HttpFetchProvider(proxy=proxy.url("/"), resolver=NAMES, allow=(), **options)


async def test_a_fetch_goes_through_the_proxy() -> None:
    routes = {
        "http://news.test/story": lambda ex: respond(
            ex, 200, b"story via proxy", {"Content-Type": "text/plain"}
        )
    }
    async with LocalServer(routes) as proxy:
        fetcher = proxied(proxy)
        try:
            result = await fetcher.fetch(FetchRequest("http://news.test/story"))
        finally:
            await fetcher.aclose()
    assert result.body == TextBody("story via proxy")
    assert [r.target for r in proxy.requests] == ["http://news.test/story"]
    assert proxy.requests[0].headers["host"] == "news.test"


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("http://inner.test/admin", "inner.test (resolves to 10.0.0.5)"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
        ("http://127.0.0.1:8080/", "127.0.0.1"),
        ("http://localhost/", "localhost"),
    ],
)
async def test_the_guard_judges_each_url_before_the_proxy_sees_it(url: str, named: str) -> None:
    async with LocalServer() as proxy:
        fetcher = proxied(proxy)
        try:
            with pytest.raises(WebError) as caught:
                await fetcher.fetch(FetchRequest(url))
        finally:
            await fetcher.aclose()
    assert caught.value.code == Code.WEB_BLOCKED_URL
    assert named in caught.value.message
    assert proxy.requests == []


async def test_a_redirect_through_the_proxy_is_judged_at_its_hop() -> None:
    routes = {
        "http://news.test/r": lambda ex: respond(
            ex, 302, b"", {"Location": "http://inner.test/secret"}
        )
    }
    async with LocalServer(routes) as proxy:
        fetcher = proxied(proxy)
        try:
            with pytest.raises(WebError) as caught:
                await fetcher.fetch(FetchRequest("http://news.test/r", redirects="cross_origin"))
        finally:
            await fetcher.aclose()
    assert caught.value.code == Code.WEB_BLOCKED_URL
    assert [r.target for r in proxy.requests] == ["http://news.test/r"]


async def test_a_proxy_keeps_its_cache_scope_apart() -> None:
    plain = HttpFetchProvider()
    through = HttpFetchProvider(proxy="http://user:secret@proxy.example:3128")
    scopes = plain.cache_scope(), through.cache_scope()
    await plain.aclose()
    await through.aclose()
    assert scopes[0] != scopes[1]
    assert "secret" not in scopes[1] and "proxy.example" not in scopes[1]
