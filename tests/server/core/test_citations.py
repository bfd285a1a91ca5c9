"""【n】 markers become citations wherever the stream happens to split them."""

from __future__ import annotations

import pytest

from webreach.server.core.turn.citations import CitationStream
from webreach.server.core.turn.events import TextCitation, TextDelta, WebSource

SOURCES = {
    1: WebSource("https://one.example/", "One", None, None, 1),
    2: WebSource("https://two.example/", None, None, None, 2),
}


def run(*chunks: str) -> tuple[str, list[TextCitation]]:
    stream = CitationStream(SOURCES.get)
    events = [event for chunk in chunks for event in stream.feed(chunk)] + stream.flush()
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == stream.text
    return text, [e for e in events if isinstance(e, TextCitation)]


def spans(citations: list[TextCitation]) -> list[tuple[str, int, int, str]]:
    return [(c.url, c.start, c.end, c.cited_text) for c in citations]


def test_markers_are_removed_and_become_citations() -> None:
    text, cited = run("Paris is the capital【1】. It is large【2】.")
    assert text == "Paris is the capital. It is large."
    assert spans(cited) == [
        ("https://one.example/", 0, 20, "Paris is the capital"),
        ("https://two.example/", 20, 33, ". It is large"),
    ]


@pytest.mark.parametrize(
    "chunks",
    [
        ("Paris【", "1", "】 rocks"),
        ("Paris", "【1】", " rocks"),
        ("Par", "is【1", "】", " rocks"),
        tuple("Paris【1】 rocks"),
    ],
)
def test_any_split_gives_the_same_result(chunks: tuple[str, ...]) -> None:
    text, cited = run(*chunks)
    assert text == "Paris rocks"
    assert spans(cited) == [("https://one.example/", 0, 5, "Paris")]


def test_adjacent_and_listed_markers_share_one_span() -> None:
    for raw in ("Fact【1】【2】.", "Fact【1, 2】.", "Fact【1，2】.", "Fact【1†source】【2】."):
        text, cited = run(raw)
        assert text == "Fact."
        assert spans(cited) == [
            ("https://one.example/", 0, 4, "Fact"),
            ("https://two.example/", 0, 4, "Fact"),
        ]


def test_unknown_numbers_are_dropped_without_moving_the_span() -> None:
    text, cited = run("Alpha【7】 beta【1】")
    assert text == "Alpha beta"
    assert spans(cited) == [("https://one.example/", 0, 10, "Alpha beta")]


def test_brackets_that_are_not_markers_stay_text() -> None:
    text, cited = run("A 【note】 and 【1x】 and an open 【3")
    assert text == "A 【note】 and 【1x】 and an open 【3"
    assert cited == []


def test_offsets_count_code_points() -> None:
    text, cited = run("冰岛人口😀约39万【1】")
    assert text == "冰岛人口😀约39万"
    assert spans(cited) == [("https://one.example/", 0, 9, "冰岛人口😀约39万")]


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        (("We build 【1】.",), "We build."),
        (("We build ", "【1】", ". Next"), "We build. Next"),
        (("We build 【1】 and more",), "We build and more"),
        (("We build 【1】\nmore",), "We build\nmore"),
        (("We build 【1】",), "We build"),
        (("Unknown 【9】, dropped",), "Unknown, dropped"),
        (("Spaces  stay  ", "here "), "Spaces  stay  here "),
        (("No marker .",), "No marker ."),
    ],
)
def test_a_removed_marker_leaves_no_space_before_what_follows(
    chunks: tuple[str, ...], expected: str
) -> None:
    text, cited = run(*chunks)
    assert text == expected
    assert all(text[c.start : c.end] == c.cited_text for c in cited)


def test_markdown_links_take_the_place_of_the_space_before_the_marker() -> None:
    stream = CitationStream(SOURCES.get, markdown=True)
    events = stream.feed("We build 【1】.") + stream.flush()
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "We build ([one.example](https://one.example/))."
