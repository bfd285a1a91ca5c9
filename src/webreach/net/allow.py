"""The allow list (``WEBREACH_FETCH_ALLOW``): destinations a fetch may reach on purpose although
the guard would refuse them.

Parsing is strict, so a typo stops the program when the setting is read instead of leaving a
destination silently closed: every entry must be a host name, ``*.domain``, an IP, a CIDR, or a
host or IP with ``:port``.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Network, IPv6Network

from .addresses import (
    HOST_NAME,
    IPAddress,
    IPNetwork,
    canonical_ip,
    normalise_host,
    parse_ip_literal,
)

__all__ = ["AllowList"]


@dataclass(frozen=True, slots=True)
class AllowList:
    """Destinations opened on purpose (``WEBREACH_FETCH_ALLOW``): host names, IPs or CIDRs,
    each on every port, or a host name or IP with ``:port`` on that port only.

    A host entry matches that exact name; ``*.example.com`` or ``.example.com`` match its
    subdomains. An allowed name opens every address it resolves to. A port is part of the
    entry so a developer can open one local service (``localhost:8080``) without the rest of
    the machine.
    """

    hosts: frozenset[str] = frozenset()
    suffixes: tuple[str, ...] = ()
    networks: tuple[IPNetwork, ...] = ()
    host_ports: frozenset[tuple[str, int]] = frozenset()
    """``(name, port)``: an exact name (or a ``.suffix``) opened on one port only."""
    network_ports: tuple[tuple[IPNetwork, int], ...] = ()
    """``(address as a /32 or /128, port)``: one address opened on one port only."""

    @classmethod
    def parse(cls, value: str | Iterable[str] | None) -> AllowList:
        """Parse a comma list (or items); a malformed entry is a ``ValueError`` saying why."""
        items = value.split(",") if isinstance(value, str) else list(value or ())
        hosts: set[str] = set()
        suffixes: list[str] = []
        networks: list[IPNetwork] = []
        host_ports: set[tuple[str, int]] = set()
        network_ports: list[tuple[IPNetwork, int]] = []
        for raw in items:
            entry = raw.strip().lower()
            if not entry:
                continue
            target, port = _split_entry(raw.strip(), entry)
            if isinstance(target, IPv4Network | IPv6Network):
                if port is None:
                    networks.append(target)
                else:
                    network_ports.append((target, port))
            elif port is not None:
                host_ports.add((target, port))
            elif target.startswith("."):
                suffixes.append(target)
            else:
                hosts.add(target)
        return cls(
            frozenset(hosts),
            tuple(suffixes),
            tuple(networks),
            frozenset(host_ports),
            tuple(network_ports),
        )

    def __bool__(self) -> bool:
        return bool(
            self.hosts or self.suffixes or self.networks or self.host_ports or self.network_ports
        )

    def entries(self) -> list[str]:
        """Every entry in one canonical spelling, sorted: equal lists give equal entries."""
        named = [*self.hosts, *(f"*{suffix}" for suffix in set(self.suffixes))]
        named += [f"{_with_port(host, port)}" for host, port in self.host_ports]
        named += [str(network) for network in set(self.networks)]
        named += [_with_port(str(net.network_address), port) for net, port in self.network_ports]
        return sorted(set(named))

    def allows_host(self, host: str, port: int | None = None) -> bool:
        """Whether ``host`` is named (exactly or by a suffix), on every port or on ``port``."""
        name = normalise_host(host)
        if name in self.hosts or any(name.endswith(suffix) for suffix in self.suffixes):
            return True
        return port is not None and any(
            entry_port == port and (name == entry or (entry[0] == "." and name.endswith(entry)))
            for entry, entry_port in self.host_ports
        )

    def ports_of(self, host: str, addresses: Sequence[str]) -> list[int]:
        """The ports an entry with a port opens for ``host`` or one of its ``addresses``."""
        name = normalise_host(host.strip("[]"))
        ports = {
            p
            for entry, p in self.host_ports
            if name == entry or (entry[0] == "." and name.endswith(entry))
        }
        for text in addresses:
            if (address := parse_ip_literal(text)) is not None:
                plain = ipaddress.ip_address(canonical_ip(address))
                ports |= {p for net, p in self.network_ports if plain in net}
        return sorted(ports)

    def allows_address(self, address: IPAddress, port: int | None = None) -> bool:
        """Whether ``address`` is inside an allowed network, or is an address allowed on
        ``port``."""
        mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
        if mapped is not None and self.allows_address(mapped, port):
            return True
        plain = address if address.version == 4 else ipaddress.ip_address(canonical_ip(address))
        if any(plain.version == net.version and plain in net for net in self.networks):
            return True
        return port is not None and any(
            entry_port == port and plain.version == net.version and plain in net
            for net, entry_port in self.network_ports
        )


_EXAMPLE = "e.g. 127.0.0.1, localhost:8080, *.internal.example or 10.0.0.0/8"


def _split_entry(raw: str, entry: str) -> tuple[str | IPNetwork, int | None]:
    """One allow-list entry as a name (``.suffix`` for a wildcard) or a network, and its port."""
    if "://" in entry or entry.startswith("//"):
        host = urllib.parse.urlsplit(entry if "://" in entry else f"http:{entry}").netloc
        hint = f"write {host!r} alone" if host else "write the host alone"
        raise ValueError(f"{raw!r} is a URL, not a host; {hint} ({_EXAMPLE})")
    literal = parse_ip_literal(entry)
    if literal is not None:
        return ipaddress.ip_network(canonical_ip(literal)), None
    if "/" in entry:
        try:
            return ipaddress.ip_network(entry.strip("[]"), strict=False), None
        except ValueError:
            raise ValueError(
                f"{raw!r} is not a CIDR network (an address and a prefix length within its "
                "family, e.g. 10.0.0.0/8 or fd00::/8)"
            ) from None
    host, port = entry, None
    if entry.startswith("[") and "]:" in entry:
        host, _, digits = entry[1:].partition("]:")
        port = _port(raw, digits)
    elif entry.count(":") == 1:
        host, _, digits = entry.partition(":")
        port = _port(raw, digits)
    if port is not None and (literal := parse_ip_literal(host)) is not None:
        return ipaddress.ip_network(canonical_ip(literal)), port
    name = normalise_host(host)
    wildcard = name.startswith(("*.", "."))
    bare = name.removeprefix("*").removeprefix(".")
    if not _valid_name(bare):
        raise ValueError(
            f"{raw!r} is not a host name, IP address, CIDR network or host:port ({_EXAMPLE})"
        )
    return ("." + bare if wildcard else bare), port


def _port(raw: str, digits: str) -> int:
    if not digits.isdigit() or not 0 < int(digits) < 65536:
        raise ValueError(f"{raw!r} has no valid port after the colon; a port is 1 to 65535")
    return int(digits)


def _valid_name(name: str) -> bool:
    """A host name as a URL can carry it (international names in their ASCII form)."""
    try:
        ascii_name = name.encode("idna").decode("ascii") if not name.isascii() else name
    except UnicodeError:
        return False
    return bool(name) and HOST_NAME.fullmatch(ascii_name) is not None


def _with_port(host: str, port: int) -> str:
    shown = f"*{host}" if host.startswith(".") else host
    return f"[{shown}]:{port}" if ":" in shown else f"{shown}:{port}"
