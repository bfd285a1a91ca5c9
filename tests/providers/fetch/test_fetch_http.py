"""The ``http`` fetch provider against local servers: pinning, redirects, limits, content."""

from __future__ import annotations

import asyncio
import gc
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from _servers import Exchange, LocalServer, gzip_bomb, make_pdf, respond, tls_contexts
from loopback_dialer import LoopbackDialer
from repo_paths import TESTS
from webreach.net import USER_AGENT
from webreach.providers.fetch._decoding import SLICE, BodyDecoder
from webreach.providers.fetch.http import HttpFetchProvider
from webreach.seam import (
    FetchRequest,
    FetchResult,
    HtmlBody,
    PdfBody,
    TextBody,
    WebError,
    WebRuntime,
)
from webreach.seam import WebErrorCode as Code

PUBLIC_IP = "93.184.215.14"  # a public address the guard accepts; never put on the wire
MiB = 1024 * 1024


class ScriptedResolver:
    """Answers each lookup with the next scripted answer (the last one repeats)."""

    def __init__(self, *answers: Sequence[str]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls.append(host)
        return self.answers[min(len(self.calls), len(self.answers)) - 1]


@pytest.fixture
async def provider() -> AsyncIterator[HttpFetchProvider]:
    fetcher = HttpFetchProvider(allow="127.0.0.1")
    yield fetcher
    await fetcher.aclose()


async def fetch_with(url: str, **options: Any) -> FetchResult:
    fetcher = HttpFetchProvider(**{"allow": "127.0.0.1", **options})
    try:
        return await fetcher.fetch(FetchRequest(url))
    finally:
        await fetcher.aclose()


async def fetch_error(url: str, **options: Any) -> WebError:
    with pytest.raises(WebError) as caught:
        await fetch_with(url, **options)
    return caught.value


def page(body: bytes, content_type: str | None = "text/html", **headers: str) -> Any:
    extra = {"Content-Type": content_type} if content_type is not None else {}
    return lambda ex: respond(ex, 200, body, {**extra, **headers})


def test_provider_identity() -> None:
    fetcher = HttpFetchProvider()
    assert fetcher.id == "http"
    assert fetcher.available() is True


async def test_an_invalid_url_is_refused_before_any_io() -> None:
    error = await fetch_error("ftp://127.0.0.1/file")
    assert (error.code, error.provider) == (Code.WEB_INVALID_URL, "http")
    assert "scheme 'ftp'" in error.message


# --- IP pinning and DNS rebinding -----------------------------------------------------------


async def test_dns_rebinding_cannot_reach_a_blocked_address() -> None:
    async with LocalServer({"/": lambda ex: respond(ex, 200, b"public page", close=True)}) as srv:
        resolver = ScriptedResolver([PUBLIC_IP], ["127.0.0.1"])
        dialer = LoopbackDialer()
        fetcher = HttpFetchProvider(resolver=resolver, dialer=dialer)
        url = f"http://rebind.test:{srv.port}/"
        try:
            result = await fetcher.fetch(FetchRequest(url))
            assert result.body == TextBody("public page")
            assert resolver.calls == ["rebind.test"]  # resolved once for the connection
            assert dialer.dialled == [PUBLIC_IP]  # and only the vetted address was dialled
            assert srv.requests[0].headers["host"] == f"rebind.test:{srv.port}"

            # The name now answers loopback: the next connection is refused before dialling.
            with pytest.raises(WebError) as caught:
                await fetcher.fetch(FetchRequest(url))
        finally:
            await fetcher.aclose()
    assert caught.value.code == Code.WEB_BLOCKED_URL
    assert "rebind.test (resolves to 127.0.0.1)" in caught.value.message
    assert resolver.calls == ["rebind.test", "rebind.test"]
    assert dialer.dialled == [PUBLIC_IP]
    assert srv.connections == 1


async def test_on_the_default_pool_a_name_that_moved_still_reaches_only_its_vetted_address() -> (
    None
):
    """No test dialer: aiohttp's pool dials what the vetting resolver answered, and reuses that
    vetted answer for the name's next connections within its TTL."""
    routes = {"/": lambda ex: respond(ex, 200, b"allowed page", close=True)}
    async with LocalServer(routes) as srv:
        resolver = ScriptedResolver(["127.0.0.1"], ["127.0.0.2"])
        fetcher = HttpFetchProvider(allow="127.0.0.1", resolver=resolver)
        url = f"http://rebind.test:{srv.port}/"
        try:
            for _ in range(2):  # a new connection each time (the server closes it)
                assert (await fetcher.fetch(FetchRequest(url))).body == TextBody("allowed page")
        finally:
            await fetcher.aclose()
    assert resolver.calls == ["rebind.test"]
    assert srv.connections == 2


async def test_one_private_answer_blocks_the_host() -> None:
    resolver = ScriptedResolver([PUBLIC_IP, "10.0.0.7"])
    dialer = LoopbackDialer()
    error = await fetch_error("http://mixed.test/", allow=(), resolver=resolver, dialer=dialer)
    assert error.code == Code.WEB_BLOCKED_URL
    assert "10.0.0.7" in error.message
    assert dialer.dialled == []


async def test_a_resolved_name_is_dialled_by_address_keeping_its_host_header() -> None:
    async with LocalServer({"/": page(b"intranet", "text/plain")}) as srv:
        resolver = ScriptedResolver(["127.0.0.1"])
        result = await fetch_with(f"http://app.internal:{srv.port}/", resolver=resolver)
    assert result.body == TextBody("intranet")
    assert srv.requests[0].headers["host"] == f"app.internal:{srv.port}"


async def test_an_allowed_name_opens_its_private_addresses() -> None:
    async with LocalServer({"/": page(b"ok", "text/plain")}) as srv:
        resolver = ScriptedResolver(["127.0.0.1"])
        result = await fetch_with(
            f"http://wiki.corp:{srv.port}/", allow="wiki.corp", resolver=resolver
        )
    assert result.status_code == 200


async def test_resolver_garbage_is_blocked() -> None:
    error = await fetch_error("http://odd.test/", resolver=ScriptedResolver(["not-an-ip"]))
    assert error.code == Code.WEB_BLOCKED_URL


async def test_dns_failure_is_a_provider_error() -> None:
    async def failing(host: str, port: int) -> Sequence[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    error = await fetch_error("http://nowhere.test/", resolver=failing)
    assert error.code == Code.WEB_PROVIDER_ERROR
    assert error.message == "DNS lookup for nowhere.test failed (Name or service not known)"
    assert error.provider == "http"


async def test_tls_keeps_the_original_name_for_sni_and_certificate() -> None:
    pytest.importorskip("cryptography")
    server_tls, client_tls = tls_contexts("secure.test")
    async with LocalServer({"/": page(b"over tls", "text/plain")}, tls=server_tls) as srv:
        resolver = ScriptedResolver(["127.0.0.1"])
        result = await fetch_with(
            f"https://secure.test:{srv.port}/", resolver=resolver, verify=client_tls
        )
    assert result.body == TextBody("over tls")
    assert srv.requests[0].headers["host"] == f"secure.test:{srv.port}"


async def test_untrusted_certificate_is_a_provider_error() -> None:
    pytest.importorskip("cryptography")
    server_tls, _ = tls_contexts("secure.test")
    async with LocalServer({"/": page(b"x", "text/plain")}, tls=server_tls) as srv:
        resolver = ScriptedResolver(["127.0.0.1"])
        error = await fetch_error(f"https://secure.test:{srv.port}/", resolver=resolver)
    assert error.code == Code.WEB_PROVIDER_ERROR
    assert "TLS handshake failed with secure.test" in error.message
    assert "certificate verify failed: self-signed certificate" in error.message


async def test_refused_connection_is_a_provider_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    error = await fetch_error(f"http://127.0.0.1:{port}/")
    assert error.code == Code.WEB_PROVIDER_ERROR
    assert error.message == f"http: could not connect to 127.0.0.1:{port} (Connection refused)"


async def test_a_refused_page_through_the_runtime_leaves_no_garbage_cycles() -> None:
    """A wave whose pages are all unreachable spent most of its CPU in full collections: each
    failure stayed reachable from the frames on its own traceback."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/"
        runtime = WebRuntime()
        fetcher = HttpFetchProvider(allow="127.0.0.1")
        runtime.register_fetch_provider(fetcher)
        runtime.own(fetcher)
        async with runtime:
            with pytest.raises(WebError):
                await runtime.fetch(FetchRequest(url))  # the pool and its first dial, warmed
            gc.collect()
            gc.disable()
            gc.set_debug(gc.DEBUG_SAVEALL)
            try:
                for _ in range(5):
                    with pytest.raises(WebError) as caught:
                        await runtime.fetch(FetchRequest(url))
                    assert caught.value.code == Code.WEB_PROVIDER_ERROR
                del caught
                gc.collect()
                left = [type(thing).__name__ for thing in gc.garbage]
            finally:
                gc.set_debug(0)
                gc.garbage.clear()
                gc.enable()
    assert left == []


# --- redirects --------------------------------------------------------------------------------


def redirect(location: str, status: int = 302, **options: Any) -> Any:
    return lambda ex: respond(ex, status, b"", {"Location": location}, **options)


def chain_routes(length: int) -> dict[str, Any]:
    routes: dict[str, Any] = {f"/hop/{n}": redirect(f"/hop/{n - 1}") for n in range(1, length + 1)}
    routes["/hop/0"] = page(b"<title>end</title>")
    return routes


async def test_same_origin_redirects_are_followed_up_to_five(provider: HttpFetchProvider) -> None:
    async with LocalServer(chain_routes(5)) as srv:
        result = await provider.fetch(FetchRequest(srv.url("/hop/5")))
    assert result.url == srv.url("/hop/0")
    assert result.body == HtmlBody("<title>end</title>")
    assert [r.target for r in srv.requests] == [f"/hop/{n}" for n in range(5, -1, -1)]


async def test_a_sixth_redirect_is_refused(provider: HttpFetchProvider) -> None:
    async with LocalServer(chain_routes(6)) as srv:
        with pytest.raises(WebError) as caught:
            await provider.fetch(FetchRequest(srv.url("/hop/6")))
    assert caught.value.code == Code.WEB_REDIRECT_BLOCKED
    assert "more than 5 times" in caught.value.message
    assert srv.url("/hop/0") in caught.value.message
    assert len(srv.requests) == 6


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_every_redirect_status_and_relative_locations(status: int) -> None:
    routes = {"/a/b": redirect("../c?x=1", status), "/c": page(b"c", "text/plain")}
    async with LocalServer(routes) as srv:
        result = await fetch_with(srv.url("/a/b"))
    assert result.url == srv.url("/c?x=1")
    assert result.body == TextBody("c")


@pytest.mark.parametrize(
    "target",
    [
        "http://localhost:{port}/secret",  # other host
        "https://127.0.0.1:{port}/secret",  # other scheme
        "http://127.0.0.1:1/secret",  # other port
        "http://169.254.169.254/latest/meta-data/",
        "https://example.com/",
    ],
)
async def test_cross_origin_redirects_are_blocked_with_the_target(target: str) -> None:
    async with LocalServer() as srv:
        location = target.format(port=srv.port)
        srv.routes["/"] = redirect(location)
        srv.routes["/secret"] = page(b"secret")
        error = await fetch_error(srv.url("/"), allow="127.0.0.1, localhost")
    assert error.code == Code.WEB_REDIRECT_BLOCKED
    assert location in error.message
    assert "new call" in error.message
    assert [r.target for r in srv.requests] == ["/"]


async def test_redirect_to_a_non_web_url_is_blocked(provider: HttpFetchProvider) -> None:
    async with LocalServer({"/": redirect("file:///etc/passwd")}) as srv:
        with pytest.raises(WebError) as caught:
            await provider.fetch(FetchRequest(srv.url("/")))
    assert caught.value.code == Code.WEB_REDIRECT_BLOCKED
    assert "file:///etc/passwd" in caught.value.message


async def test_each_hop_is_checked_again() -> None:
    """The second hop needs a new connection; its name now resolves to a blocked address (with
    a test dialer, every connection resolves anew)."""
    routes = {"/": redirect("/next", close=True), "/next": page(b"never")}
    async with LocalServer(routes) as srv:
        resolver = ScriptedResolver([PUBLIC_IP], ["10.0.0.7"])
        dialer = LoopbackDialer(srv.port)
        error = await fetch_error(
            f"http://hop.test:{srv.port}/", allow=(), resolver=resolver, dialer=dialer
        )
    assert error.code == Code.WEB_BLOCKED_URL
    assert "10.0.0.7" in error.message
    assert resolver.calls == ["hop.test", "hop.test"]
    assert [r.target for r in srv.requests] == ["/"]


async def test_a_redirect_without_location_is_data(provider: HttpFetchProvider) -> None:
    async with LocalServer({"/": lambda ex: respond(ex, 302, b"moved")}) as srv:
        result = await provider.fetch(FetchRequest(srv.url("/")))
    assert (result.status_code, result.body) == (302, TextBody("moved"))


# --- statuses, anonymity ------------------------------------------------------------------


@pytest.mark.parametrize("status", [404, 500, 410, 403])
async def test_http_error_statuses_are_data(status: int, provider: HttpFetchProvider) -> None:
    body = b"<h1>Oops</h1>"
    route = lambda ex: respond(ex, status, body, {"Content-Type": "text/html"})  # noqa: E731
    async with LocalServer({"/": route}) as srv:
        result = await provider.fetch(FetchRequest(srv.url("/")))
    assert result == FetchResult(srv.url("/"), status, HtmlBody("<h1>Oops</h1>"), False)


async def test_requests_are_anonymous(provider: HttpFetchProvider) -> None:
    cookie = {"Set-Cookie": "session=abc; Path=/", "Content-Type": "text/plain"}
    async with LocalServer({"/": lambda ex: respond(ex, 200, b"hi", cookie)}) as srv:
        await provider.fetch(FetchRequest(srv.url("/")))
        await provider.fetch(FetchRequest(srv.url("/")))
    second = srv.requests[1].headers
    assert "cookie" not in second
    assert "authorization" not in second
    assert second["user-agent"] == USER_AGENT
    assert second["accept-encoding"] == "gzip, deflate"


# --- limits -----------------------------------------------------------------------------------


def stream_forever(total: int, block: bytes = b"a" * 65536) -> Any:
    """A close-delimited body of ``total`` bytes, generated on the fly."""

    async def route(ex: Exchange) -> None:
        await ex.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n")
        for _ in range(total // len(block)):
            await ex.send(block)
        ex.keep_alive = False

    return route


def unsized(body: bytes, content_type: str) -> Any:
    """A close-delimited response: no Content-Length, so only reading finds the size."""

    async def route(ex: Exchange) -> None:
        head = f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n"
        await ex.send(head.encode() + body)
        ex.keep_alive = False

    return route


@pytest.mark.parametrize(
    ("max_chars", "kept"),
    [(2_000_000, 2_000_000), (20 * MiB, 10 * MiB)],  # the char cap, then the byte cap, binds
)
async def test_a_gigabyte_body_is_cut_at_the_cap(max_chars: int, kept: int) -> None:
    async with LocalServer({"/": stream_forever(1024 * MiB)}) as srv:
        result = await fetch_with(srv.url("/"), max_chars=max_chars)
    assert result.truncated is True
    assert result.body == TextBody("a" * kept)


async def test_a_declared_length_over_the_cap_is_refused_before_reading() -> None:
    async def route(ex: Exchange) -> None:
        await ex.send(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1073741824\r\n\r\n"
        )
        await ex.reader.read()  # send no body at all; wait for the client to hang up

    async with LocalServer({"/": route}) as srv:
        error = await fetch_error(srv.url("/"))
    assert error.code == Code.WEB_FETCH_TOO_LARGE
    assert "1073741824" in error.message


@pytest.mark.parametrize("max_bytes", [1 * MiB, 10 * MiB])
async def test_a_gzip_bomb_stops_at_the_decoded_cap(max_bytes: int) -> None:
    bomb = gzip_bomb(64 * MiB)
    headers = {"Content-Type": "text/plain", "Content-Encoding": "gzip"}
    async with LocalServer({"/": lambda ex: respond(ex, 200, bomb, headers)}) as srv:
        result = await fetch_with(srv.url("/"), max_bytes=max_bytes, max_chars=20 * MiB)
    assert len(bomb) < max_bytes
    assert result.truncated is True
    assert result.body == TextBody("a" * max_bytes)


async def test_nested_and_raw_deflate_encodings_are_undone() -> None:
    import zlib

    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    deflated = raw.compress(b"raw deflate") + raw.flush()
    twice = gzip_bomb(1 * MiB, b"z")
    double = zlib.compress(twice)  # gzip, then deflate on top
    routes = {
        "/raw": page(deflated, "text/plain", **{"Content-Encoding": "deflate"}),
        "/double": page(double, "text/plain", **{"Content-Encoding": "gzip, deflate"}),
        "/br": page(b"??", "text/plain", **{"Content-Encoding": "br"}),
    }
    async with LocalServer(routes) as srv:
        assert (await fetch_with(srv.url("/raw"))).body == TextBody("raw deflate")
        assert (await fetch_with(srv.url("/double"))).body == TextBody("z" * MiB)
        error = await fetch_error(srv.url("/br"))
    assert error.code == Code.WEB_UNSUPPORTED_CONTENT_TYPE
    assert "'br'" in error.message


async def test_corrupt_gzip_is_a_provider_error() -> None:
    route = page(b"\x1f\x8b\x08\x00garbage-garbage", "text/plain", **{"Content-Encoding": "gzip"})
    async with LocalServer({"/": route}) as srv:
        error = await fetch_error(srv.url("/"))
    assert error.code == Code.WEB_PROVIDER_ERROR


async def test_html_over_the_byte_cap_is_cut_between_characters() -> None:
    body = "<p>" + "é" * 1000  # two bytes each: a cut at an odd byte lands mid-character
    async with LocalServer({"/": unsized(body.encode(), "text/html; charset=utf-8")}) as srv:
        result = await fetch_with(srv.url("/"), max_bytes=1004)
    assert result.truncated is True
    assert result.body == HtmlBody("<p>" + "é" * 500)


async def test_characters_over_the_char_cap_are_cut() -> None:
    async with LocalServer({"/": page(b"x" * 5000, "text/plain")}) as srv:
        result = await fetch_with(srv.url("/"), max_chars=100, max_bytes=5000)
    assert (result.body, result.truncated) == (TextBody("x" * 100), True)


async def test_a_pdf_over_the_cap_is_too_large() -> None:
    pdf = make_pdf(["Long document"] * 20)
    routes = {"/sized": page(pdf, "application/pdf"), "/unsized": unsized(pdf, "application/pdf")}
    async with LocalServer(routes) as srv:
        for path in routes:
            error = await fetch_error(srv.url(path), max_bytes=len(pdf) // 2)
            assert error.code == Code.WEB_FETCH_TOO_LARGE, path


async def test_a_slow_drip_hits_the_total_timeout() -> None:
    async def drip(ex: Exchange) -> None:
        await ex.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n")
        for _ in range(100):
            await ex.send(b"x")
            await asyncio.sleep(1)

    async with LocalServer({"/": drip}) as srv:
        error = await fetch_error(srv.url("/"), timeout=0.3)
    assert error.code == Code.WEB_FETCH_TIMEOUT
    assert "0.3 s" in error.message


async def test_the_timeout_covers_all_redirect_hops_together() -> None:
    """Each hop is well inside the limit; only their sum is over it."""

    def slow_hop(n: int) -> Any:
        async def route(ex: Exchange) -> None:
            await asyncio.sleep(0.15)
            await respond(ex, 302, b"", {"Location": f"/slow/{n - 1}"})

        return route

    routes = {f"/slow/{n}": slow_hop(n) for n in range(1, 4)}
    routes["/slow/0"] = page(b"too late", "text/plain")
    async with LocalServer(routes) as srv:
        error = await fetch_error(srv.url("/slow/3"), timeout=0.3)
    assert error.code == Code.WEB_FETCH_TIMEOUT
    assert srv.url("/slow/3") in error.message


async def test_a_body_cut_short_by_the_server_is_a_provider_error() -> None:
    async def liar(ex: Exchange) -> None:
        await ex.send(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nab"
        )
        ex.keep_alive = False

    async with LocalServer({"/": liar}) as srv:
        error = await fetch_error(srv.url("/"))
    assert error.code == Code.WEB_PROVIDER_ERROR


async def test_cancellation_propagates_and_closes_the_connection() -> None:
    started = asyncio.Event()

    async def endless(ex: Exchange) -> None:
        await ex.send(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\nx"
        )
        started.set()
        await ex.reader.read()  # returns at EOF: the client closed the connection

    async with LocalServer({"/": endless}) as srv:
        fetcher = HttpFetchProvider(allow="127.0.0.1")
        task = asyncio.create_task(fetcher.fetch(FetchRequest(srv.url("/"))))
        await asyncio.wait_for(started.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(srv.disconnected.wait(), 10)
        await fetcher.aclose()
    assert srv.connections == 1


# --- content types and sniffing -------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
PDF = make_pdf(["Hello from page one", "And page two (with parentheses)"])
HTML = b"<!DOCTYPE html><html><head><title>t</title></head><body>hi</body></html>"


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        ("text/html; charset=utf-8", HTML, HtmlBody(HTML.decode())),
        ("application/xhtml+xml", b"<html>x</html>", HtmlBody("<html>x</html>")),
        ("text/plain", b"plain", TextBody("plain")),
        ("text/markdown", b"# md", TextBody("# md")),
        ("text/csv", b"a,b\n1,2", TextBody("a,b\n1,2")),
        ("application/json", b'{"a": 1}', TextBody('{"a": 1}')),
        ("application/ld+json", b"{}", TextBody("{}")),
        ("application/xml", b"<a/>", TextBody("<a/>")),
        ("application/atom+xml", b"<feed/>", TextBody("<feed/>")),
        (
            "image/svg+xml",
            b"<svg><text>label</text></svg>",
            TextBody("<svg><text>label</text></svg>"),
        ),
        ("TEXT/HTML; Charset=UTF-8", b"<p>caps</p>", HtmlBody("<p>caps</p>")),
        # missing or unusable types are sniffed
        (None, HTML, HtmlBody(HTML.decode())),
        (None, b"  <p>para</p>", HtmlBody("  <p>para</p>")),
        (None, b"just words", TextBody("just words")),
        ("nonsense", b"<html><body>x</body></html>", HtmlBody("<html><body>x</body></html>")),
        ("*/*", b"{}", TextBody("{}")),
        ("text/plain", b"A file starts with %PDF-1.7", TextBody("A file starts with %PDF-1.7")),
        # wrong types are corrected by the first bytes
        ("text/plain", PDF, "pdf"),
        ("text/html", PDF, "pdf"),
        ("application/octet-stream", PDF, "pdf"),
        (None, PDF, "pdf"),
        (
            "application/pdf",
            b"<html><body>login</body></html>",
            HtmlBody("<html><body>login</body></html>"),
        ),
        # empty bodies
        ("text/html", b"", HtmlBody("")),
        (None, b"", TextBody("")),
    ],
)
async def test_content_kinds(content_type: str | None, body: bytes, expected: Any) -> None:
    async with LocalServer({"/": page(body, content_type)}) as srv:
        result = await fetch_with(srv.url("/"))
    if expected == "pdf":
        assert isinstance(result.body, PdfBody)
        assert result.body.page_count == 2
    else:
        assert result.body == expected


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("image/png", PNG),
        ("audio/mpeg", b"ID3\x03\x00"),
        ("video/mp4", b"\x00\x00\x00\x18ftypmp42"),
        ("application/zip", b"PK\x03\x04"),
        ("application/gzip", b"\x1f\x8b\x08\x00"),
        ("application/x-tar", b"x" * 600),
        ("application/octet-stream", b"\x00\x01\x02\x03"),
        ("application/octet-stream", b"plain text declared opaque"),
        ("font/woff2", b"wOF2"),
        (None, PNG),
        (None, b"\x7fELF\x02\x01\x01\x00"),
        ("text/html", PNG),
        ("text/plain", b"\x00\x00\x00\x01binary"),
    ],
)
async def test_unreadable_content_is_unsupported(content_type: str | None, body: bytes) -> None:
    async with LocalServer({"/": page(body, content_type)}) as srv:
        error = await fetch_error(srv.url("/"))
    assert error.code == Code.WEB_UNSUPPORTED_CONTENT_TYPE
    assert "HTML, text, JSON, XML and PDF" in error.message


async def test_a_declared_image_is_refused_without_reading_its_body() -> None:
    async def endless_image(ex: Exchange) -> None:
        await ex.send(b"HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\nConnection: close\r\n\r\n")
        while True:
            await ex.send(b"\xff" * 65536)

    async with LocalServer({"/": endless_image}) as srv:
        error = await fetch_error(srv.url("/"))
    assert error.code == Code.WEB_UNSUPPORTED_CONTENT_TYPE
    assert "image/jpeg" in error.message


def test_the_decoder_inflates_in_bounded_slices() -> None:
    decoder = BodyDecoder("gzip")
    sizes = [len(piece) for piece in decoder.feed(gzip_bomb(64 * MiB)[:65536])]
    assert max(sizes) <= SLICE
    assert sum(sizes) > 32 * MiB  # one network chunk of the bomb, inflated slice by slice


# --- charsets -----------------------------------------------------------------------------

FRENCH = (
    "Le cœur a ses raisons que la raison ne connaît point. Ça m'étonne, naïve élève, "
    "où est passé l'été ? Déjà la fenêtre s'ouvre sur la forêt près du château."
)
RUSSIAN = "Привет, как дела? Это тестовая страница на русском языке."
EQUIV = '<meta http-equiv="Content-Type" content="text/html; charset=shift_jis">'
JAPANESE = "日本語のページです。東京は晴れ、気温は二十度でした。ありがとうございます。"


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        ("text/plain; charset=iso-8859-1", "café naïve".encode("latin-1"), "café naïve"),
        ("text/plain; charset=ISO-8859-1", b"\x93quoted\x94", "\u201cquoted\u201d"),
        ("text/plain", FRENCH.replace("œ", "oe").encode("latin-1"), FRENCH.replace("œ", "oe")),
        (
            "text/html",
            f'<html><head><meta charset="Shift_JIS"></head><body>{JAPANESE}</body></html>'.encode(
                "shift_jis"
            ),
            f'<html><head><meta charset="Shift_JIS"></head><body>{JAPANESE}</body></html>',
        ),
        (
            "text/html",
            f"{EQUIV}<body>{JAPANESE}</body>".encode("shift_jis"),
            f"{EQUIV}<body>{JAPANESE}</body>",
        ),
        ("text/plain", JAPANESE.encode("shift_jis") * 4, JAPANESE * 4),
        ("text/plain", RUSSIAN.encode("cp1251"), RUSSIAN),
        ("text/html", b"\xef\xbb\xbf<p>\xc3\xa9t\xc3\xa9</p>", "<p>été</p>"),
        (None, b"\xef\xbb\xbfBOM and no type \xe2\x9c\x93", "BOM and no type ✓"),
        ("text/plain", "utf-16 ✓".encode("utf-16"), "utf-16 ✓"),
        ("text/plain; charset=utf-16le", "wide".encode("utf-16-le"), "wide"),
        ("application/xml", b'<?xml version="1.0" encoding="ISO-8859-1"?><a>\xe9</a>', None),
        ("text/plain; charset=utf-8", b"ok \xff\xfe broken", "ok \ufffd\ufffd broken"),
        ("text/plain; charset=x-bogus", b"caf\xc3\xa9", "café"),
        ("text/html; charset=utf-8", b'<meta charset="latin-1"><p>\xc3\xa9', None),
    ],
)
async def test_charsets(content_type: str | None, body: bytes, expected: str | None) -> None:
    async with LocalServer({"/": page(body, content_type)}) as srv:
        result = await fetch_with(srv.url("/"))
    assert isinstance(result.body, HtmlBody | TextBody)
    if expected is None:  # declared in the document (XML) or overruled by the header (meta)
        assert "é" in result.body.content
    else:
        assert result.body.content == expected


# --- PDF ------------------------------------------------------------------------------------


async def test_pdf_text_by_page(provider: HttpFetchProvider) -> None:
    async with LocalServer({"/doc.pdf": page(PDF, "application/pdf")}) as srv:
        result = await provider.fetch(FetchRequest(srv.url("/doc.pdf")))
    assert result.body == PdfBody(
        "Hello from page one\fAnd page two (with parentheses)", page_count=2
    )
    assert result.truncated is False


async def test_pdf_text_is_cut_at_the_char_cap() -> None:
    pdf = make_pdf([f"Page {n} " + "word " * 50 for n in range(10)])
    async with LocalServer({"/": page(pdf, "application/pdf")}) as srv:
        result = await fetch_with(srv.url("/"), max_chars=300)
    assert isinstance(result.body, PdfBody)
    assert len(result.body.content) == 300
    assert result.body.page_count == 10
    assert result.truncated is True


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (make_pdf([], blank_pages=2), "no text layer"),
        (b"%PDF-1.7\n1 0 obj garbage", "could not be opened"),
    ],
)
async def test_unreadable_pdfs(body: bytes, reason: str) -> None:
    async with LocalServer({"/": page(body, "application/pdf")}) as srv:
        error = await fetch_error(srv.url("/"))
    assert error.code == Code.WEB_UNSUPPORTED_CONTENT_TYPE
    assert reason in error.message


async def test_concurrent_pdfs_are_extracted_safely(provider: HttpFetchProvider) -> None:
    async with LocalServer({"/": page(PDF, "application/pdf")}) as srv:
        results = await asyncio.gather(
            *(provider.fetch(FetchRequest(srv.url("/"))) for _ in range(8))
        )
    assert {r.body for r in results} == {results[0].body}
    assert isinstance(results[0].body, PdfBody)


# --- memory ---------------------------------------------------------------------------------

_MEMORY_PROBE = """
import asyncio, resource, sys
sys.path.insert(0, sys.argv[1])
from _servers import LocalServer, gzip_bomb, respond
from webreach.providers.fetch.http import HttpFetchProvider
from webreach.seam import FetchRequest

async def gigabyte(ex):
    await ex.send(b"HTTP/1.1 200 OK\\r\\nConnection: close\\r\\n")
    await ex.send(b"Content-Type: text/plain\\r\\n\\r\\n")
    for _ in range(16384):
        await ex.send(b"a" * 65536)

async def main():
    bomb = gzip_bomb(256 * 1024 * 1024)
    headers = {"Content-Type": "text/plain", "Content-Encoding": "gzip"}
    routes = {"/gib": gigabyte, "/bomb": lambda ex: respond(ex, 200, bomb, headers)}
    async with LocalServer(routes) as srv:
        fetcher = HttpFetchProvider(allow="127.0.0.1")
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for path in routes:
            result = await fetcher.fetch(FetchRequest(srv.url(path)))
            assert result.truncated
        await fetcher.aclose()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)

asyncio.run(main())
"""


@pytest.mark.slow
def test_memory_stays_bounded_by_the_caps_for_a_gigabyte() -> None:
    """A streamed 1 GiB body and a gzip bomb inflating to 256 MiB, with the default caps
    (10 MiB, 2,000,000 characters): the peak RSS grows by a few caps, not by the body."""
    probe = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE, str(TESTS)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    growth_mib = int(probe.stdout.strip()) / 1024  # ru_maxrss is in KiB on Linux
    assert growth_mib < 100, probe.stdout
