"""Runtime factories for the read pool's tests, importable by the pool's processes."""

from __future__ import annotations

import logging
import os

from webreach.seam import WebRuntime


def broken_runtime() -> WebRuntime:
    """A reader whose runtime cannot be built: it ends before it says it is ready."""
    raise RuntimeError("this reader cannot build its runtime")


async def log_a_warning(runtime: WebRuntime) -> int:
    """A job that logs in its reader; returns the reader's process id."""
    logging.getLogger("webreach.tools").warning("a reader's warning, from %d", os.getpid())
    return os.getpid()
