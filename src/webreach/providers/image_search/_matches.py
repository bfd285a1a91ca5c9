"""What the image search providers share: a key and an endpoint, one match per page, and
a failure the service reported in a 200 answer."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, ClassVar

from ...seam import ImageMatch, WebError, WebErrorCode
from .._json_api import redact

__all__ = ["KeyedImageProvider", "unique"]


class KeyedImageProvider:
    """A keyed image search service at one endpoint; ``repr`` shows the endpoint, never the key."""

    id: ClassVar[str]
    default_base_url: ClassVar[str]

    def __init__(self, *, api_key: str | None, base_url: str | None) -> None:
        self._api_key = api_key or None
        self._base_url = (base_url or self.default_base_url).rstrip("/")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self._base_url!r})"

    def available(self) -> bool:
        return self._api_key is not None

    def cache_scope(self) -> str:
        """The endpoint, so a replay server's answers never reach the real service's callers."""
        return json.dumps({"base_url": self._base_url}, separators=(",", ":"))

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
