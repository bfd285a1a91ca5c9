"""What a response body is: classification by Content-Type, sniffing, and charset decoding."""

from __future__ import annotations

import codecs
import enum
import re

from ...seam import WebError, WebErrorCode

__all__ = ["SNIFF_BYTES", "Kind", "declared_kind", "decode_text", "final_kind", "media_type"]

SNIFF_BYTES = 1024


class Kind(enum.Enum):
    HTML = "html"
    TEXT = "text"
    PDF = "pdf"
    SNIFF = "sniff"  # no usable declaration: decide from the bytes
    PDF_OR_NOTHING = "octet"  # declared opaque bytes: a PDF is recognised, anything else refused


_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_PDF_TYPES = frozenset({"application/pdf", "application/x-pdf", "application/acrobat"})
_OPAQUE_TYPES = frozenset(
    {
        "application/octet-stream",
        "binary/octet-stream",
        "application/binary",
        "application/download",
    }
)
_UNKNOWN_TYPES = frozenset(
    {"*/*", "application/unknown", "unknown/unknown", "application/x-unknown"}
)
_TEXT_APPLICATION_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/ecmascript",
        "application/x-javascript",
        "application/x-ndjson",
        "application/jsonl",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/sql",
        "application/graphql",
        "application/x-sh",
        "application/x-httpd-php",
        "application/x-tex",
        "application/x-latex",
        "application/csv",
        "application/rtf",
    }
)
_BINARY_FAMILIES = ("image/", "audio/", "video/", "font/", "model/", "multipart/")


def media_type(content_type: str | None) -> str:
    """The bare, lower-cased media type of a Content-Type value ('' when absent or malformed)."""
    value = (content_type or "").split(";", 1)[0].strip().lower()
    return value if value.count("/") == 1 and " " not in value else ""


def _unsupported(media: str, why: str = "") -> WebError:
    return WebError(
        WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE,
        f"the response is {media}{why}; only HTML, text, JSON, XML and PDF can be read",
    )


def declared_kind(media: str) -> Kind:
    """Classify a declared media type before reading the body; refuse the unreadable at once."""
    if not media or media in _UNKNOWN_TYPES:
        return Kind.SNIFF
    if media in _HTML_TYPES:
        return Kind.HTML
    if media in _PDF_TYPES:
        return Kind.PDF
    if media in _OPAQUE_TYPES:
        return Kind.PDF_OR_NOTHING
    if (
        media.startswith("text/")
        or media in _TEXT_APPLICATION_TYPES
        or media.endswith(("+json", "+xml"))
    ):
        return Kind.TEXT
    if media.startswith(_BINARY_FAMILIES) or media.startswith("application/"):
        raise _unsupported(media)
    return Kind.SNIFF


_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Bytes that never occur in text (WHATWG MIME sniffing, "binary data byte").
_BINARY_BYTE = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")
_HTML_START = re.compile(
    rb"\s*<(?:!--|(?:!doctype\s+html|html|head|body|script|iframe|h1|div|font|table|a|style|title"
    rb"|b|br|p|meta|link)[\s>/])",
    re.IGNORECASE,
)


def _bom(data: bytes) -> tuple[str, int] | None:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding, len(bom)
    return None


def _sniff(head: bytes, charset: str | None) -> Kind | None:
    """PDF, HTML or TEXT from the first bytes; None for binary."""
    if head.lstrip().startswith(b"%PDF-"):
        return Kind.PDF
    bom = _bom(head)
    encoding, size = bom or (_lookup(charset) or "ascii", 0)
    if encoding.startswith(("utf-16", "utf-32")):
        text = head[size:].decode(encoding, errors="ignore").encode("utf-8", errors="ignore")
    elif _BINARY_BYTE.search(head[:SNIFF_BYTES]):
        return None
    else:
        text = head[size:]
    return Kind.HTML if _HTML_START.match(text) else Kind.TEXT


