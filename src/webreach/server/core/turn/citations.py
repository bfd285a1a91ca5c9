"""Turn the model's 【n】 markers into citations, across arbitrary stream chunk boundaries.

The model is told to cite numbered sources as 【n】. The text returned to the client has no
markers: each one becomes a :class:`TextCitation` at that point, spanning the text since the
previous citation point. A marker for an unknown number is dropped.

In ``markdown`` style the cited spans also carry their sources as inline links, written into the
text right after the citation point, for clients that show no annotations (Codex, terminals).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

from .events import TextCitation, TextDelta, WebSource

__all__ = ["CitationStream", "markdown_links"]

_OPEN, _CLOSE = "【", "】"
_MAX_MARKER = 40
_MARKER_BODY = re.compile(r"\s*\d+(?:\s*[,，、;；]\s*\d+)*\s*(?:†[^】]*)?")
_NUMBER = re.compile(r"\d+")
_TIGHT = frozenset(".,;:!?)]}…。，、；：！？）")
"""What follows a word without a space: a space before a removed marker is dropped before it."""


class CitationStream:
    """Feed raw model text; get clean text deltas and citations, in order."""

    def __init__(
        self, lookup: Callable[[int], WebSource | None], *, markdown: bool = False
    ) -> None:
        self._lookup = lookup
        self._markdown = markdown
        self._linked: list[WebSource] = []
        self._pending = ""
        self._position = 0
        self._span_start = 0
        self._span_text = ""
        self._since_point = ""
        self._held = ""
        self._after_marker = False
        self.text = ""

    def feed(self, chunk: str) -> list[TextDelta | TextCitation]:
        out: list[TextDelta | TextCitation] = []
        data = self._pending + chunk
        self._pending = ""
        while data:
            opening = data.find(_OPEN)
            if opening < 0:
                self._emit(data, out)
                break
            self._emit(data[:opening], out)
            data = data[opening:]
            closing = data.find(_CLOSE)
            if closing < 0:
                if len(data) <= _MAX_MARKER and _could_be_marker(data[1:]):
                    self._pending = data
                    break
                self._emit(data[0], out)
                data = data[1:]
                continue
            body = data[1:closing]
            if _MARKER_BODY.fullmatch(body):
                self._cite(body, out)
                data = data[closing + 1 :]
            else:
                self._emit(data[0], out)
                data = data[1:]
        return out

    def flush(self) -> list[TextDelta | TextCitation]:
        """End of text: an unfinished marker is just text."""
        out: list[TextDelta | TextCitation] = []
        pending, self._pending = self._pending, ""
        self._emit(pending, out)
        self._release_held("", out)
        self._write_links(out)
        return out

    def _write_links(self, out: list[TextDelta | TextCitation]) -> None:
        """The links of the citation point just passed, once its markers are all read; they
        belong to no cited span."""
        if not self._linked:
            return
        links, self._linked = markdown_links(self._linked), []
        out.append(TextDelta(links, links=True))
        self.text += links
        self._position += len(links)

    def _emit(self, text: str, out: list[TextDelta | TextCitation]) -> None:
        """Text as it comes, less its trailing spaces, which wait for what follows them: a
        marker between them and punctuation ("build 【1】.") would leave "build ." behind."""
        if not text:
            return
        self._release_held(text, out)
        self._write_links(out)
        body = text.rstrip(" ")
        self._held = text[len(body) :]
        if body:
            self._add(body, out)

    def _release_held(self, following: str, out: list[TextDelta | TextCitation]) -> None:
        held, self._held = self._held, ""
        after_marker, self._after_marker = self._after_marker, False
        if not held:
            return
        if after_marker and (self._linked or not following[:1].strip() or following[0] in _TIGHT):
            return
        self._add(held, out)

    def _add(self, text: str, out: list[TextDelta | TextCitation]) -> None:
        out.append(TextDelta(text))
        self.text += text
        self._position += len(text)
        self._since_point += text

    def _cite(self, body: str, out: list[TextDelta | TextCitation]) -> None:
        self._after_marker = bool(self._held)
        sources = [
            source
            for number in _NUMBER.findall(body.split("†", 1)[0])
            if (source := self._lookup(int(number))) is not None
        ]
        if not sources:
            return
        if self._since_point:
            self._span_start = self._position - len(self._since_point)
            self._span_text = self._since_point
            self._since_point = ""
        if self._markdown:
            self._linked.extend(s for s in sources if s not in self._linked)
        for source in sources:
            out.append(
                TextCitation(
                    url=source.url,
                    title=source.title,
                    start=self._span_start,
                    end=self._position,
                    cited_text=self._span_text,
                    snippet=source.snippet,
                )
            )


def markdown_links(sources: list[WebSource]) -> str:
    """`` ([site](url), …)``: each source once, named by its host, its URL safe in Markdown."""
    seen: dict[str, str] = {}
    for source in sources:
        host = urlsplit(source.url).hostname or source.url
        seen.setdefault(source.url, host.removeprefix("www."))
    links = ", ".join(f"[{name}]({_safe_url(url)})" for url, name in seen.items())
    return f" ({links})"


def _safe_url(url: str) -> str:
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def _could_be_marker(partial: str) -> bool:
    """Whether an unclosed ``【…`` may still become a marker once more text arrives."""
    return bool(re.fullmatch(r"\s*(?:\d+(?:\s*[,，、;；]\s*\d*)*\s*)?(?:†[^】]*)?", partial))
