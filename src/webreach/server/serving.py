"""Running the app under uvicorn on a socket bound first, so a busy port is one clear error
and "serving on" is said only once the server really listens."""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

from ..settings.server import ServerSettings
from ..tools.stopping import StoppingServer
from .binding import CannotListen, listen
from .connections import ConnectionLimits, connection_capacity, on_loop_error
from .core.turn.limits import Stopping
from .heap import settle_heap
from .logs import announce
from .uvicorn_protocol import LimitedConfig

__all__ = ["CannotListen", "listen", "serve"]


logger = logging.getLogger("webreach.server")


def _say(line: str) -> None:
    logger.info(line, extra={"event": "stopping"})


class _Server(StoppingServer):
    """uvicorn's server, announcing the address once startup (lifespan, listen) succeeded."""

    def __init__(
        self, config: LimitedConfig, url: str, timeout: float, stopping: Stopping | None
    ) -> None:
        ends = stopping.end_turns if stopping is not None else None
        super().__init__(config, shutdown_timeout=timeout, say=_say, end_turns=ends)
        self._url = url
        self._limits = config.limits

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        asyncio.get_running_loop().set_exception_handler(on_loop_error(self._limits))
        await super().startup(sockets)
        if not self.should_exit:
            settle_heap()
            announce(f"serving on {self._url}", url=self._url)


def serve(app: Any, sock: socket.socket, url: str, settings: ServerSettings | None = None) -> None:
    """Serve ``app`` on ``sock`` until interrupted. The log, uvicorn's loggers included, is
    the caller's to configure (:func:`webreach.server.logs.configure_logging`); uvicorn's own
    access log stays off, the app writes its own.

    At most ``settings.server_max_connections`` (default 1000, fewer if the open-file limit
    cannot hold them) are served at once; a client must send its request headers within
    ``server_header_timeout`` seconds and its body within ``server_body_timeout`` seconds more
    (:mod:`.connections`). A first Ctrl-C or SIGTERM gives running turns ``shutdown_timeout``
    seconds, then ends them with their protocol's error (``app.state.stopping``)."""
    settings = settings if settings is not None else ServerSettings()
    most, said = connection_capacity(settings.server_max_connections)
    if said:
        level = logging.INFO if said.startswith("raised") else logging.WARNING
        logger.log(level, said)
    limits = ConnectionLimits(most, settings.server_header_timeout, settings.server_body_timeout)
    config = LimitedConfig(
        app, limits, log_config=None, log_level=None, access_log=False, lifespan="on"
    )
    stopping: Stopping | None = getattr(getattr(app, "state", None), "stopping", None)
    _Server(config, url, settings.shutdown_timeout, stopping).run(sockets=[sock])
