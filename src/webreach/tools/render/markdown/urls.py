"""URL resolution for links and images: absolute where possible, never an executable scheme."""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urljoin, urlsplit

_STRIPPED: Final = re.compile(r"[\x00-\x20\x7f]+")
_UNSAFE_SCHEMES: Final = frozenset({"javascript", "vbscript", "data", "file", "about", "blob"})
# A root-relative URL without any of these joins onto the base's origin unchanged: no dot
# segments, no `;params`, no tab or newline for urljoin to drop, no empty query or fragment.
_NOT_PLAIN: Final = re.compile(r"^//|/\.|[\t\n\r;]|\?#|[?#]$")
_BREAKS_MARKDOWN: Final = re.compile(r"[ ()<>]")
_MARKDOWN_BREAKERS: Final = str.maketrans(
    {" ": "%20", "(": "%28", ")": "%29", "<": "%3C", ">": "%3E"}
)


def effective_base(base_url: str | None, base_href: str | None) -> str | None:
    """Combine the caller's URL with the page's `<base href>`, which wins as browsers do."""
    if not base_href or not base_href.strip():
        return base_url
    href = base_href.strip()
    if base_url:
        return urljoin(base_url, href)
    return href if urlsplit(href).scheme in {"http", "https"} else None


class UrlResolver:
    """Resolves a page's URLs against its base, caching because pages repeat the same hrefs."""

    __slots__ = ("_base", "_cache", "_origin")

    def __init__(self, base: str | None) -> None:
        self._base = base
        self._cache: dict[str, str | None] = {}
        # Most links are root-relative ("/path"): prefixing the origin is what urljoin would do,
        # at a tenth of its cost.
        self._origin: str | None = None
        if base is not None:
            try:
                parts = urlsplit(base)
            except ValueError:
                parts = None
            if parts is not None and parts.scheme in {"http", "https"} and parts.netloc:
                self._origin = f"{parts.scheme}://{parts.netloc}"

    def resolve(self, raw: str | None) -> str | None:
        """Return the absolute, Markdown-safe form of `raw`, or None when it must not be emitted."""
        if not raw:
            return None
        cached = self._cache.get(raw, "")
        if cached != "":
            return cached
        result = self._resolve(raw)
        self._cache[raw] = result
        return result

    def _resolve(self, raw: str) -> str | None:
        url = raw.strip()
        if not url or url.startswith("#"):
            return None
        if not url.startswith(("https://", "http://")):
            probe = _STRIPPED.sub("", url[:16]).lower()
            colon = probe.find(":")
            if colon > 0 and probe[:colon] in _UNSAFE_SCHEMES:
                return None
            if self._origin is not None and url[0] == "/" and not _NOT_PLAIN.search(url):
                url = self._origin + url
            elif self._base is not None:
                try:
                    url = urljoin(self._base, url)
                except ValueError:
                    return None
        # translate() looks every character up in a dict: only pay for it when there is a need.
        return url.translate(_MARKDOWN_BREAKERS) if _BREAKS_MARKDOWN.search(url) else url
