"""What a ``web_search`` shows beside its answers and sources, when its providers give it (as
coding agents' search tools do): the answers' citations, the questions or searches they
suggest next, and the searches a model-backed provider ran. Merged over a call's queries, each
once."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlsplit

from ...seam import SearchCitation, SearchResult

__all__ = [
    "CITATIONS_CHARS",
    "CITED_TEXT_CHARS",
    "QUERIES_SHOWN",
    "QUERY_CHARS",
    "RELATED_CHARS",
    "RELATED_MAX",
    "Sections",
    "clip",
    "merge_sections",
    "section_lines",
]

CITED_TEXT_CHARS = 240
"""The most of a citation's quoted text the model reads."""
CITATIONS_CHARS = 2_400
"""The most the citations section may take, so the search output stays within its budget;
the structured result keeps every citation."""
RELATED_MAX = 8
"""Related questions kept for a call, over all its queries."""
RELATED_CHARS = 160
QUERIES_SHOWN = 3
"""The provider's searches the model reads, each at most ``QUERY_CHARS``."""
QUERY_CHARS = 120

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Sections:
    citations: tuple[SearchCitation, ...] = ()
    related: tuple[str, ...] = ()
    queries: tuple[str, ...] = ()


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut at ``limit`` characters with ``…``."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


def _distinct(items: Iterable[T], key: Callable[[T], Hashable]) -> tuple[T, ...]:
    seen: dict[Hashable, T] = {}
    for item in items:
        seen.setdefault(key(item), item)
    return tuple(seen.values())


def merge_sections(results: Sequence[SearchResult], queries: Sequence[str]) -> Sections:
    """Every query's citations, related questions and provider searches, in query order, each
    once; a related question that is one of the call's own queries is left out."""
    citations = _distinct(
        (c for r in results for c in r.citations if c.url),
        lambda c: (c.url, _key(c.cited_text or "")),
    )
    asked = {_key(q) for q in queries}
    related = _distinct(
        (q.strip() for r in results for q in r.related if q.strip() and _key(q) not in asked),
        _key,
    )
    ran = _distinct((q.strip() for r in results for q in r.queries if q.strip()), _key)
    return Sections(citations, related[:RELATED_MAX], ran)


def section_lines(sections: Sections, numbers: Mapping[str, int]) -> list[str]:
    """The sections as the model reads them, inside the search's fence; a citation of a listed
    source carries its number."""
    parts: list[str] = []
    if sections.citations:
        parts.append(_citations(sections.citations, numbers))
    if sections.related:
        lines = ["## Related", *(f"- {clip(q, RELATED_CHARS)}" for q in sections.related)]
        parts.append("\n".join(lines))
    if sections.queries:
        count = len(sections.queries)
        head = f"Search queries: {count}"
        if count > QUERIES_SHOWN:
            head += f" (the first {QUERIES_SHOWN})"
        shown = sections.queries[:QUERIES_SHOWN]
        parts.append("\n".join([head, *(f"- {clip(q, QUERY_CHARS)}" for q in shown)]))
    return parts


def _citations(citations: Sequence[SearchCitation], numbers: Mapping[str, int]) -> str:
    lines = ["## Citations"]
    used = len(lines[0])
    for index, citation in enumerate(citations):
        entry = _citation(citation, numbers.get(citation.url))
        if used + len(entry) + 1 > CITATIONS_CHARS:
            lines.append(f"- ({len(citations) - index} more not shown)")
            break
        lines.append(entry)
        used += len(entry) + 1
    return "\n".join(lines)


def _citation(citation: SearchCitation, number: int | None) -> str:
    label = clip(citation.title, 200) if citation.title else urlsplit(citation.url).hostname
    mark = f"[{number}] " if number is not None else ""
    head = f"- {mark}{label} — {citation.url}" if label else f"- {mark}{citation.url}"
    if citation.cited_text and citation.cited_text.strip():
        return f'{head}\n    "{clip(citation.cited_text, CITED_TEXT_CHARS)}"'
    return head
