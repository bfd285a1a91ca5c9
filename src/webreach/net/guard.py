"""The private-network (SSRF) guard: which addresses and URLs a fetch may reach.

Everything here is pure (no I/O) so it can be tested exhaustively. The CIDR lists are explicit
because ``ipaddress.is_global``/``is_private`` change between Python versions and misjudge
multicast and 100.64.0.0/10.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import urllib.parse
from collections.abc import Sequence
from typing import TYPE_CHECKING

import httpx2

from ..seam import MAX_URL_LENGTH, WebError, WebErrorCode
from .addresses import HOST_NAME, IPAddress, canonical_ip, normalise_host, parse_ip_literal

if TYPE_CHECKING:
    from .allow import AllowList

__all__ = [
    "MAX_URL_LENGTH",
    "address_allowed",
    "blocked_error",
    "check_host",
    "check_url",
    "is_loopback_name",
    "is_public_address",
]

_V4_BLOCKED = tuple(
    ipaddress.IPv4Network(cidr)
    for cidr in (
        "0.0.0.0/8",  # "this network", unspecified
        "10.0.0.0/8",  # RFC 1918
        "100.64.0.0/10",  # shared address space (carrier-grade NAT)
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local, cloud metadata 169.254.169.254
        "172.16.0.0/12",  # RFC 1918
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # documentation TEST-NET-1
        "192.88.99.0/24",  # deprecated 6to4 relay anycast
        "192.168.0.0/16",  # RFC 1918
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation TEST-NET-2
        "203.0.113.0/24",  # documentation TEST-NET-3
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved
        "255.255.255.255/32",  # limited broadcast
    )
)

_V6_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_V6_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_V6_BLOCKED = tuple(
    ipaddress.IPv6Network(cidr)
    for cidr in (
        "::/96",  # unspecified, loopback and IPv4-compatible (deprecated)
        "::ffff:0:0:0/96",  # IPv4-translated
        "64:ff9b::/96",  # NAT64 well-known prefix
        "64:ff9b:1::/48",  # NAT64 local-use
        "100::/64",  # discard-only
        "2001::/23",  # IETF assignments: Teredo 2001::/32, benchmarking 2001:2::/48, ORCHID
        "2001:db8::/32",  # documentation
        "2002::/16",  # 6to4
        "3fff::/20",  # documentation
        "5f00::/16",  # SRv6 SIDs
        "fc00::/7",  # unique local, including fd00:ec2::254 (cloud metadata)
        "fe80::/10",  # link-local
        "fec0::/10",  # site-local (deprecated)
        "ff00::/8",  # multicast
    )
)


@functools.lru_cache(maxsize=4096)
def _is_public(address: IPAddress) -> bool:
    """Kept per address: a wave of page reads asks it of the same few hosts' addresses."""
    if isinstance(address, ipaddress.IPv4Address):
        return not any(address in net for net in _V4_BLOCKED)
    if address in _V6_MAPPED:
        mapped = address.ipv4_mapped
        return mapped is not None and _is_public(mapped)
    if any(address in net for net in _V6_BLOCKED):
        return False
    # Outside 2000::/3 everything is reserved by the IETF; nothing there is a public host.
    return address in _V6_GLOBAL_UNICAST


def is_public_address(address: str) -> bool:
    """True only when ``address`` (an IP literal) may be connected to without an allow list.

    Anything that is not an IP literal is not public.
    """
    parsed = parse_ip_literal(address)
    return parsed is not None and _is_public(parsed)


def _invalid(message: str) -> WebError:
    return WebError(WebErrorCode.WEB_INVALID_URL, message)


def _parse(url: str) -> httpx2.URL:
    try:
        return httpx2.URL(url)
    except httpx2.InvalidURL as error:
        # httpx2 refuses some numeric spellings the resolver accepts (0177.0.0.1); canonicalise.
        try:
            parts = urllib.parse.urlsplit(url)
            literal = parse_ip_literal(parts.hostname or "")
            port = parts.port
        except ValueError:
            literal = None
        if literal is None or parts.username is not None or parts.password is not None:
            raise _invalid(f"malformed URL: {error}") from None
        netloc = canonical_ip(literal) if literal.version == 4 else f"[{literal}]"
        netloc += f":{port}" if port is not None else ""
        return httpx2.URL(urllib.parse.urlunsplit(parts._replace(netloc=netloc)))


_HOST_AND_PORT = re.compile(r"[A-Za-z0-9.-]+:\d+(?:[/?#].*)?", re.DOTALL)
"""``localhost:8080/x``, which parses as the scheme ``localhost``: a host and port, no scheme."""


