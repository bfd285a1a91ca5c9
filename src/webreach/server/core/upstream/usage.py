"""The tokens of a relayed stream, read from its usage chunk, for the key's usage, the access
log and the metrics.

A relayed Chat stream only carries usage when ``stream_options.include_usage`` asks for it, and
most clients (Open WebUI's usual path among them) do not ask. The server asks on their behalf
and takes the usage-only chunk out again, so each client still gets the stream it asked for.
Only the usage object is decoded, found by a bytes search: the relay stays a byte copier.
"""

from __future__ import annotations

import json

from ..turn.events import Usage
from ..turn.shape import JSON

__all__ = ["asking_usage", "has_usage", "read_usage"]

_MARKS = (b'"usage":{', b'"usage": {')
_NO_CHOICES = (b'"choices":[]', b'"choices": []')
_DECODER = json.JSONDecoder()


def asking_usage(body: JSON) -> tuple[JSON, bool]:
    """``body`` asking the upstream for a stream's usage chunk, and whether the client had not
    asked for it itself (its chunk is then hidden from the client)."""
    options = body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage") is True:
        return body, False
    merged = {**(options if isinstance(options, dict) else {}), "include_usage": True}
    return {**body, "stream_options": merged}, True


def has_usage(block: bytes) -> bool:
    """Whether ``block`` may hold a usage object (``"usage":null`` on every chunk does not)."""
    return _MARKS[0] in block or _MARKS[1] in block


def read_usage(block: bytes, hide: bool) -> tuple[bytes, Usage | None]:
    """The last usage ``block`` (whole events) reports, and the block as the client gets it:
    without its usage-only chunks (no choices) when ``hide``."""
    found: Usage | None = None
    kept: list[bytes] = []
    start = 0
    while (mark := _next_mark(block, start)) >= 0:
        begins = _event_start(block, start, mark)
        ends = _event_end(block, mark)
        usage = _usage_at(block, block.index(b"{", mark), ends)
        if usage is None:
            kept.append(block[start:ends])
        else:
            found = usage
            event = block[begins:ends]
            shown = not (hide and (_NO_CHOICES[0] in event or _NO_CHOICES[1] in event))
            kept.append(block[start:ends] if shown else block[start:begins])
        start = ends
    if not kept:
        return block, found
    kept.append(block[start:])
    return b"".join(kept), found


def _next_mark(block: bytes, start: int) -> int:
    marks = [at for mark in _MARKS if (at := block.find(mark, start)) >= 0]
    return min(marks) if marks else -1


def _event_start(block: bytes, start: int, at: int) -> int:
    """Where the event holding ``at`` begins: after the last blank line before it, or at
    ``start`` when the block's part from ``start`` has none (the event opens the block)."""
    starts = [
        end + size
        for sep, size in ((b"\n\n", 2), (b"\n\r\n", 3))
        if (end := block.rfind(sep, start, at)) >= 0
    ]
    return max(starts, default=start)


def _event_end(block: bytes, at: int) -> int:
    """Where the event holding ``at`` ends, its blank line included."""
    ends = [
        end + size
        for sep, size in ((b"\n\n", 2), (b"\n\r\n", 3))
        if (end := block.find(sep, at)) >= 0
    ]
    return min(ends) if ends else len(block)


def _usage_at(block: bytes, brace: int, ends: int) -> Usage | None:
    """The usage object starting at ``brace``, when it is one."""
    try:
        used, _ = _DECODER.raw_decode(block[brace:ends].decode())
    except ValueError:
        return None
    if not isinstance(used, dict):
        return None
    return Usage.of_completion({"usage": used})
