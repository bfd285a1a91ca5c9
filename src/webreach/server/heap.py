"""The collector's share of a busy server: what the startup built is never scanned again.

A server's heap is mostly what its imports made (the SDKs' models, pydantic's validators), and
Python's collector walks all of it at every oldest-generation pass: under a wave of 200 turns
that was a third of the server's CPU. Frozen once the app has started, and with the youngest
generation's passes spaced out, the collector walks only what requests left alive.
"""

from __future__ import annotations

import gc

__all__ = ["YOUNGEST_THRESHOLD", "settle_heap"]

YOUNGEST_THRESHOLD = 7_000
"""Container objects allocated and still alive between youngest-generation passes (Python's
default is 700): ten times fewer passes, each over objects that mostly died already."""


def settle_heap() -> None:
    """Collect once, move every survivor out of the collector's reach, and space its passes."""
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(max(YOUNGEST_THRESHOLD, gc.get_threshold()[0]), middle, oldest)
