"""Waiting for an event in a test: poll until it happens, with a patience no busy machine
reaches, so a test never races a wall-clock window."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

PATIENCE = 60.0
"""Seconds a poll waits before the test fails."""


async def until(condition: Callable[[], object], what: str, patience: float = PATIENCE) -> None:
    loop = asyncio.get_running_loop()
    give_up = loop.time() + patience
    while not condition():
        if loop.time() > give_up:
            pytest.fail(f"gave up waiting for {what}")
        await asyncio.sleep(0.02)
