"""Binding the listening socket before anything is served, so an address that cannot be had (a
host that does not resolve, a busy port) is one clear line, for the API server and the MCP
server alike. Needs nothing beyond the standard library, so either server's extra will do."""

from __future__ import annotations

import errno
import socket

from ..seam import WebreachError

__all__ = ["CannotListen", "listen", "resolve"]


class CannotListen(WebreachError):
    """The address cannot be bound: unknown host, in use, not this machine's, not permitted."""


_WHY = {
    errno.EADDRINUSE: "the address is already in use (is another server running on that port?)",
    errno.EADDRNOTAVAIL: "the address is not one of this machine's",
    errno.EACCES: "permission denied (ports below 1024 need privileges)",
}


def _shown(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def resolve(host: str, port: int) -> tuple[int, int, int, tuple[object, ...]]:
    """The family, type, protocol and address to bind for ``host:port``; raises
    :class:`CannotListen` naming a host that cannot be resolved."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError) as error:
        why = getattr(error, "strerror", None) or str(error)
        raise CannotListen(
            f"cannot listen on {_shown(host, port)}: the host {host} cannot be resolved ({why})"
        ) from None
    return family, kind, proto, address


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (uvicorn starts listening on it); raises
    :class:`CannotListen` with one line saying why not."""
    family, kind, proto, address = resolve(host, port)
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
        sock.bind(address)
    except OSError as error:
        sock.close()
        why = _WHY.get(error.errno or 0, error.strerror or str(error))
        raise CannotListen(f"cannot listen on {_shown(host, port)}: {why}") from None
    sock.set_inheritable(True)
    return sock
