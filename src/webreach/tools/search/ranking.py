"""Cut rendered pages into passages and score them against queries with BM25.

Chosen by ``bench/search_substance.py``: BM25 over paragraph chunks of about 600 characters,
each chunk's score raised by half its neighbours' (an answer often sits beside the words a
query shares with the page).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["RANKINGS", "Chunk", "Ranking", "chunk_page", "rank_chunks"]

Ranking = Literal["bm25", "bm25_window"]
RANKINGS: tuple[Ranking, ...] = ("bm25", "bm25_window")
DEFAULT_RANKING: Ranking = "bm25_window"
NEIGHBOUR_WEIGHT = 0.5

TARGET_CHARS = 600
"""Paragraphs are joined up to about this size; a longer one is cut at sentence ends."""
MAX_CHARS = 1_000
K1 = 1.5
B = 0.75
_TOKEN = re.compile(r"\w\w+")
"""A word of two characters or more: ``findall`` takes each run of them whole."""
_STOPWORDS = (
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with"
)
STOPWORDS = frozenset(_STOPWORDS.split())
"""Lucene's English stop words, which carry no relevance."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“(\[A-Z0-9])")
_PDF_PAGE_MARK = re.compile(r"(?m)^--- page \d+ of \d+ ---$")


@dataclass(frozen=True, slots=True)
class Chunk:
    url: str
    position: int
    text: str


def _pieces(block: str) -> list[str]:
    """A block no longer than ``MAX_CHARS``, or its sentences regrouped up to ``TARGET_CHARS``."""
    if len(block) <= MAX_CHARS:
        return [block]
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(block):
        while len(sentence) > MAX_CHARS:
            cut = sentence.rfind(" ", 0, TARGET_CHARS)
            cut = cut if cut > 0 else TARGET_CHARS
            head, sentence = sentence[:cut], sentence[cut:].lstrip()
            if current:
                pieces.append(current)
                current = ""
            pieces.append(head)
        if current and len(current) + 1 + len(sentence) > TARGET_CHARS:
            pieces.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        pieces.append(current)
    return pieces


def chunk_page(url: str, text: str) -> list[Chunk]:
    """The page's paragraphs, short ones joined (a heading stays with what follows it)."""
    blocks = [b.strip() for b in re.split(r"\n\s*\n", _PDF_PAGE_MARK.sub("", text))]
    pieces = [p for b in blocks if b for p in _pieces(b)]
    chunks: list[str] = []
    current = ""
    for piece in pieces:
        only_heading = current.startswith("#") and "\n\n" not in current
        full = len(current) + 2 + len(piece) > TARGET_CHARS
        if current and not only_heading and (full or piece.startswith("#")):
            chunks.append(current)
            current = piece
        else:
            current = f"{current}\n\n{piece}" if current else piece
    if current:
        chunks.append(current)
    return [Chunk(url, position, chunk) for position, chunk in enumerate(chunks)]


def tokens(text: str) -> list[str]:
    return [w for w in _TOKEN.findall(text.lower()) if w not in STOPWORDS]


@dataclass(frozen=True, slots=True)
class _Counted:
    length: int
    """The chunk's words less its stop words."""
    terms: dict[str, int]
    """How often each of the queries' words occurs in it, for those that do."""


def _counted(chunk: Chunk, terms: Sequence[str]) -> _Counted:
    words = _TOKEN.findall(chunk.text.lower())
    stop = sum(map(STOPWORDS.__contains__, words))
    return _Counted(len(words) - stop, {w: n for w in terms if (n := words.count(w))})


def rank_chunks(
    chunks: Sequence[Chunk], queries: Sequence[str], method: Ranking | None = None
) -> list[float]:
    """Each chunk's relevance to the queries (its best over them); 0 for none.

    Scored as one BM25 collection (Lucene's variant: ``k1`` 1.5, ``b`` 0.75), so the chunks of
    different pages compare. A chunk's words are counted only for the queries' terms and a
    chunk is scored only where one occurs: the server ranks hundreds of chunks a turn. Plain
    Python spares the install the 73 MB of numpy a BM25 library would bring.
    """
    asked = [tokens(query) for query in queries]
    terms = list(dict.fromkeys(w for words in asked for w in words))
    counted = [_counted(chunk, terms) for chunk in chunks]
    total = len(chunks)
    average = (sum(c.length for c in counted) / total) if total else 0.0
    holding = {w: [i for i, c in enumerate(counted) if w in c.terms] for w in terms}
    best = [0.0] * total
    for words in asked:
        known = [w for w in words if holding[w]]
        if not known:
            continue
        weights = {
            w: math.log(1 + (total - len(holding[w]) + 0.5) / (len(holding[w]) + 0.5))
            for w in known
        }
        for index in sorted({i for w in known for i in holding[w]}):
            count = counted[index].terms
            norm = K1 * (1 - B + B * counted[index].length / average) if average else K1
            score = sum(weights[w] * count[w] / (norm + count[w]) for w in known if w in count)
            best[index] = max(best[index], score)
    if (method or DEFAULT_RANKING) == "bm25_window":
        return _with_neighbours(chunks, best)
    return best


def _with_neighbours(chunks: Sequence[Chunk], scores: Sequence[float]) -> list[float]:
    smoothed = list(scores)
    for index, chunk in enumerate(chunks):
        for other in (index - 1, index + 1):
            if 0 <= other < len(chunks) and chunks[other].url == chunk.url:
                smoothed[index] += NEIGHBOUR_WEIGHT * scores[other]
    return smoothed
