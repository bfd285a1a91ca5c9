"""The private-network guard: the address table, URL checks, literal spellings, the allow list."""

from __future__ import annotations

import re

import pytest

from _servers import LocalServer, respond
from webreach.net.allow import AllowList
from webreach.net.guard import check_host, check_url, is_public_address
from webreach.providers.fetch.http import HttpFetchProvider
from webreach.seam import FetchRequest, WebError, WebErrorCode

BLOCKED = [
    # IPv4: "this network", unspecified
    "0.0.0.0",
    "0.255.255.255",
    # RFC 1918
    "10.0.0.0",
    "10.255.255.255",
    "172.16.0.0",
    "172.31.255.255",
    "192.168.0.0",
    "192.168.255.255",
    # shared address space
    "100.64.0.0",
    "100.127.255.255",
    # loopback
    "127.0.0.1",
    "127.255.255.254",
    # link-local and cloud metadata
    "169.254.0.1",
    "169.254.169.254",
    "169.254.255.255",
    # IETF protocol assignments, documentation, 6to4 relay
    "192.0.0.0",
    "192.0.0.255",
    "192.0.2.1",
    "198.51.100.7",
    "203.0.113.255",
    "192.88.99.1",
    # benchmarking
    "198.18.0.0",
    "198.19.255.255",
    # multicast, reserved, broadcast
    "224.0.0.1",
    "239.255.255.255",
    "240.0.0.1",
    "255.255.255.254",
    "255.255.255.255",
    # IPv6 unspecified, loopback, IPv4-compatible
    "::",
    "::1",
    "::127.0.0.1",
    "::8.8.8.8",
    "::ffff:0:8.8.8.8",
    # IPv4-mapped judged by the IPv4 inside
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:0.0.0.0",
    # NAT64, discard, Teredo, benchmarking, documentation, 6to4
    "64:ff9b::808:808",
    "64:ff9b::127.0.0.1",
    "64:ff9b:1::1",
    "100::1",
    "100::ffff:ffff:ffff:ffff",
    "2001::1",
    "2001:0:ffff::1",
    "2001:2::1",
    "2001:1ff:ffff::1",  # the top of 2001::/23
    "2001:db8::1",
    "2001:db8:ffff::1",
    "2002::1",
    "2002:7f00:1::1",
    "2002:ffff::1",
    "3fff::1",
    "3fff:fff::1",
    # unique local (with cloud metadata fd00:ec2::254), link-local, site-local, multicast
    "fc00::1",
    "fd00:ec2::254",
    "fdff:ffff::1",
    "fe80::1",
    "febf:ffff::1",
    "fe80::1%eth0",
    "fec0::1",
    "feff::1",
    "ff00::1",
    "ff02::1",
    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
    # outside 2000::/3: reserved
    "4000::1",
    "1::1",
    # bracketed and non-canonical spellings
    "[::1]",
    "[::ffff:127.0.0.1]",
    "2130706433",
    "0x7f.1",
    "0177.0.0.1",
    "127.1",
    "0x7f000001",
    "017700000001",
    "0",
    "10.1",
    "127.0.0.1.",
]

PUBLIC = [
    "8.8.8.8",
    "1.1.1.1",
    "9.9.9.9",
    "93.184.215.14",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "[2606:4700:4700::1111]",
    "::ffff:8.8.8.8",
    "134744072",  # 8.8.8.8 spelled as one number
    # just outside each IPv4 range
    "1.0.0.0",
    "9.255.255.255",
    "11.0.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "126.255.255.255",
    "128.0.0.0",
    "169.253.255.255",
    "169.255.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "191.255.255.255",
    "192.0.1.0",
    "192.0.3.0",
    "192.88.98.255",
    "192.88.100.0",
    "192.167.255.255",
    "192.169.0.0",
    "198.17.255.255",
    "198.20.0.0",
    "198.51.99.255",
    "198.51.101.0",
    "203.0.112.255",
    "203.0.114.0",
    "223.255.255.255",
    # just outside each IPv6 range
    "2001:200::1",
    "2001:db7:ffff::1",
    "2001:db9::1",
    "2003::1",
    "3ffe:ffff::1",
    "3fff:1000::1",
]


@pytest.mark.parametrize("address", BLOCKED)
def test_blocked_addresses(address: str) -> None:
    assert is_public_address(address) is False


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses(address: str) -> None:
    assert is_public_address(address) is True


