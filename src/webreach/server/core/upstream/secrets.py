"""The server's secrets, kept out of every upstream text a client or the log sees.

An upstream may echo a key in an error (its own, or any other it was sent), and a model may
write one into its answer (prompt-injected or misconfigured), token by token; the server
removes every secret it knows from what it relays, before the text goes anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

__all__ = ["MIN_SECRET_LENGTH", "Redactor", "TextRedaction"]

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

    @property
    def active(self) -> bool:
        """Whether there is anything to hide (a server without secrets skips all checks)."""
        return bool(self._texts)

    def __init__(self, secrets: Iterable[str | None]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if secret and len(secret) >= MIN_SECRET_LENGTH:
                forms |= _forms(secret)
        # Longest first, so a secret that contains another is hidden whole.
        self._texts = tuple(sorted(forms, key=len, reverse=True))
        self._bytes = tuple(form.encode() for form in self._texts)

    @property
    def forms(self) -> tuple[str, ...]:
        """Every way a secret is looked for, longest first."""
        return self._texts

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

    def masked_bytes(self, data: bytes) -> bytes:
        """Like :meth:`redacted_bytes`, keeping the length: for a body whose size was sent."""
        for form in self._bytes:
            data = data.replace(form, b"*" * len(form))
        return data

    def unfinished(self, text: str) -> int:
        """How many characters at the end of ``text`` could be the start of a secret: held
        back from a stream until the next piece says whether the secret follows."""
        longest = 0
        for form in self._texts:
            window = text[-(len(form) - 1) :]
            start = window.find(form[0])
            while start >= 0:
                if form.startswith(window[start:]):
                    longest = max(longest, len(window) - start)
                    break
                start = window.find(form[0], start + 1)
        return longest


class TextRedaction:
    """One text that streams in pieces (an answer, its reasoning, a call's arguments): a
    secret split across pieces is hidden whole, so what goes out never holds part of one."""

    __slots__ = ("_held", "_redactor")

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._held = ""

    def feed(self, piece: str) -> str:
        """What of the text so far may go out now; a tail that may begin a secret waits."""
        text = self._redactor(self._held + piece)
        keep = self._redactor.unfinished(text)
        self._held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep] if keep else text

    @property
    def holding(self) -> bool:
        return bool(self._held)

    def flush(self) -> str:
        """The text's end: what was held back was not a secret."""
        held, self._held = self._held, ""
        return held
