"""Pages read from links travel back to the client encrypted, so the server keeps no state.

An encrypted page is the page text with its URL, title and date, encrypted and authenticated with
AES-GCM under a key derived from ``WEBREACH_SIGNING_KEY``. Replicas that share the key can
restore each other's pages; a missing, altered or foreign token restores nothing.
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

__all__ = ["PageCipher", "ReadPage"]

_CONTEXT = b"webreach sealed page v1"  # fixed: tokens of earlier releases still decrypt
_NONCE_BYTES = 12


@dataclass(frozen=True, slots=True)
class ReadPage:
    url: str
    title: str | None
    published_at: str | None
    text: str


class PageCipher:
    """Encrypts and decrypts pages; with no key, a random one lives as long as the process."""

    def __init__(self, secret: str | None) -> None:
        self.ephemeral = not secret
        material = secret.encode() if secret else os.urandom(32)
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_CONTEXT).derive(material)
        self._aead = AESGCM(key)

    def encrypt(self, page: ReadPage) -> str:
        nonce = os.urandom(_NONCE_BYTES)
        plain = json.dumps(asdict(page), ensure_ascii=False, separators=(",", ":")).encode()
        token = nonce + self._aead.encrypt(nonce, plain, _CONTEXT)
        return base64.urlsafe_b64encode(token).decode("ascii")

    def decrypt(self, token: object) -> ReadPage | None:
        """The page inside ``token``, or None when this key did not encrypt it."""
        if not isinstance(token, str) or not token:
            return None
        try:
            raw = base64.urlsafe_b64decode(token.encode("ascii"))
            plain = self._aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], _CONTEXT)
            data = json.loads(plain)
            return ReadPage(
                url=str(data["url"]),
                title=data.get("title"),
                published_at=data.get("published_at"),
                text=str(data["text"]),
            )
        except (InvalidTag, ValueError, KeyError, TypeError, binascii.Error, UnicodeError):
            return None
