"""Runtime factories for the read pool's tests, importable by the pool's processes."""

from __future__ import annotations

from webreach.seam import WebRuntime


def broken_runtime() -> WebRuntime:
    """A reader whose runtime cannot be built: it ends before it says it is ready."""
    raise RuntimeError("this reader cannot build its runtime")
