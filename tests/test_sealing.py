"""Sealed pages open only under the key that sealed them, and never when altered."""

from __future__ import annotations

import pytest

from webreach.server.core.sealing import PageSealer, SealedPage

PAGE = SealedPage("https://example.com/a", "Title", "2026-01-02", "Página — 页面 text")


def test_a_seal_opens_under_the_same_secret_anywhere() -> None:
    token = PageSealer("shared secret").seal(PAGE)
    assert PageSealer("shared secret").open(token) == PAGE
    assert "Página" not in token and "example.com" not in token


def test_two_seals_of_one_page_differ() -> None:
    sealer = PageSealer("k")
    assert sealer.seal(PAGE) != sealer.seal(PAGE)


@pytest.mark.parametrize(
    "token",
    ["", "not base64 !!", "AAAA", None, 42],
)
def test_garbage_opens_nothing(token: object) -> None:
    assert PageSealer("k").open(token) is None


def test_altered_or_foreign_seals_open_nothing() -> None:
    token = PageSealer("k").seal(PAGE)
    flipped = token[:20] + ("A" if token[20] != "A" else "B") + token[21:]
    assert PageSealer("k").open(flipped) is None
    assert PageSealer("other").open(token) is None
    assert PageSealer(None).open(token) is None


def test_without_a_secret_the_key_lives_with_the_sealer() -> None:
    sealer = PageSealer(None)
    assert sealer.ephemeral
    assert sealer.open(sealer.seal(PAGE)) == PAGE
    assert PageSealer(None).open(sealer.seal(PAGE)) is None
