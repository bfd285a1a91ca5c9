"""Bot walls: a challenge or block page a site's bot protection answered instead of the page.

Such an answer is no content: webreach names it as a ``WEB_BOT_CHALLENGE`` failure and never
tries to get past it (no disguised user agent, no solving). The signatures are the ones the
vendors document for their challenge and block responses; a body alone counts only with a
refusing status, so an article that quotes "Just a moment..." is still read.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from .errors import WebError, WebErrorCode

__all__ = ["bot_wall", "bot_wall_error", "check_bot_wall"]

_REFUSING = frozenset({401, 403, 405, 429, 503})
"""Statuses a challenge or block page comes with; a 200 page is judged by its headers only."""
_SCANNED = 65_536
"""Characters of a body's start searched for signatures: every vendor's markers sit early."""

_BODY_SIGNATURES: tuple[tuple[str, str], ...] = (
    ("<title>just a moment...</title>", "Cloudflare"),
    ("_cf_chl_opt", "Cloudflare"),
    ("/cdn-cgi/challenge-platform/", "Cloudflare"),
    ("attention required! | cloudflare", "Cloudflare"),
    ("sorry, you have been blocked", "Cloudflare"),
    ("captcha-delivery.com", "DataDome"),
    ("_pxappid", "HUMAN"),
    ("px-captcha", "HUMAN"),
    ("captcha.px-cdn.net", "HUMAN"),
    ("errors.edgesuite.net", "Akamai"),
    ("errors&#46;edgesuite&#46;net", "Akamai"),
)


def bot_wall(status: int, headers: Mapping[str, str], body: str) -> str | None:
    """The vendor whose bot wall this answer is (``Cloudflare``, ``Akamai``, ``DataDome``,
    ``HUMAN``), or None for a real answer. ``headers`` keys are compared case-insensitively."""
    lowered = {name.lower(): value.lower() for name, value in headers.items()}
    if "challenge" in lowered.get("cf-mitigated", ""):
        return "Cloudflare"
    if status not in _REFUSING:
        return None
    if "x-dd-b" in lowered:
        return "DataDome"
    if lowered.get("server", "").startswith("akamaighost"):
        return "Akamai"
    head = body[:_SCANNED].lower()
    for marker, vendor in _BODY_SIGNATURES:
        if marker in head:
            return vendor
    reference = "reference #" in head or "reference&#32;&#35;" in head
    if reference and "access denied" in head and "you don't have permission" in head:
        return "Akamai"
    return None


def bot_wall_error(url: str, vendor: str, status: int, provider: str | None = None) -> WebError:
    """The failure a bot wall is, worded for people and models alike."""
    host = urlsplit(url).hostname or url
    return WebError(
        WebErrorCode.WEB_BOT_CHALLENGE,
        f"{host} answered with a bot challenge ({vendor}, HTTP {status}); the page could not "
        "be read, and webreach does not try to get past it",
        provider=provider,
        status=status,
    )


def check_bot_wall(
    url: str, status: int, headers: Mapping[str, str], body: str, provider: str | None = None
) -> None:
    """Raise :func:`bot_wall_error` when the answer is a bot wall."""
    vendor = bot_wall(status, headers, body)
    if vendor is not None:
        raise bot_wall_error(url, vendor, status, provider)