def final_kind(declared: Kind, media: str, head: bytes, charset: str | None = None) -> Kind:
    """Settle the kind once the first bytes are known, correcting a wrong or missing type."""
    sniffed = _sniff(head, charset)
    shown = media or "of no declared type"
    if declared is Kind.PDF:
        return Kind.PDF if sniffed in (Kind.PDF, None) else sniffed
    if sniffed is Kind.PDF:
        return Kind.PDF
    if declared is Kind.PDF_OR_NOTHING:
        raise _unsupported(shown)
    if sniffed is None:
        raise _unsupported(shown, " but its content is binary")
    return sniffed if declared is Kind.SNIFF else declared


# Labels browsers read as a superset encoding (WHATWG Encoding Standard); Python is stricter.
_SUPERSETS = {
    "ascii": "cp1252",
    "iso8859-1": "cp1252",
    "iso8859-9": "cp1254",
    "shift_jis": "cp932",
    "euc_kr": "cp949",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "big5": "big5hkscs",
}
_META_CHARSET = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:+-]+)", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9_.:+-]+)")
_DETECT_BYTES = 256 * 1024
_NEAR_TIE = 0.1
_DECODE_STEP = 256 * 1024


def _lookup(label: str | None) -> str | None:
    if not label:
        return None
    try:
        name = codecs.lookup(label.strip().strip("\"'")).name
    except LookupError:
        return None
    return _SUPERSETS.get(name, name)


def _declared_in_document(data: bytes, kind: Kind) -> str | None:
    head = data[:SNIFF_BYTES]
    match = _XML_ENCODING.match(head.lstrip())
    if match is None and kind is Kind.HTML:
        match = _META_CHARSET.search(head)
    encoding = _lookup(match.group(1).decode("ascii")) if match else None
    # A page can only say it is UTF-16 in markup if it is not (it was read as ASCII).
    return "utf-8" if encoding and encoding.startswith("utf-16") else encoding


def _detect(data: bytes, complete: bool) -> str:
    sample = data[:_DETECT_BYTES]
    try:
        codecs.getincrementaldecoder("utf-8")().decode(
            sample, final=complete and len(data) <= _DETECT_BYTES
        )
    except UnicodeDecodeError:
        pass
    else:
        return "utf-8"
    import charset_normalizer  # loaded by the first page that is not UTF-8

    matches = charset_normalizer.from_bytes(sample)
    best = matches.best()
    if best is None:
        return "cp1252"
    # Short Western text fits several Latin code pages about equally; windows-1252 is by far the
    # most common of them on the web, so it wins a near tie.
    western = next((m for m in matches if _lookup(m.encoding) == "cp1252"), None)
    if western is not None and western.chaos - best.chaos < _NEAR_TIE:
        return "cp1252"
    return _lookup(best.encoding) or "cp1252"


def choose_encoding(
    data: bytes, header_charset: str | None, kind: Kind, complete: bool = True
) -> str:
    """Header, then BOM, then ``<meta charset>``/XML declaration, then detection."""
    bom = _bom(data)
    return (
        _lookup(header_charset)
        or (bom[0] if bom else None)
        or _declared_in_document(data, kind)
        or _detect(data, complete)
    )


def decode_text(
    data: bytes, header_charset: str | None, kind: Kind, *, complete: bool, max_chars: int
) -> tuple[str, bool]:
    """Decode ``data``, replacing what cannot be decoded; return the text and whether it was cut.

    ``complete=False`` (a body cut at the byte cap) drops a trailing partial character.
    """
    encoding = choose_encoding(data, header_charset, kind, complete)
    bom = _bom(data)
    if bom is not None and codecs.lookup(bom[0]).name == codecs.lookup(encoding).name:
        data = data[bom[1] :]
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    parts: list[str] = []
    count = 0
    view = memoryview(data)
    # Decode in steps and stop once past the cap, so the text never outgrows it by much.
    for start in range(0, max(len(data), 1), _DECODE_STEP):
        last = start + _DECODE_STEP >= len(data)
        part = decoder.decode(view[start : start + _DECODE_STEP], final=complete and last)
        parts.append(part)
        count += len(part)
        if count > max_chars:
            return "".join(parts)[:max_chars], True
    return "".join(parts), False
