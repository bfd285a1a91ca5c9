"""What the image search providers share: a keyed endpoint, one match per page, and a failure
the service reported in a 200 answer."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...seam import ImageMatch, WebError, WebErrorCode
from .._json_api import KeyedEndpoint, redact

__all__ = ["KeyedImageProvider", "unique"]


class KeyedImageProvider(KeyedEndpoint):
    """A keyed image search service at one endpoint."""

    def _failed(self, what: str, detail: Any) -> WebError:
        """``{id}: {what} ({detail})``, the service's text with the key redacted (left out
        when it sent none)."""
        reason = f" ({redact(detail, [self._api_key])})" if isinstance(detail, str) else ""
        return WebError(
            WebErrorCode.WEB_PROVIDER_ERROR, f"{self.id}: {what}{reason}", provider=self.id
        )


def unique(matches: Iterable[ImageMatch | None]) -> tuple[ImageMatch, ...]:
    """One match per page, the first (best ranked) one; ``None`` (an item without a page URL)
    is dropped."""
    seen: dict[str, ImageMatch] = {}
    for match in matches:
        if match is not None and match.url not in seen:
            seen[match.url] = match
    return tuple(seen.values())
