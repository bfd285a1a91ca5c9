"""Encrypted pages decrypt only under the key that encrypted them, and never when altered."""

from __future__ import annotations

import pytest

from webreach.server.core.state.page_cipher import PageCipher, ReadPage

PAGE = ReadPage("https://example.com/a", "Title", "2026-01-02", "Página — 页面 text")


def test_a_token_decrypts_under_the_same_secret_anywhere() -> None:
    token = PageCipher("shared secret").encrypt(PAGE)
    assert PageCipher("shared secret").decrypt(token) == PAGE
    assert "Página" not in token and "example.com" not in token


def test_two_encryptions_of_one_page_differ() -> None:
    cipher = PageCipher("k")
    assert cipher.encrypt(PAGE) != cipher.encrypt(PAGE)


@pytest.mark.parametrize(
    "token",
    ["", "not base64 !!", "AAAA", None, 42],
)
def test_garbage_decrypts_to_nothing(token: object) -> None:
    assert PageCipher("k").decrypt(token) is None


def test_altered_or_foreign_tokens_decrypt_nothing() -> None:
    token = PageCipher("k").encrypt(PAGE)
    flipped = token[:20] + ("A" if token[20] != "A" else "B") + token[21:]
    assert PageCipher("k").decrypt(flipped) is None
    assert PageCipher("other").decrypt(token) is None
    assert PageCipher(None).decrypt(token) is None


def test_without_a_secret_the_key_lives_with_the_cipher() -> None:
    cipher = PageCipher(None)
    assert cipher.ephemeral
    assert cipher.decrypt(cipher.encrypt(PAGE)) == PAGE
    assert PageCipher(None).decrypt(cipher.encrypt(PAGE)) is None
