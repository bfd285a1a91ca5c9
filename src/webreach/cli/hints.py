"""The next step a failed search names, so a newcomer whose first search fails (offline, a key
refused, a rate limit) knows what to do instead of only what went wrong."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..seam import WebError

__all__ = ["search_hint"]

KEYLESS_DEFAULT = "duckduckgo"
_LISTS_THEM = "`webreach config` lists every provider and the key it needs"


def search_hint(error: WebError) -> str | None:
    """The next step after ``error``, or None when its message already says it."""
    from ..seam import WebErrorCode

    if error.code not in (WebErrorCode.WEB_PROVIDER_ERROR, WebErrorCode.WEB_PROVIDER_UNAVAILABLE):
        return None
    provider = error.provider or "the provider"
    if error.status in (401, 403):
        return None  # the message says to check the key
    if error.status == 429:
        return f"meanwhile, search through another provider with --provider ID ({_LISTS_THEM})"
    if provider == KEYLESS_DEFAULT:
        return (
            "DuckDuckGo, the keyless default, needs the internet; to search through another "
            "provider set its key and name it, e.g. `EXA_API_KEY=… webreach search --provider "
            f"exa QUERY` ({_LISTS_THEM})"
        )
    return (
        f"try another provider with --provider ID, or a list tried in order "
        f"(--provider {provider},{KEYLESS_DEFAULT}); {_LISTS_THEM}"
    )
