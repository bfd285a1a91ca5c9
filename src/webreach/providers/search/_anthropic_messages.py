"""Reading an Anthropic Messages answer that searched with a server tool: shared by ``anthropic``
(``web_search``) and ``deepseek`` (``deepseek_web_search``), whose Messages API answers in the
same blocks (``server_tool_use``, ``web_search_tool_result``, text with ``citations``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...seam import SearchCitation, SearchSource
from .._json_api import field, optional_str
from .._plain_text import optional_text
from ._keyed import model_failed

__all__ = ["SearchedMessage", "messages_headers", "read_message"]

_TOOL_BLOCKS = frozenset({"server_tool_use", "web_search_tool_result", "web_fetch_tool_result"})


@dataclass(frozen=True, slots=True)
class SearchedMessage:
    """What one Messages answer holds, each part in the order the answer gave it."""

    sources: tuple[SearchSource, ...]
    answer: str | None
    citations: tuple[SearchCitation, ...]
    queries: tuple[str, ...]
    search_errors: tuple[str, ...]
    """The ``error_code`` of each search that failed (``max_uses_exceeded``, say)."""


def messages_headers(api_key: str | None) -> dict[str, str]:
    """A Messages request's headers: the key, and the API version whose blocks
    :func:`read_message` reads."""
    return {
        "x-api-key": api_key or "",
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
    }


def read_message(pid: str, data: Any, secrets: Iterable[str | None]) -> SearchedMessage:
    """The parts of a Messages answer, or ``WEB_PROVIDER_ERROR`` naming ``pid`` when it is an
    error body or has no ``content`` list."""
    _raise_on_error_body(pid, data, secrets)
    content = field(pid, data, "content", list)
    blocks = [block for block in content if isinstance(block, dict)]
    answer_blocks = _answer_blocks(blocks)
    citations = _citations(answer_blocks)
    return SearchedMessage(
        sources=_sources(blocks, citations),
        answer=_answer(answer_blocks),
        citations=citations,
        queries=_queries(blocks),
        search_errors=_search_errors(blocks),
    )


def _raise_on_error_body(pid: str, data: Any, secrets: Iterable[str | None]) -> None:
    """A failure after generation began can still come back as HTTP 200, with an error body."""
    if not (isinstance(data, dict) and data.get("type") == "error"):
        return
    error = data.get("error")
    raise model_failed(pid, error if isinstance(error, dict) else {}, "type", "error", secrets)


def _results(blocks: list[dict[str, Any]]) -> Iterable[Any]:
    """Every item of every ``web_search_tool_result`` whose content is a list."""
    for block in blocks:
        items = block.get("content") if block.get("type") == "web_search_tool_result" else None
        if isinstance(items, list):
            yield from items


def _sources(
    blocks: list[dict[str, Any]], citations: tuple[SearchCitation, ...]
) -> tuple[SearchSource, ...]:
    """Every search result of every search, first appearance of a URL kept.

    Anthropic's results carry no snippet (their text is encrypted); a result the answer cites
    gets the words cited from it instead, in the answer's order.
    """
    cited: dict[str, list[str]] = {}
    for citation in citations:
        if citation.cited_text and citation.cited_text not in cited.get(citation.url, []):
            cited.setdefault(citation.url, []).append(citation.cited_text)
    found: dict[str, SearchSource] = {}
    for item in _results(blocks):
        if _is_result(item) and item["url"] not in found:
            words = cited.get(item["url"])
            found[item["url"]] = SearchSource(
                url=item["url"],
                title=optional_text(item, "title"),
                snippet=optional_text(item, "snippet") or (" … ".join(words) if words else None),
                published_at=optional_str(item, "page_age"),
            )
    return tuple(found.values())


def _is_result(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and item.get("type") == "web_search_result"
        and isinstance(item.get("url"), str)
        and bool(item["url"].strip())
    )


def _search_errors(blocks: list[dict[str, Any]]) -> tuple[str, ...]:
    """A failed search's result is one error object (Anthropic) or a list holding one (DeepSeek)."""
    errors: list[Any] = [
        block["content"]
        for block in blocks
        if block.get("type") == "web_search_tool_result" and isinstance(block.get("content"), dict)
    ]
    errors += list(_results(blocks))
    return tuple(
        optional_str(error, "error_code") or "unknown"
        for error in errors
        if isinstance(error, dict) and error.get("type") == "web_search_tool_result_error"
    )


def _answer_blocks(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The text blocks after the last tool block: text before a search is a preamble ("I'll
    search for that"), not the answer."""
    last_tool = max((i for i, b in enumerate(blocks) if b.get("type") in _TOOL_BLOCKS), default=-1)
    return [
        block
        for block in blocks[last_tool + 1 :]
        if block.get("type") == "text" and isinstance(block.get("text"), str)
    ]


def _answer(blocks: list[dict[str, Any]]) -> str | None:
    """Joined as they are: a citation splits one sentence across blocks."""
    text = "".join(block["text"] for block in blocks)
    return text if text.strip() else None


def _citations(blocks: list[dict[str, Any]]) -> tuple[SearchCitation, ...]:
    """Each ``web_search_result_location`` once, in the answer's order."""
    found: dict[tuple[str, str | None], SearchCitation] = {}
    for block in blocks:
        cited = block.get("citations")
        for item in cited if isinstance(cited, list) else ():
            if not (
                isinstance(item, dict)
                and item.get("type") == "web_search_result_location"
                and isinstance(item.get("url"), str)
                and item["url"].strip()
            ):
                continue
            citation = SearchCitation(
                url=item["url"],
                title=optional_text(item, "title"),
                cited_text=optional_text(item, "cited_text"),
            )
            found.setdefault((citation.url, citation.cited_text), citation)
    return tuple(found.values())


def _queries(blocks: list[dict[str, Any]]) -> tuple[str, ...]:
    """The searches the service ran: ``input.query`` (Anthropic) or ``input.queries``
    (DeepSeek), each once."""
    found: dict[str, None] = {}
    for block in blocks:
        given = block.get("input") if block.get("type") == "server_tool_use" else None
        if not isinstance(given, dict):
            continue
        many = given.get("queries")
        asked = [given.get("query"), *(many if isinstance(many, list) else ())]
        for query in asked:
            if isinstance(query, str) and query.strip():
                found.setdefault(query.strip(), None)
    return tuple(found)
