"""How webreach's HTTP servers (the MCP server here, the API server above it) stop: the first
Ctrl-C or SIGTERM says how many requests it waits for, closes the listener and gives them
``WEBREACH_SHUTDOWN_TIMEOUT`` seconds; a second Ctrl-C ends the process at once, in one line."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import Callable
from types import FrameType

import uvicorn

__all__ = ["STOPPED_AT_ONCE", "StoppingServer"]

STOPPED_AT_ONCE = 130
"""The exit status of a second Ctrl-C: the shell's for a process ended by SIGINT."""

BACKSTOP_SECONDS = 5.0
"""After the turns were told to end, how long they have to send their error before uvicorn
cancels what is left."""


class StoppingServer(uvicorn.Server):
    """uvicorn's server with webreach's stop. ``say`` writes the one line the first signal
    prompts; ``end_turns``, when given, is called with the reason once the timeout passed, so
    running turns end with their protocol's error rather than a cut connection. ``running``,
    when given, counts the requests waited for (else every connection's running task); ``turn``
    names what the reason says was ended."""

    def __init__(
        self,
        config: uvicorn.Config,
        *,
        shutdown_timeout: float,
        say: Callable[[str], None],
        end_turns: Callable[[str], None] | None = None,
        running: Callable[[], int] | None = None,
        turn: str = "turn",
    ) -> None:
        backstop = BACKSTOP_SECONDS if end_turns is not None else 0.0
        config.timeout_graceful_shutdown = int(shutdown_timeout + backstop + 0.999)
        super().__init__(config)
        self._timeout = shutdown_timeout
        self._say = say
        self._end_turns = end_turns
        self._running = running
        self._turn = turn

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """The first signal starts the stop; the next ends the process now. The signal is not
        raised again afterwards, as uvicorn would, so a stop never ends in a traceback."""
        if self.should_exit:
            os.write(sys.stderr.fileno(), b"webreach: stopped now\n")
            os._exit(STOPPED_AT_ONCE)
        self.should_exit = True

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        running = self._running() if self._running is not None else len(self.server_state.tasks)
        noun = "request" if running == 1 else "requests"
        self._say(f"stopping: waiting for {running} {noun} (Ctrl-C again to stop now)")
        if self._end_turns is not None:
            reason = (
                f"the server is stopping: the {self._turn} was ended after {self._timeout:g} s "
                "(WEBREACH_SHUTDOWN_TIMEOUT)"
            )
            asyncio.get_running_loop().call_later(self._timeout, self._end_turns, reason)
        await super().shutdown(sockets)
