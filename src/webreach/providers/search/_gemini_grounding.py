"""Gemini's ``groundingMetadata``: the pages searched, what the answer cites, the searches run.

``groundingChunks[].web`` are the sources. Their ``uri`` is, on the Gemini API, a
``vertexaisearch.cloud.google.com/grounding-api-redirect/...`` link that leads to the page, and
their ``title`` is the page's site (``uefa.com``), not its headline: both are kept as given, since
the page's own URL and title are not in the answer. ``groundingSupports[]`` tie a segment of the
answer to the chunks that support it, which become citations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from ...seam import SearchCitation, SearchSource
from .._json_api import optional_str

__all__ = ["Grounding"]

_HOSTNAME = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z][a-z0-9-]*[a-z0-9]")


@dataclass(frozen=True)
class _Chunk:
    url: str
    title: str | None
    site: str | None


@dataclass(frozen=True)
class Grounding:
    chunks: tuple[_Chunk | None, ...]
    """Every chunk, by its index (the supports refer to them so); None for one without a URL."""
    supports: tuple[tuple[str | None, tuple[int, ...]], ...]
    """Each support's cited text and the indices of its chunks."""
    queries: tuple[str, ...]

    @classmethod
    def read(cls, metadata: Any) -> Grounding:
        """The grounding of a candidate; an answer given without searching has none."""
        if not isinstance(metadata, dict):
            return cls((), (), ())
        return cls(
            chunks=tuple(_chunk(item) for item in _list(metadata, "groundingChunks")),
            supports=tuple(
                support
                for item in _list(metadata, "groundingSupports")
                if (support := _support(item)) is not None
            ),
            queries=tuple(
                query.strip()
                for query in _list(metadata, "webSearchQueries")
                if isinstance(query, str) and query.strip()
            ),
        )

    def on_sites(self, include: tuple[str, ...], exclude: tuple[str, ...]) -> Grounding:
        """Only the chunks on the included sites and off the excluded ones: a chunk whose site
        is not known is not on any site."""
        if not include and not exclude:
            return self
        return replace(
            self,
            chunks=tuple(
                chunk if chunk is not None and _allowed(chunk.site, include, exclude) else None
                for chunk in self.chunks
            ),
        )

    @property
    def sources(self) -> tuple[SearchSource, ...]:
        """The chunks in order, each URL once."""
        found: dict[str, SearchSource] = {}
        for chunk in self.chunks:
            if chunk is not None and chunk.url not in found:
                found[chunk.url] = SearchSource(url=chunk.url, title=chunk.title)
        return tuple(found.values())

    @property
    def citations(self) -> tuple[SearchCitation, ...]:
        """Each supported segment with each of its chunks, in the answer's order."""
        cited: list[SearchCitation] = []
        for text, indices in self.supports:
            for index in indices:
                chunk = self.chunks[index] if 0 <= index < len(self.chunks) else None
                if chunk is not None:
                    cited.append(SearchCitation(url=chunk.url, title=chunk.title, cited_text=text))
        return tuple(dict.fromkeys(cited))


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    return value if isinstance(value, list) else []


def _chunk(item: Any) -> _Chunk | None:
    web = item.get("web") if isinstance(item, dict) else None
    if not isinstance(web, dict) or not (url := optional_str(web, "uri")):
        return None
    title = optional_str(web, "title")
    return _Chunk(url=url, title=title, site=_site(web, title, url))


def _site(web: dict[str, Any], title: str | None, url: str) -> str | None:
    """The chunk's site: its ``domain`` (Vertex AI gives one), else its title when that is a
    host name (the Gemini API's titles are), else its URL's host unless that is the redirect."""
    for candidate in (optional_str(web, "domain"), title):
        if candidate and _HOSTNAME.fullmatch(candidate.lower()):
            return candidate.lower()
    host = (urlsplit(url).hostname or "").lower()
    return host if host and host != "vertexaisearch.cloud.google.com" else None


def _allowed(site: str | None, include: tuple[str, ...], exclude: tuple[str, ...]) -> bool:
    def on(domains: tuple[str, ...]) -> bool:
        return site is not None and any(site == d or site.endswith("." + d) for d in domains)

    return (not include or on(include)) and not on(exclude)


def _support(item: Any) -> tuple[str | None, tuple[int, ...]] | None:
    if not isinstance(item, dict):
        return None
    segment = item.get("segment")
    text = optional_str(segment, "text") if isinstance(segment, dict) else None
    indices = tuple(
        index
        for index in _list(item, "groundingChunkIndices")
        if isinstance(index, int) and not isinstance(index, bool)
    )
    return (text, indices) if indices else None
