"""Running the app under uvicorn on a socket bound first, so a busy port is one clear error
and "serving on" is said only once the server really listens."""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
from typing import Any

import uvicorn

from ..seam import WebreachError
from .config import ServerSettings
from .limits import ConnectionLimits, LimitedConfig, connection_capacity, on_loop_error
from .logs import announce

__all__ = ["CannotListen", "listen", "serve"]


class CannotListen(WebreachError):
    """The address cannot be bound: in use, not this machine's, not permitted."""


_WHY = {
    errno.EADDRINUSE: "the address is already in use (is another server running on that port?)",
    errno.EADDRNOTAVAIL: "the address is not one of this machine's",
    errno.EACCES: "permission denied (ports below 1024 need privileges)",
}


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (uvicorn starts listening on it); raises
    :class:`CannotListen` with one line saying why not."""
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as error:
        raise CannotListen(f"cannot listen on {shown}: {error.strerror}") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
        sock.bind(address)
    except OSError as error:
        sock.close()
        why = _WHY.get(error.errno or 0, error.strerror or str(error))
        raise CannotListen(f"cannot listen on {shown}: {why}") from None
    sock.set_inheritable(True)
    return sock


class _Server(uvicorn.Server):
    """uvicorn's server, announcing the address once startup (lifespan, listen) succeeded."""

    def __init__(self, config: LimitedConfig, url: str) -> None:
        super().__init__(config)
        self._url = url
        self._limits = config.limits

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        asyncio.get_running_loop().set_exception_handler(on_loop_error(self._limits))
        await super().startup(sockets)
        if not self.should_exit:
            announce(f"serving on {self._url}", url=self._url)


def serve(app: Any, sock: socket.socket, url: str, settings: ServerSettings | None = None) -> None:
    """Serve ``app`` on ``sock`` until interrupted. The log, uvicorn's loggers included, is
    the caller's to configure (:func:`webreach.server.logs.configure_logging`); uvicorn's own
    access log stays off, the app writes its own.

    At most ``settings.server_max_connections`` (default 1000, fewer if the open-file limit
    cannot hold them) are served at once; a client must send its request headers within
    ``server_header_timeout`` seconds and its body within ``server_body_timeout`` seconds more
    (:mod:`.limits`)."""
    settings = settings if settings is not None else ServerSettings()
    most, said = connection_capacity(settings.server_max_connections)
    if said:
        level = logging.INFO if said.startswith("raised") else logging.WARNING
        logging.getLogger("webreach.server").log(level, said)
    limits = ConnectionLimits(most, settings.server_header_timeout, settings.server_body_timeout)
    config = LimitedConfig(
        app, limits, log_config=None, log_level=None, access_log=False, lifespan="on"
    )
    _Server(config, url).run(sockets=[sock])
