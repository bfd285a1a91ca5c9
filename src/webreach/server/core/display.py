"""Display fields clients show beside a source: its site, an icon, and a date they can parse.

Providers give dates as they have them ("2025-10-15", "Tue, 14 Oct 2025 08:00:00 GMT",
"3 days ago"); the reference gives ``page_age``/``published_at`` as RFC 3339 in UTC, or null.
"""

from __future__ import annotations

import email.utils
import re
import time
from datetime import UTC, datetime
from urllib.parse import urlsplit

from .events import WebSource, rfc3339

__all__ = ["image_field", "published", "site_icon", "site_name", "url_source"]

_RELATIVE = re.compile(
    r"^\s*(\d+)\s+(second|minute|hour|day|week|month|year)s?\s+ago\s*$", re.IGNORECASE
)
_UNIT_SECONDS = {
    "second": 1,
    "minute": 60,
    "hour": 3600,
    "day": 86400,
    "week": 7 * 86400,
    "month": 30 * 86400,
    "year": 365 * 86400,
}
_WRITTEN = ("%B %d, %Y", "%b %d, %Y", "%d %B %Y", "%d %b %Y", "%Y/%m/%d", "%d.%m.%Y")


def published(raw: str | None, now: float | None = None) -> str | None:
    """``raw`` as RFC 3339 in UTC (a date alone is its midnight), or None when it is not a date."""
    text = (raw or "").strip()
    if not text:
        return None
    moment = _iso(text) or _mail(text) or _written(text)
    if moment is not None:
        return rfc3339(moment.timestamp())
    relative = _RELATIVE.match(text)
    if relative:
        count, unit = int(relative.group(1)), relative.group(2).lower()
        return rfc3339((now or time.time()) - count * _UNIT_SECONDS[unit])
    return None


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _iso(text: str) -> datetime | None:
    try:
        return _utc(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        return None


def _mail(text: str) -> datetime | None:
    try:
        return _utc(email.utils.parsedate_to_datetime(text))
    except (TypeError, ValueError, IndexError):
        return None


def _written(text: str) -> datetime | None:
    for layout in _WRITTEN:
        try:
            return datetime.strptime(text, layout).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


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
