"""What the owner and its workers say over their socket: pickled messages, each after its length
(only the owner's own processes are at the other end)."""

from __future__ import annotations

import asyncio
import pickle
import struct
from collections.abc import Awaitable, Callable
from typing import Any, Final

from ...seam import WebRuntime

__all__ = ["FORWARDED", "Job", "RuntimeFactory", "frame", "receive", "send"]

RuntimeFactory = Callable[[], WebRuntime]
"""Builds a worker's runtime; pickled to the worker, so a module-level function or a partial."""
Job = Callable[..., Awaitable[Any]]
"""A module-level coroutine function a worker runs as ``job(runtime, *args)``."""
FORWARDED: Final = ("webreach", "asyncio")
"""The loggers whose records a worker sends to its owner, which logs them as its own."""

_HEADER: Final = struct.Struct("!I")


def frame(message: object) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


async def send(writer: asyncio.StreamWriter, message: object) -> None:
    writer.write(frame(message))
    await writer.drain()


async def receive(reader: asyncio.StreamReader) -> Any:
    """The next message, or None once the other end has closed."""
    try:
        (size,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
        return pickle.loads(await reader.readexactly(size))
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
