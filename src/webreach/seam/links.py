"""Which URLs may leave the seam: only links a user can click safely.

A provider's answer is untrusted text; a ``javascript:`` or ``data:`` URL among its sources would
reach a chat client as a citation link, one click from running.
"""

from __future__ import annotations

import dataclasses
from urllib.parse import urlsplit

from .types import ImageMatch, ImageSearchResult, SearchResult

__all__ = ["is_web_url", "web_matches", "web_sources"]

_WEB_SCHEMES = frozenset({"http", "https"})


def is_web_url(url: str | None) -> bool:
    """Whether ``url`` is an absolute http(s) URL with a host, and so safe to show as a link.

    A provider's ``javascript:``, ``data:`` or ``file:`` URL (however cased or padded) would run
    or read something when a user clicks it in a chat client; control characters are refused
    too, since parsers disagree about them.
    """
    if not url or any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:  # a malformed IPv6 literal, or a port that is not a number
        return False
    return parts.scheme in _WEB_SCHEMES and bool(host)


def web_sources(result: SearchResult) -> SearchResult:
    """``result`` without its sources that are not web URLs."""
    kept = tuple(source for source in result.sources if is_web_url(source.url))
    if len(kept) == len(result.sources):
        return result
    return dataclasses.replace(result, sources=kept)


def _web_match(match: ImageMatch) -> ImageMatch:
    """A match whose page is a web page, with its image and thumbnail kept only when they are
    web URLs too (they are optional: a match without them is still a match)."""
    image_url = match.image_url if is_web_url(match.image_url) else None
    thumbnail_url = match.thumbnail_url if is_web_url(match.thumbnail_url) else None
    if image_url == match.image_url and thumbnail_url == match.thumbnail_url:
        return match
    return dataclasses.replace(match, image_url=image_url, thumbnail_url=thumbnail_url)


def web_matches(result: ImageSearchResult) -> ImageSearchResult:
    """``result`` without its matches on pages that are not web URLs (see :func:`_web_match`)."""
    kept = tuple(_web_match(match) for match in result.matches if is_web_url(match.url))
    if kept == result.matches:
        return result
    return dataclasses.replace(result, matches=kept)
