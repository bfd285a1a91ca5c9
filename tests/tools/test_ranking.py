"""Passage ranking: BM25 as the textbook states it, whatever shortcuts the ranker takes."""

from __future__ import annotations

import math
import re
from collections import Counter

import pytest

from webreach.tools.search.ranking import K1, STOPWORDS, B, Chunk, rank_chunks

CHUNKS = [
    Chunk("https://a.example/", 0, "Iceland had about 390,000 inhabitants in 2024."),
    Chunk("https://a.example/", 1, "The population of Iceland grew; the capital holds two thirds."),
    Chunk("https://a.example/", 2, "Fishing and tourism employ most of them, as it is and was."),
    Chunk("https://b.example/", 0, "Reykjavík's population: Reykjavík, Kópavogur, Hafnarfjörður."),
    Chunk("https://b.example/", 1, "İstanbul ist größer als Reykjavík; STRAßE und Straße."),
    Chunk("https://c.example/", 0, "Nothing but a_b snake_case words and x y z single letters."),
    Chunk("https://c.example/", 1, ""),
]


def textbook(chunks: list[Chunk], queries: list[str]) -> list[float]:
    """Every word counted, every chunk scored: the plain form the ranker must equal."""

    def words(text: str) -> list[str]:
        return [w for w in re.findall(r"(?u)\b\w\w+\b", text.lower()) if w not in STOPWORDS]

    counts = [Counter(words(c.text)) for c in chunks]
    lengths = [sum(c.values()) for c in counts]
    average = sum(lengths) / len(lengths)
    frequency: Counter[str] = Counter()
    for count in counts:
        frequency.update(count.keys())
    best = [0.0] * len(chunks)
    for query in queries:
        known = [w for w in words(query) if w in frequency]
        weights = {
            w: math.log(1 + (len(chunks) - frequency[w] + 0.5) / (frequency[w] + 0.5))
            for w in known
        }
        for index, count in enumerate(counts):
            norm = K1 * (1 - B + B * lengths[index] / average) if average else K1
            score = sum(weights[w] * count[w] / (norm + count[w]) for w in known if count[w])
            best[index] = max(best[index], score)
    return best


@pytest.mark.parametrize(
    "queries",
    [
        ["population of Iceland"],
        ["Iceland Iceland inhabitants", "what is the capital"],
        ["reykjavík population", "İSTANBUL straße", "snake_case"],
        ["the and of", "x y z"],
        ["nowhere at all"],
        [],
    ],
)
def test_scores_are_bm25_over_every_word_of_the_chunks(queries: list[str]) -> None:
    assert rank_chunks(CHUNKS, queries, "bm25") == textbook(CHUNKS, queries)


def test_a_chunk_is_raised_by_half_its_neighbours_on_the_same_page_only() -> None:
    alone = rank_chunks(CHUNKS, ["population"], "bm25")
    windowed = rank_chunks(CHUNKS, ["population"], "bm25_window")
    assert alone[1] > 0 and alone[3] > 0
    assert windowed[0] == alone[0] + 0.5 * alone[1]
    assert windowed[2] == alone[2] + 0.5 * alone[1], "b.example's first chunk is another page"
    assert windowed[3] == alone[3] + 0.5 * alone[4]


def test_no_chunks_no_scores() -> None:
    assert rank_chunks([], ["population"]) == []