def check_url(url: str) -> httpx2.URL:
    """Parse and vet ``url`` before any I/O; raise ``WEB_INVALID_URL`` naming what is wrong.

    IPv4 literals are canonicalised (``0x7f.1`` becomes ``127.0.0.1``), as browsers do, so every
    later check sees the address the URL means.
    """
    if len(url) > MAX_URL_LENGTH:
        raise _invalid(f"URL is {len(url)} characters long; the limit is {MAX_URL_LENGTH}")
    if not url.strip():
        raise _invalid("URL is empty")
    parsed = _parse(url.strip())
    given = url.strip()
    if not parsed.scheme or _HOST_AND_PORT.fullmatch(given):
        hint = f"; did you mean 'https://{given}'?" if given[:1].isalnum() else ""
        raise _invalid(f"URL has no scheme: write it with http:// or https://{hint}")
    if parsed.scheme not in ("http", "https"):
        raise _invalid(f"URL scheme {parsed.scheme!r} is not supported; use http or https")
    if parsed.userinfo:
        raise _invalid("URL carries credentials (user:password@); they are never sent")
    if not parsed.host:
        raise _invalid("URL has no host")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise _invalid(f"URL port {parsed.port} is out of range")
    literal = parse_ip_literal(parsed.host)
    if literal is None and not HOST_NAME.fullmatch(parsed.raw_host.decode("ascii")):
        raise _invalid(f"URL host {parsed.host!r} is not a valid host name")
    if literal is not None and literal.version == 4 and parsed.host != str(literal):
        parsed = parsed.copy_with(host=str(literal))
    return parsed


def blocked_error(
    host: str, addresses: Sequence[str], allow: AllowList | None = None, port: int | None = None
) -> WebError:
    """The ``WEB_BLOCKED_URL`` error for ``host`` whose ``addresses`` are not public; when the
    allow list opens it on other ports than ``port``, the message says so."""
    named = parse_ip_literal(host) is None
    via = f" (resolves to {', '.join(addresses)})" if named else ""
    opened = allow.ports_of(host, addresses) if allow is not None and port is not None else []
    if opened:
        listed = ", ".join(map(str, opened))
        hint = f"WEBREACH_FETCH_ALLOW opens it on port {listed} only, not on {port}"
    else:
        hint = "add it to WEBREACH_FETCH_ALLOW to open it on purpose"
    return WebError(
        WebErrorCode.WEB_BLOCKED_URL,
        f"{host}{via} is a private, local or reserved address; fetching it is blocked ({hint})",
    )


def address_allowed(
    host: str, address: IPAddress, allow: AllowList, port: int | None = None
) -> bool:
    """Whether ``address`` (reached through ``host``, on ``port`` when known) may be dialled."""
    return (
        _is_public(address) or allow.allows_host(host, port) or allow.allows_address(address, port)
    )


_LOOPBACK = (
    ipaddress.IPv4Network("127.0.0.0/8"),
    ipaddress.IPv6Network("::1/128"),
    ipaddress.IPv6Network("::ffff:127.0.0.0/104"),
)


def is_loopback_name(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a subdomain of it, names for this machine (RFC 6761)."""
    name = normalise_host(host)
    return name == "localhost" or name.endswith(".localhost")


def _opens_loopback(allow: AllowList, port: int | None) -> bool:
    networks = [*allow.networks, *(net for net, p in allow.network_ports if p == port)]
    return any(
        net.version == loopback.version and net.overlaps(loopback)
        for net in networks
        for loopback in _LOOPBACK
    )


def check_host(host: str, allow: AllowList, port: int | None = None) -> None:
    """Refuse, with no I/O, a host the guard refuses whatever DNS answers.

    That is an IP literal for a blocked address, or a loopback name (``localhost``,
    ``*.localhost``) unless the allow list names it or opens a loopback address (on ``port``,
    for an entry with a port). Other names are judged later, when they are resolved (see
    :mod:`webreach.net.pinning`).
    """
    literal = parse_ip_literal(host)
    if literal is not None:
        if not address_allowed(host, literal, allow, port):
            raise blocked_error(host.strip("[]"), [canonical_ip(literal)], allow, port)
        return
    if (
        is_loopback_name(host)
        and not allow.allows_host(host, port)
        and not _opens_loopback(allow, port)
    ):
        opened = ", ".join(map(str, allow.ports_of(host, [])))
        hint = (
            f"WEBREACH_FETCH_ALLOW opens it on port {opened} only, not on {port}"
            if opened and port is not None
            else "add it to WEBREACH_FETCH_ALLOW to open it on purpose"
        )
        raise WebError(
            WebErrorCode.WEB_BLOCKED_URL,
            f"{normalise_host(host)} names this machine (loopback); fetching it is blocked "
            f"({hint})",
        )
