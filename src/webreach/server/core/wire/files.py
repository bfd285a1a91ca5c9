"""Files a client attaches to a message (Responses ``input_file``, Messages ``document``),
read as text for the upstream by the fetch provider, as a fetched page of that type is read.

Parsing a request is synchronous, so a codec leaves a :func:`file_part` where the file was;
the loop reads every one (:func:`read_files`) before the first upstream call, so a file that
cannot be read is still an HTTP 400. A file is bounded by the fetch limits
(``WEBREACH_FETCH_MAX_BYTES``; a PDF past it is refused, HTML or text is cut there).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from ....seam import FetchRequest, WebError, WebErrorCode, WebRuntime
from ....tools import render_body
from ..turn.errors import RequestError
from ..turn.shape import JSON
from .fields import bad

__all__ = ["AttachedFile", "decoded", "file_part", "has_files", "read_files"]

_PART = "webreach_file"
_LIMIT = "WEBREACH_FETCH_MAX_BYTES"


@dataclass(frozen=True, slots=True)
class AttachedFile:
    """One attached file: its bytes, or a URL to fetch; ``param`` names the request field."""

    name: str
    param: str
    data: bytes | None = None
    media_type: str | None = None
    url: str | None = None


def decoded(value: str, param: str, what: str) -> tuple[bytes, str | None]:
    """The bytes of base64 ``value`` (or of a ``data:<type>;base64,`` URL) and its media type."""
    media: str | None = None
    if value.startswith("data:"):
        head, _, value = value.partition(",")
        if not head.endswith(";base64"):
            raise RequestError(
                f"{param}: {what} must be base64 (a `;base64,` data URL)", param=param
            )
        media = head.removeprefix("data:").removesuffix(";base64") or None
    try:
        return base64.b64decode(value, validate=True), media
    except (binascii.Error, ValueError):
        raise bad(param, f"{what} is not valid base64") from None


def file_part(attached: AttachedFile) -> JSON:
    """A content part holding the place of a file until :func:`read_files` reads it."""
    return {"type": _PART, _PART: attached}


def has_files(messages: list[JSON]) -> bool:
    return any(_attached(part) is not None for m in messages for part in _parts(m))


async def read_files(messages: list[JSON], runtime: WebRuntime) -> list[JSON]:
    """``messages`` with every attached file as a text part: its name, then its text."""
    if not has_files(messages):
        return messages
    read: list[JSON] = []
    for message in messages:
        parts = _parts(message)
        if not any(_attached(part) is not None for part in parts):
            read.append(message)
            continue
        content: list[JSON] = []
        for part in parts:
            attached = _attached(part)
            content.append(part if attached is None else await _read(attached, runtime))
        read.append({**message, "content": content})
    return read


def _parts(message: JSON) -> list[JSON]:
    content = message.get("content")
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


def _attached(part: JSON) -> AttachedFile | None:
    value = part.get(_PART) if part.get("type") == _PART else None
    return value if isinstance(value, AttachedFile) else None


async def _read(attached: AttachedFile, runtime: WebRuntime) -> JSON:
    try:
        if attached.url is not None:
            result = await runtime.fetch(FetchRequest(attached.url))
        else:
            data = attached.data or b""
            result = await runtime.read_document(data, attached.media_type, attached.name)
    except WebError as error:
        raise _refused(attached, error) from None
    text = render_body(result).text
    cut = " (cut at the fetch limit)" if result.truncated else ""
    header = f"File: {attached.name}{cut}"
    return {"type": "text", "text": f'<file name="{attached.name}">\n{header}\n\n{text}\n</file>'}


def _refused(attached: AttachedFile, error: WebError) -> RequestError:
    where, param = attached.param, attached.param.split(".", 1)[0]
    if error.code == WebErrorCode.WEB_FETCH_TOO_LARGE:
        return RequestError(
            f"{where}: the file {attached.name} is larger than the fetch limit ({_LIMIT}): "
            f"{error.message}",
            param=param,
        )
    return RequestError(
        f"{where}: the file {attached.name} could not be read: {error.message}", param=param
    )