@pytest.mark.parametrize(
    "text", ["", "example.com", "localhost", "1.2.3.4.5", "::g", "[::1", "08.1"]
)
def test_non_literals_are_not_public(text: str) -> None:
    assert is_public_address(text) is False


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("ftp://example.com/", "scheme 'ftp'"),
        ("file:///etc/passwd", "scheme 'file'"),
        ("javascript:alert(1)", "scheme 'javascript'"),
        (
            "example.com/path",
            "URL has no scheme: write it with http:// or https://; did you mean 'https://example.com/path'?",
        ),
        ("notaurl", "did you mean 'https://notaurl'?"),
        ("localhost:8080/x", "did you mean 'https://localhost:8080/x'?"),
        ("/relative/path", "URL has no scheme"),
        ("http://user:secret@example.com/", "credentials"),
        ("http://user@example.com/", "credentials"),
        ("http:///path", "no host"),
        ("http://exa mple.com/", "not a valid host name"),
        ("http://a<b.com/", "not a valid host name"),
        ("http://a..b/", "not a valid host name"),
        ("http://example.com:99999/", "port 99999 is out of range"),
        ("http://example.com:0/", "port 0 is out of range"),
        ("", "empty"),
        ("http://example.com/" + "a" * 2030, "2049 characters"),
    ],
)
def test_invalid_urls(url: str, fragment: str) -> None:
    with pytest.raises(WebError) as caught:
        check_url(url)
    assert caught.value.code == WebErrorCode.WEB_INVALID_URL
    assert fragment in caught.value.message
    assert "secret" not in str(caught.value)


def test_url_of_exactly_the_limit_is_accepted() -> None:
    url = "http://example.com/" + "a" * (2048 - len("http://example.com/"))
    assert str(check_url(url)) == url


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("http://2130706433/", "http://127.0.0.1/"),
        ("http://0x7f.1/", "http://127.0.0.1/"),
        ("http://0177.0.0.1:8080/x", "http://127.0.0.1:8080/x"),
        ("http://127.1/", "http://127.0.0.1/"),
        ("https://134744072/", "https://8.8.8.8/"),
        ("http://[::ffff:127.0.0.1]/", "http://[::ffff:127.0.0.1]/"),
        ("HTTP://Example.COM/a", "http://example.com/a"),
        ("http://bücher.example/", "http://xn--bcher-kva.example/"),
    ],
)
def test_check_url_canonicalises_numeric_hosts(url: str, canonical: str) -> None:
    assert str(check_url(url)) == canonical


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "[::1]", "::ffff:127.0.0.1", "10.1", "169.254.169.254", "0x7f.1"]
)
def test_check_host_refuses_private_literals(host: str) -> None:
    with pytest.raises(WebError) as caught:
        check_host(host, AllowList())
    assert caught.value.code == WebErrorCode.WEB_BLOCKED_URL
    assert "WEBREACH_FETCH_ALLOW" in caught.value.message


def test_check_host_leaves_names_and_public_literals_to_later() -> None:
    check_host("example.com", AllowList())
    check_host("8.8.8.8", AllowList())
    check_host("[2606:4700:4700::1111]", AllowList())


SPELLINGS = [
    "127.0.0.1",
    "2130706433",
    "0x7f.1",
    "0x7f000001",
    "0177.0.0.1",
    "0177.0.0.01",
    "127.1",
    "127.0.1",
    "127.0.0.1.",
    "localhost",
    "LOCALHOST",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[::1]",
    "[::]",
    "0.0.0.0",
    "0",
]


@pytest.mark.parametrize("host", SPELLINGS)
async def test_every_loopback_spelling_is_refused_before_connecting(host: str) -> None:
    async with LocalServer({"/": lambda ex: respond(ex, 200, b"secret")}) as server:
        provider = HttpFetchProvider()
        try:
            with pytest.raises(WebError) as caught:
                await provider.fetch(FetchRequest(f"http://{host}:{server.port}/"))
        finally:
            await provider.aclose()
        assert caught.value.code == WebErrorCode.WEB_BLOCKED_URL, caught.value
        assert caught.value.provider == "http"
        assert server.connections == 0


async def test_metadata_address_is_refused_without_io() -> None:
    provider = HttpFetchProvider()
    try:
        for url in (
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00:ec2::254]/latest/meta-data/",
            "http://[::ffff:169.254.169.254]/",
        ):
            with pytest.raises(WebError) as caught:
                await provider.fetch(FetchRequest(url))
            assert caught.value.code == WebErrorCode.WEB_BLOCKED_URL
    finally:
        await provider.aclose()


def test_allow_list_parsing() -> None:
    allow = AllowList.parse(" host.example, 10.0.0.0/8, 127.0.0.1 ,, *.corp.example, fd00::/8, ::1")
    assert allow.hosts == frozenset({"host.example"})
    assert allow.suffixes == (".corp.example",)
    assert [str(n) for n in allow.networks] == ["10.0.0.0/8", "127.0.0.1/32", "fd00::/8", "::1/128"]
    assert allow.allows_host("HOST.example.")
    assert allow.allows_host("a.b.corp.example")
    assert not allow.allows_host("corp.example.evil")
    assert not allow.allows_host("other.example")


def test_allow_list_addresses() -> None:
    from ipaddress import ip_address

    allow = AllowList.parse(["10.0.0.0/8", "127.0.0.1", "fd00::/8"])
    assert allow.allows_address(ip_address("10.9.8.7"))
    assert allow.allows_address(ip_address("127.0.0.1"))
    assert allow.allows_address(ip_address("::ffff:127.0.0.1"))
    assert allow.allows_address(ip_address("fd00:ec2::254"))
    assert not allow.allows_address(ip_address("127.0.0.2"))
    assert not allow.allows_address(ip_address("192.168.1.1"))


