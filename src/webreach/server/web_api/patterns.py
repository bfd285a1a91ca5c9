"""What the text fields of the web endpoints' bodies must look like: one regular expression
each, declared on the models (so pydantic checks it) and published as the field's ``pattern``
(so the OpenAPI document says exactly what is accepted).

They are JSON Schema patterns (found anywhere in the value unless anchored) checked with
Python's ``re``, whose ``\\s`` is the whitespace ``str.strip`` removes: the server trims what
these allow around a value.
"""

from __future__ import annotations

import re

__all__ = ["DOMAIN", "HTTP_URL", "NON_BLANK", "TWO_LETTERS", "http_url"]

NON_BLANK = r"\S"
"""Some character that is not whitespace."""

TWO_LETTERS = r"^\s*[A-Za-z]{2}\s*$"
"""An ISO 3166-1 or ISO 639-1 code (``DE``, ``de``), either case."""

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
DOMAIN = rf"^\s*(?:\*\.)?(?:{_LABEL}\.)*{_LABEL}\.?\s*$"
"""A host name (``python.org``); ``*.python.org`` and a final dot mean the same."""

_NAME = r"(?:[A-Za-z0-9_-]{1,63}\.)*[A-Za-z][A-Za-z0-9_-]{0,62}\.?"
"""Dot-separated ASCII labels, the last starting with a letter, as top-level domains do (so
``1.2.3.999`` is no host name)."""
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_H = r"[0-9A-Fa-f]{1,4}"
_IPV6 = (
    rf"(?:(?:{_H}:){{7}}{_H}|(?:{_H}:){{1,7}}:|(?:{_H}:){{1,6}}:{_H}"
    rf"|(?:{_H}:){{1,5}}(?::{_H}){{1,2}}|(?:{_H}:){{1,4}}(?::{_H}){{1,3}}"
    rf"|(?:{_H}:){{1,3}}(?::{_H}){{1,4}}|(?:{_H}:){{1,2}}(?::{_H}){{1,5}}"
    rf"|{_H}:(?::{_H}){{1,6}}|:(?:(?::{_H}){{1,7}}|:))"
)
_PORT = r"(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})"
HTTP_URL = (
    rf"^\s*[Hh][Tt][Tt][Pp][Ss]?://(?:{_NAME}|{_IPV4}|\[{_IPV6}\])(?::{_PORT})?"
    r"(?:[/?#][^\x00-\x20\x7f]*)?\s*$"
)
"""An http(s) URL without credentials: an ASCII host name (an international one in punycode),
a dotted IPv4 address or a bracketed IPv6 one, a port from 1 to 65535, then the path, query and
fragment in any characters but spaces and control characters (the fetcher percent-encodes)."""

_HTTP_URL = re.compile(HTTP_URL)


def http_url(value: str) -> bool:
    return _HTTP_URL.search(value) is not None
