"""Messages ``document`` blocks: a PDF (base64 or by URL) or plain text, read as text for the
upstream by the fetch provider before the first step (see :mod:`..core.wire.files`)."""

from __future__ import annotations

from ..core.turn.shape import JSON
from ..core.wire.fields import Request, String, bad, validate
from ..core.wire.files import AttachedFile, decoded, file_part

__all__ = ["document_part"]


class _Source(Request):
    type: String | None = None
    media_type: String | None = None
    data: object = None
    url: String | None = None
    file_id: String | None = None
    content: object = None


class _Document(Request):
    source: _Source | None = None
    title: String | None = None


def document_part(block: JSON, path: str) -> JSON:
    """The place of one ``document`` block (``path`` names it in a refusal)."""
    document = validate(_Document, block, path)
    source = document.source
    if source is None:
        raise bad(f"{path}.source", "Field required")
    name = document.title or "document"
    where = f"{path}.source"
    if source.type == "base64":
        if not isinstance(source.data, str):
            raise bad(f"{where}.data", "must be a string")
        data, _ = decoded(source.data, where, "`data`")
        media = source.media_type or "application/pdf"
        return file_part(AttachedFile(name, where, data=data, media_type=media))
    if source.type == "text":
        if not isinstance(source.data, str):
            raise bad(f"{where}.data", "must be a string")
        data = source.data.encode()
        return file_part(AttachedFile(name, where, data=data, media_type="text/plain"))
    if source.type == "url":
        if source.url is None:
            raise bad(f"{where}.url", "must be a string")
        return file_part(AttachedFile(document.title or source.url, where, url=source.url))
    if source.type == "content":
        return {"type": "text", "text": _content_text(source.content, f"{where}.content")}
    if source.type == "file":
        raise bad(
            where,
            "a `file` source (`file_id`) is not supported: the server keeps no files; "
            "send the document as `base64`, `text` or `url`",
        )
    raise bad(f"{where}.type", "must be `base64`, `text`, `url` or `content`")


def _content_text(content: object, path: str) -> str:
    """A ``content`` source's text blocks, joined (a string is taken as it is)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise bad(path, "must be a string or an array of text blocks")
    texts = []
    for i, block in enumerate(content):
        text = block.get("text") if isinstance(block, dict) else None
        if not isinstance(text, str) or block.get("type") != "text":
            raise bad(f"{path}.{i}", "must be a `text` block")
        texts.append(text)
    return "\n\n".join(texts)
