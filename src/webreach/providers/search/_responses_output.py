"""Reading the ``output`` of an OpenAI Responses answer that searched with ``web_search``: the
answer, its ``url_citation`` annotations, the searches' sources and queries."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ...seam import SearchCitation, SearchResult, SearchSource
from .._json_api import optional_str

__all__ = ["read_output"]

_TRACKING = "utm_source=openai"
"""What OpenAI appends to the URLs its answers cite; the same page without it is one source."""

_MARKDOWN_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://(?:[^\s()]|\([^\s()]*\))+)\)")
_LINK_ONLY = re.compile(r"\(?" + _MARKDOWN_LINK.pattern + r"\)?")
"""A span that is only a link: OpenAI's answers cite a sentence with ``([site](url))`` after it."""
_BARE_URL = re.compile(r"https?://[^\s<>\"'\[\]()]+")
_TRAILING = ".,;:!?'\""


def read_output(output: list[Any]) -> SearchResult:
    """What one Responses answer holds as a search result, each part in the order the answer
    gave it."""
    items = [item for item in output if isinstance(item, dict)]
    parts = list(_text_parts(items))
    answer = "\n\n".join(text for text, _ in parts)
    citations = tuple(_citations(parts))
    cited = [SearchSource(url=c.url, title=c.title) for c in citations]
    if not cited:
        cited = list(_links(answer))
    return SearchResult(
        sources=_unique([*cited, *_searched(items)]),
        content=answer if answer.strip() else None,
        citations=_unique_citations(citations),
        queries=tuple(dict.fromkeys(_queries(items))),
    )


def plain_url(url: str) -> str:
    """``url`` without OpenAI's ``utm_source=openai``, otherwise as it is."""
    parts = urlsplit(url.strip())
    if _TRACKING not in parts.query:
        return url.strip()
    query = "&".join(pair for pair in parts.query.split("&") if pair != _TRACKING)
    return urlunsplit(parts._replace(query=query))


def _text_parts(items: list[dict[str, Any]]) -> Iterator[tuple[str, list[Any]]]:
    """Each ``output_text`` part of the assistant's messages, with its annotations."""
    for item in items:
        content = item.get("content") if item.get("type") == "message" else None
        for part in content if isinstance(content, list) else ():
            if (
                isinstance(part, dict)
                and part.get("type") == "output_text"
                and isinstance(part.get("text"), str)
            ):
                notes = part.get("annotations")
                yield part["text"], notes if isinstance(notes, list) else []


def _citations(parts: list[tuple[str, list[Any]]]) -> Iterator[SearchCitation]:
    for text, notes in parts:
        for note in notes:
            if not (
                isinstance(note, dict)
                and note.get("type") == "url_citation"
                and isinstance(note.get("url"), str)
                and note["url"].strip()
            ):
                continue
            yield SearchCitation(
                url=plain_url(note["url"]),
                title=optional_str(note, "title"),
                cited_text=_span(text, note.get("start_index"), note.get("end_index")),
            )


def _span(text: str, start: Any, end: Any) -> str | None:
    """The answer's words a citation covers, when its indices make sense; none when they cover
    only the link itself, which says nothing the citation's URL and title do not."""
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)):
        return None
    span = text[start:end].strip()
    return None if not span or _LINK_ONLY.fullmatch(span) else span


def _searched(items: list[dict[str, Any]]) -> Iterator[SearchSource]:
    """The pages each ``web_search_call`` action consulted, in the order listed."""
    for action in _actions(items):
        listed = action.get("sources")
        for source in listed if isinstance(listed, list) else ():
            url = source.get("url") if isinstance(source, dict) else None
            if isinstance(url, str) and url.strip():
                yield SearchSource(url=plain_url(url))


def _queries(items: list[dict[str, Any]]) -> Iterator[str]:
    """``action.queries`` of each search, or its older single ``action.query``."""
    for action in _actions(items):
        if action.get("type") != "search":
            continue
        many = action.get("queries")
        asked = many if isinstance(many, list) and many else [action.get("query")]
        for query in asked:
            if isinstance(query, str) and query.strip():
                yield query.strip()


def _actions(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for item in items:
        action = item.get("action") if item.get("type") == "web_search_call" else None
        if isinstance(action, dict):
            yield action


def _links(answer: str) -> Iterator[SearchSource]:
    """The fallback when nothing is annotated: the answer's Markdown links (their text is the
    title), then its bare URLs."""
    for match in _MARKDOWN_LINK.finditer(answer):
        yield SearchSource(url=plain_url(match[2]), title=match[1].strip() or None)
    rest = _MARKDOWN_LINK.sub(" ", answer)
    for match in _BARE_URL.finditer(rest):
        url = match[0].rstrip(_TRAILING)
        if urlsplit(url).hostname:
            yield SearchSource(url=plain_url(url))


def _unique(sources: Iterable[SearchSource]) -> tuple[SearchSource, ...]:
    """The first source of each URL, given a title a later one of the same URL has."""
    found: dict[str, SearchSource] = {}
    for source in sources:
        known = found.get(source.url)
        if known is None:
            found[source.url] = source
        elif known.title is None and source.title is not None:
            found[source.url] = SearchSource(url=known.url, title=source.title)
    return tuple(found.values())


def _unique_citations(citations: Iterable[SearchCitation]) -> tuple[SearchCitation, ...]:
    found: dict[tuple[str, str | None], SearchCitation] = {}
    for citation in citations:
        found.setdefault((citation.url, citation.cited_text), citation)
    return tuple(found.values())
