"""Workers for the render pool's tests, importable by the pool's processes: each announces the
page it took in the directory its ``html`` names, then holds it until told otherwise."""

from __future__ import annotations

import os
import time
from pathlib import Path

from webreach.tools.render import RenderedPage
from webreach.tools.render_pool import stopped


def _announce(html: str) -> None:
    (Path(html) / "started").write_text(str(os.getpid()), encoding="utf-8")


def hold_until_stopped(html: str, base_url: str | None, slot: int) -> RenderedPage:
    """A render that ends only when its caller gives the page up."""
    _announce(html)
    while not stopped(slot):
        time.sleep(0.01)
    return RenderedPage(title=None, markdown="stopped")


def hold_forever(html: str, base_url: str | None, slot: int) -> RenderedPage:
    """A render stuck where no budget check reaches it."""
    _announce(html)
    while True:
        time.sleep(0.05)
