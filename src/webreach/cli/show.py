"""Results as a person reads them: numbered sources, a page's text, and how to continue.

This is what ``webreach search`` and ``webreach fetch`` print by default, on a terminal or
into a pipe; the model-facing text (fences, instructions to a model) is ``--format tool``. Text
from the web never reaches a terminal with control characters in it: an escape sequence in a
page could otherwise restyle, retitle or rewrite the user's terminal.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..tools.fetch import FetchToolResult
    from ..tools.search.tool import SearchToolResult

__all__ = ["Text", "clean", "fetch_text", "print_text", "search_text"]


class Text:
    """Text in runs, each with a rich style or none, built without importing rich: a pipe gets
    the plain text as it is (tabs kept), and only a terminal loads rich to draw the styles."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, str | None]] = []

    def append(self, text: str, style: str | None = None) -> None:
        self.runs.append((text, style))

    @property
    def plain(self) -> str:
        return "".join(text for text, _style in self.runs)


# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides that can
# make text read differently from what it is.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """``text`` without the characters a terminal would act on instead of showing."""
    return _UNSAFE.sub("", text.replace("\r\n", "\n"))


_PASSAGE_CHARS = 300


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _one_line(text: str) -> str:
    return " ".join(clean(text).split())


def search_text(result: SearchToolResult, *, cached: bool) -> Text:
    from ..tools.search.filters import filters_line

    quoted = " · ".join(f'"{_one_line(q)}"' for q in result.queries)
    out = Text()
    if not result.sources and not result.content:
        out.append(f"No results for {quoted}. Try other wording or fewer terms.")
        if filtered := filters_line(result):
            out.append(f"\n{_one_line(filtered)}", style="dim")
        return out
    count = len(result.sources)
    out.append(f"{count} source{'s' if count != 1 else ''} for {quoted}", style="bold")
    origin = [result.provider] if result.provider else []
    out.append(f" ({', '.join([*origin, 'cached'] if cached else origin)})" if origin else "")
    if filtered := filters_line(result):
        out.append(f"\n{_one_line(filtered)}", style="dim")
    if result.content:
        out.append("\n\n" + clean(result.content.strip()))
    for number, source in enumerate(result.sources, 1):
        out.append(f"\n\n[{number}] ", style="bold cyan")
        out.append(_one_line(source.title or "") or source.url, style="bold")
        if source.published_at:
            out.append(f" · {_one_line(source.published_at)}", style="dim")
        out.append(f"\n    {_one_line(source.url)}", style="blue")
        if source.snippet:
            out.append(f"\n    {_one_line(source.snippet)}")
        if best := result.passages.get(source.url):
            out.append(f"\n    » {_clip(_one_line(best[0].text), _PASSAGE_CHARS)}", style="dim")
    _sections(out, result)
    if result.truncated:
        out.append("\n\nMore sources were found; --max-results N shows more.", style="dim")
    return out


def _sections(out: Text, result: SearchToolResult) -> None:
    """The answers' citations, the related questions and the provider's own searches."""
    numbers = {source.url: n for n, source in enumerate(result.sources, 1)}
    if result.citations:
        out.append("\n\nCitations", style="bold")
        for citation in result.citations:
            number = numbers.get(citation.url)
            out.append("\n  " + (f"[{number}] " if number else ""), style="cyan")
            if citation.title:
                out.append(f"{_one_line(citation.title)} · ")
            out.append(_one_line(citation.url), style="blue")
            if citation.cited_text:
                cited = _clip(_one_line(citation.cited_text), _PASSAGE_CHARS)
                out.append(f"\n    “{cited}”", style="dim")
    if result.related:
        out.append("\n\nRelated", style="bold")
        for question in result.related:
            out.append(f"\n  - {_one_line(question)}")
    if result.provider_queries:
        out.append("\n\nThe provider searched for", style="bold")
        for query in result.provider_queries:
            out.append(f"\n  - {_one_line(query)}", style="dim")


def fetch_text(piece: FetchToolResult, *, cached: bool, raw: bool = False) -> Text:
    """The page's text under a short header, and a note for every cut, naming ``--start``."""
    from ..tools.fetch import limit_words

    out = Text()
    if piece.title:
        out.append(_one_line(piece.title) + "\n", style="bold")
    facts = [f"HTTP {piece.status_code}"] if piece.status_code != 200 else []
    facts.append(piece.kind + (" (raw)" if raw else ""))
    if piece.start or piece.next_start is not None:
        end = piece.start + len(piece.content)
        facts.append(f"characters {piece.start:,}–{end:,} of {piece.total_chars:,}")
    if piece.rendered_by == "browser":
        facts.append("rendered by the browser")
    if cached:
        facts.append("cached")
    out.append(f"{_one_line(piece.url)} · {' · '.join(facts)}\n\n", style="dim")
    body = clean(piece.content).strip("\n")
    out.append(body if body.strip() else "(the page has no readable text)")
    if piece.next_start is not None:
        left = piece.total_chars - piece.next_start
        again = ["webreach", "fetch", piece.url, *(["--raw"] if raw else [])]
        out.append(
            f"\n\n[{left:,} more characters; continue with: "
            f"{shlex.join([*again, '--start', str(piece.next_start)])}]",
            style="yellow",
        )
    if piece.body_truncated:
        out.append(
            "\n\n[Only the first part of the document was read: it is larger than "
            f"{limit_words(piece)}.]",
            style="yellow",
        )
    return out


_TERMINAL_VARIABLES = ("FORCE_COLOR", "TTY_COMPATIBLE")


def print_text(text: Text) -> None:
    """Styled on a terminal, plain in a pipe; never wrapped, so URLs stay whole. Rich decides
    what a terminal is wherever its variables (``FORCE_COLOR``, ``TTY_COMPATIBLE``) are set."""
    if not sys.stdout.isatty() and not any(map(os.environ.get, _TERMINAL_VARIABLES)):
        sys.stdout.write(text.plain + "\n")
        sys.stdout.flush()
        return
    from rich.console import Console
    from rich.text import Text as RichText

    styled = RichText()
    for run, style in text.runs:
        styled.append(run, style=style)
    Console(soft_wrap=True, highlight=False, markup=False, emoji=False).print(styled)
    sys.stdout.flush()
