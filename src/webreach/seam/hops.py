"""How many webreach servers a search has passed through.

A model-backed provider pointed back at the server that runs it (``ANTHROPIC_BASE_URL`` set for
Claude Code to that server, then ``WEBREACH_SEARCH_PROVIDER=auto``) would search forever: each
search asks the server, which searches again. Every provider request carries the count plus one
in ``X-Webreach-Hops``; a server takes the inbound count as its own and refuses past
:data:`MAX_HOPS`, so the loop ends in a provider error that a chain moves on from.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["HOPS_HEADER", "MAX_HOPS", "arrived_after", "current_hops", "hops_of"]

HOPS_HEADER = "X-Webreach-Hops"
MAX_HOPS = 3
"""A server refuses a request that has already passed through this many webreach servers; two
servers in a row (a search provider pointed at another webreach) still work."""

_hops: ContextVar[int] = ContextVar("webreach_hops", default=0)


def current_hops() -> int:
    """The servers the current request has passed through (0 outside any server)."""
    return _hops.get()


def hops_of(value: str | None) -> int:
    """The count an inbound header gives; anything but a small whole number counts as none."""
    if value is None or not value.strip().isdigit() or len(value.strip()) > 3:
        return 0
    return int(value.strip())


@contextmanager
def arrived_after(hops: int) -> Iterator[None]:
    """Within it, provider requests say they have passed through ``hops`` servers already."""
    token = _hops.set(hops)
    try:
        yield
    finally:
        _hops.reset(token)
