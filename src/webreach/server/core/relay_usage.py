"""The tokens of a relayed stream, read from its usage chunk, for the key's usage, the access
log and the metrics.

A relayed Chat stream only carries usage when ``stream_options.include_usage`` asks for it, and
most clients (Open WebUI's usual path among them) do not ask. The server asks on their behalf
and takes the usage-only chunk out again, so each client still gets the stream it asked for.
"""

from __future__ import annotations

import json
import re

from .events import Usage
from .turn import JSON

__all__ = ["asking_usage", "has_usage", "read_usage"]

_MARKS = (b'"usage":{', b'"usage": {')
_EVENT_END = re.compile(rb"\r?\n\r?\n")


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
    without its usage-only chunk (no choices) when ``hide``."""
    found: Usage | None = None
    kept: list[bytes] = []
    start = 0
    for end in _EVENT_END.finditer(block):
        event = block[start : end.end()]
        start = end.end()
        if not has_usage(event):
            kept.append(event)
            continue
        chunk = _data(event)
        used = chunk.get("usage") if chunk is not None else None
        if chunk is None or not isinstance(used, dict):
            kept.append(event)
            continue
        found = Usage.of_completion(chunk)
        if not (hide and chunk.get("choices") == []):
            kept.append(event)
    kept.append(block[start:])
    return b"".join(kept), found


def _data(event: bytes) -> dict[str, object] | None:
    """The JSON object an event's ``data:`` lines carry, if it is one."""
    lines = [
        line[5:].removeprefix(b" ") for line in event.splitlines() if line.startswith(b"data:")
    ]
    try:
        parsed = json.loads(b"\n".join(lines))
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None
