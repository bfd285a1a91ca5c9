"""What the image search providers share: one match per page."""

from __future__ import annotations

from collections.abc import Iterable

from ...seam import ImageMatch

__all__ = ["unique"]


def unique(matches: Iterable[ImageMatch | None]) -> tuple[ImageMatch, ...]:
    """One match per page, the first (best ranked) one; ``None`` (an item without a page URL)
    is dropped."""
    seen: dict[str, ImageMatch] = {}
    for match in matches:
        if match is not None and match.url not in seen:
            seen[match.url] = match
    return tuple(seen.values())