@pytest.mark.parametrize("empty", ["", " , ", (), None])
def test_empty_allow_list(empty: str | tuple[str, ...] | None) -> None:
    assert not AllowList.parse(empty)


def test_allow_list_rejects_bad_cidr() -> None:
    with pytest.raises(ValueError, match="not a CIDR"):
        AllowList.parse("10.0.0.0/33")


async def test_allow_list_opens_a_named_destination() -> None:
    async with LocalServer({"/": lambda ex: respond(ex, 200, b"ok")}) as server:
        for allow in ("127.0.0.1", "127.0.0.0/8", "localhost"):
            provider = HttpFetchProvider(allow=allow)
            try:
                host = "localhost" if allow == "localhost" else "127.0.0.1"
                result = await provider.fetch(FetchRequest(server.url("/", host)))
            finally:
                await provider.aclose()
            assert result.status_code == 200
        provider = HttpFetchProvider(allow="127.0.0.2, 10.0.0.0/8")
        try:
            with pytest.raises(WebError) as caught:
                await provider.fetch(FetchRequest(server.url("/")))
        finally:
            await provider.aclose()
        assert caught.value.code == WebErrorCode.WEB_BLOCKED_URL
        assert server.connections == 3


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("http://127.0.0.1", "is a URL, not a host; write '127.0.0.1' alone"),
        ("https://intranet.example/wiki", "is a URL, not a host; write 'intranet.example' alone"),
        ("10.0.0.0/33", "is not a CIDR network"),
        ("10.0.0.0/8:80", "is not a CIDR network"),
        ("not a host!!", "is not a host name, IP address, CIDR network or host:port"),
        ("exa mple.com", "is not a host name"),
        ("localhost:0", "a port is 1 to 65535"),
        ("localhost:99999", "a port is 1 to 65535"),
        ("localhost:http", "a port is 1 to 65535"),
        ("*.", "is not a host name"),
    ],
)
def test_allow_list_rejects_what_is_not_a_destination(entry: str, problem: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(repr(entry)) + ".*" + re.escape(problem)):
        AllowList.parse(f"example.com, {entry}")


def test_allow_list_entries_with_a_port_open_that_port_only() -> None:
    from ipaddress import ip_address

    allow = AllowList.parse("localhost:8080, 127.0.0.1:8765, [::1]:9000, *.corp.example:8443")
    assert allow.hosts == frozenset() and allow.networks == ()
    assert allow.allows_host("localhost", 8080)
    assert not allow.allows_host("localhost", 8081)
    assert not allow.allows_host("localhost")
    assert allow.allows_host("wiki.corp.example", 8443)
    assert not allow.allows_host("wiki.corp.example", 443)
    assert allow.allows_address(ip_address("127.0.0.1"), 8765)
    assert allow.allows_address(ip_address("::ffff:127.0.0.1"), 8765)
    assert not allow.allows_address(ip_address("127.0.0.1"), 80)
    assert allow.allows_address(ip_address("::1"), 9000)
    assert allow.entries() == [
        "*.corp.example:8443",
        "127.0.0.1:8765",
        "[::1]:9000",
        "localhost:8080",
    ]
    check_host("localhost", allow, 8080)
    check_host("127.0.0.1", allow, 8765)
    for host, port, opened in (
        ("localhost", 80, 8080),
        ("127.0.0.1", 8080, 8765),
        ("[::1]", 1, 9000),
    ):
        with pytest.raises(WebError) as caught:
            check_host(host, allow, port)
        assert caught.value.code == WebErrorCode.WEB_BLOCKED_URL
        assert f"WEBREACH_FETCH_ALLOW opens it on port {opened} only, not on {port}" in (
            caught.value.message
        )
    with pytest.raises(WebError, match="add it to WEBREACH_FETCH_ALLOW"):
        check_host("10.1.2.3", allow, 8080)
    assert allow.ports_of("mylocalhost", []) == []


async def test_an_allowed_port_reaches_its_service_and_no_other() -> None:
    ok = {"/": lambda ex: respond(ex, 200, b"ok")}
    async with LocalServer(dict(ok)) as opened, LocalServer(dict(ok)) as other:
        for entry in (f"127.0.0.1:{opened.port}", f"localhost:{opened.port}"):
            provider = HttpFetchProvider(allow=entry)
            try:
                host = entry.split(":")[0]
                assert (
                    await provider.fetch(FetchRequest(opened.url("/", host)))
                ).status_code == 200
                with pytest.raises(WebError) as caught:
                    await provider.fetch(FetchRequest(other.url("/", host)))
                assert caught.value.code == WebErrorCode.WEB_BLOCKED_URL
            finally:
                await provider.aclose()
        assert other.connections == 0
        assert opened.connections == 2


async def test_the_cache_scope_follows_the_ports_of_the_allow_list() -> None:
    providers = [
        HttpFetchProvider(allow=allow)
        for allow in ("127.0.0.1:8080", " 127.0.0.1:8080 ", "127.0.0.1:8081", "127.0.0.1")
    ]
    one, same, other, every_port = (provider.cache_scope() for provider in providers)
    for provider in providers:
        await provider.aclose()
    assert one == same
    assert len({one, other, every_port}) == 3
