"""Reading hosts and IP addresses as the platform's resolver reads them: the one parser the
guard and the allow list share, so both judge the same spelling the same way.

Pure (no I/O).
"""

from __future__ import annotations

import functools
import ipaddress
import re
import socket

__all__ = [
    "HOST_NAME",
    "IPAddress",
    "IPNetwork",
    "canonical_ip",
    "normalise_host",
    "parse_ip_literal",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Spellings ``inet_aton`` accepts: decimal, octal and hex parts, 1 to 4 of them (127.1, 0x7f.1).
_NUMERIC_V4 = re.compile(r"[0-9a-fA-FxX]+(\.[0-9a-fA-FxX]+){0,3}")

_KEPT_HOST_CHARS = 64
"""Longer than any IP literal with brackets and a zone id: a longer host is never kept."""

HOST_NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?")
"""What remains of a host name once httpx has lower-cased and IDNA-encoded it."""


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address an IP literal means, in any spelling the platform resolver accepts; else None.

    Accepts bracketed IPv6, zone ids, a trailing root dot, and the BSD forms of IPv4
    (``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``127.1``). The answer is kept per host string
    of a literal's length, as every fetch asks it of its host several times (the URL check, the
    guard, the allow list) and a site's pages share one host; the addresses are immutable.
    """
    return _known_literal(host) if len(host) <= _KEPT_HOST_CHARS else _literal(host)


@functools.lru_cache(maxsize=4096)
def _known_literal(host: str) -> IPAddress | None:
    return _literal(host)


def _literal(host: str) -> IPAddress | None:
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if ":" in text:
        try:
            return ipaddress.IPv6Address(text.replace("%25", "%", 1))
        except ValueError:
            return None
    text = text.removesuffix(".")
    if not _NUMERIC_V4.fullmatch(text):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except OSError:
        return None


def canonical_ip(address: IPAddress) -> str:
    """The address in its one canonical spelling, without an IPv6 zone id."""
    return str(address).split("%", 1)[0]


def normalise_host(host: str) -> str:
    """A host name as compared: trimmed, lower-cased, without the root's trailing dot."""
    return host.strip().lower().removesuffix(".")
