"""Display fields clients show beside a source: its site, an icon, and a date they can parse.

Providers give dates as they have them ("2025-10-15", "Tue, 14 Oct 2025 08:00:00 GMT",
"3 days ago", "2025年3月28日"); clients get ``page_age``/``published_at`` as RFC 3339 in
UTC, or null.
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlsplit

from ....seam.dates import parse_date
from ..turn.events import WebSource, rfc3339

__all__ = ["image_field", "published", "site_icon", "site_name", "url_source"]


def published(raw: str | None, now: float | None = None) -> str | None:
    """``raw`` as RFC 3339 in UTC (a date alone is its midnight), or None when it is not a date
    the seam reads (:func:`webreach.seam.dates.parse_date`)."""
    moment = parse_date(raw, datetime.fromtimestamp(now, UTC) if now is not None else None)
    return rfc3339(moment.timestamp()) if moment is not None else None


def site_name(url: str) -> str | None:
    """The site as people name it in a list of sources: its host, without ``www.``."""
    host = urlsplit(url).hostname
    return host.removeprefix("www.") if host else None


def site_icon(url: str) -> str | None:
    """Where the site's icon conventionally lives; a client that cannot load it shows none."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}/favicon.ico"


def image_field(source: WebSource) -> dict[str, str]:
    """``image_url`` for a page an image search found (absent on other sources)."""
    return {"image_url": source.image_url} if source.image_url else {}


def url_source(s: WebSource) -> dict[str, object]:
    """A source as Responses ``action.sources`` and Chat ``sources`` show it."""
    return {
        "type": "url",
        "url": s.url,
        "title": s.title,
        "snippet": s.snippet,
        "site_name": s.site_name,
        "site_icon": s.site_icon,
        "published_at": s.published_at,
        **image_field(s),
    }
