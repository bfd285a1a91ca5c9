"""Responses ``input_file`` parts: a PDF or text file as base64 ``file_data`` (a data URL) or
a ``file_url`` the fetcher reads; the loop turns each into text for the upstream."""

from __future__ import annotations

from ..core.turn.errors import RequestError
from ..core.turn.shape import JSON
from ..core.wire.fields import Request, String
from ..core.wire.files import AttachedFile, decoded, file_part
from .shapes_in import read

__all__ = ["input_file"]

_PARAM = "input"


class _FilePart(Request):
    file_data: String | None = None
    file_url: String | None = None
    file_id: String | None = None
    filename: String | None = None


def input_file(part: object) -> JSON:
    """The place of one ``input_file`` part, to be read before the first step."""
    given = read(_FilePart, part, "input: an `input_file` part has a wrong field")
    if given.file_id is not None:
        raise RequestError(
            "input: `input_file` with a `file_id` is not supported (the server keeps no "
            "files); send `file_data` or `file_url`",
            param=_PARAM,
        )
    if given.file_data is not None:
        data, media = decoded(given.file_data, _PARAM, "`input_file.file_data`")
        name = given.filename or "file"
        return file_part(AttachedFile(name, _PARAM, data=data, media_type=media or _by_name(name)))
    if given.file_url is not None:
        name = given.filename or given.file_url
        return file_part(AttachedFile(name, _PARAM, url=given.file_url))
    raise RequestError("input: `input_file` needs `file_data` or `file_url`", param=_PARAM)


def _by_name(name: str) -> str | None:
    """A media type from the file name when the data URL gave none (the content is sniffed
    when this is None too)."""
    return "application/pdf" if name.lower().endswith(".pdf") else None
