"""The server's secrets, kept out of every upstream text a client or the log sees.

An upstream may echo a key in an error (its own, or any other it was sent); the server removes
every secret it knows from what it relays, before the text goes anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

__all__ = ["MIN_SECRET_LENGTH", "Redactor"]

MIN_SECRET_LENGTH = 6
"""Shorter values are not redacted: they would match ordinary words, not hide a secret."""
HIDDEN = "***"


def _forms(secret: str) -> set[str]:
    """How ``secret`` may appear in an upstream's text: as it is, and JSON-escaped (with the
    ``\\/`` some servers write)."""
    escaped = json.dumps(secret)[1:-1]
    return {secret, escaped, escaped.replace("/", "\\/")}


class Redactor:
    """Replaces every configured secret with ``***``; cheap when none is present."""

    __slots__ = ("_bytes", "_texts")

    def __init__(self, secrets: Iterable[str | None]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if secret and len(secret) >= MIN_SECRET_LENGTH:
                forms |= _forms(secret)
        # Longest first, so a secret that contains another is hidden whole.
        self._texts = tuple(sorted(forms, key=len, reverse=True))
        self._bytes = tuple(form.encode() for form in self._texts)

    def __call__(self, text: str) -> str:
        for form in self._texts:
            if form in text:
                text = text.replace(form, HIDDEN)
        return text

    def found_in(self, data: bytes) -> bool:
        """Whether ``data`` holds a secret: the relay's check before it decodes anything."""
        for form in self._bytes:  # noqa: SIM110 - a loop, not a generator, per relayed block
            if form in data:
                return True
        return False

    def redacted_bytes(self, data: bytes) -> bytes:
        hidden = HIDDEN.encode()
        for form in self._bytes:
            data = data.replace(form, hidden)
        return data
