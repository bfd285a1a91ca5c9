"""Pages read from links travel back to the client sealed, so the server keeps no state.

A sealed page is the page text with its URL, title and date, encrypted and authenticated with
AES-GCM under a key derived from ``WEBREACH_SIGNING_KEY``. Replicas that share the key can
restore each other's pages; a missing, altered or foreign seal restores nothing.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from dataclasses import asdict, dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

__all__ = ["PageSealer", "SealedPage"]

_CONTEXT = b"webreach sealed page v1"
_NONCE_BYTES = 12


@dataclass(frozen=True, slots=True)
class SealedPage:
    url: str
    title: str | None
    published_at: str | None
    text: str


class PageSealer:
    """Seals and opens pages; with no key, a random one lives as long as the process."""

    def __init__(self, secret: str | None) -> None:
        self.ephemeral = not secret
        material = secret.encode() if secret else os.urandom(32)
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_CONTEXT).derive(material)
        self._aead = AESGCM(key)

    def seal(self, page: SealedPage) -> str:
        nonce = os.urandom(_NONCE_BYTES)
        plain = json.dumps(asdict(page), ensure_ascii=False, separators=(",", ":")).encode()
        sealed = nonce + self._aead.encrypt(nonce, plain, _CONTEXT)
        return base64.urlsafe_b64encode(sealed).decode("ascii")

    def open(self, token: object) -> SealedPage | None:
        """The page inside ``token``, or None when it is not a seal of this key."""
        if not isinstance(token, str) or not token:
            return None
        try:
            raw = base64.urlsafe_b64decode(token.encode("ascii"))
            plain = self._aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], _CONTEXT)
            data = json.loads(plain)
            return SealedPage(
                url=str(data["url"]),
                title=data.get("title"),
                published_at=data.get("published_at"),
                text=str(data["text"]),
            )
        except (InvalidTag, ValueError, KeyError, TypeError, binascii.Error, UnicodeError):
            return None
