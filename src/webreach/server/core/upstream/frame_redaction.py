"""A relayed stream with no secret in it, one the upstream splits across frames included.

The relay passes frames on as bytes, and a secret inside one frame is found by a bytes search.
A model that writes a secret token by token spreads it over frames of a character or a few, so
no search of one frame can see it: a frame with a string that ends the way a secret begins (one
pass of a regular expression over the bytes), and every frame while such a tail waits, has its
texts read (one typed parse) and goes out with that tail held back until the next frame says
whether a secret follows. A frame is written anew only when its texts change.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from ..wire.framing import dumps
from .chunk_redaction import ChunkRedaction
from .chunks import ChatChunk
from .secrets import Redactor

__all__ = ["RelayedSecrets"]


class RelayedSecrets:
    """What of a relayed stream's frames the client may see, frame block by frame block."""

    __slots__ = ("_redactor", "_starts", "_texts")

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._starts = _string_ends(redactor.forms)
        self._texts = ChunkRedaction(redactor)

    def passed(self, block: bytes) -> bytes:
        """``block`` (whole events) with every secret, and every secret's start, held back."""
        if self._texts.holding or self._starts.search(block):
            block = b"".join(self._event(event) for event in _events(block))
        if self._redactor.found_in(block):
            block = self._redactor.redacted_bytes(block)
        return block

    def _event(self, event: bytes) -> bytes:
        """One event, decoded and written anew only when its texts change."""
        lines = event.split(b"\n")
        at = [n for n, line in enumerate(lines) if line.startswith(b"data:")]
        if len(at) != 1:
            return event
        data = lines[at[0]][5:].strip()
        if not data.startswith(b"{"):
            return event
        try:
            chunk = ChatChunk.model_validate_json(data)
        except ValidationError:
            return event
        redacted = self._texts.chunk(chunk)
        if redacted is chunk or redacted.first is None:
            return event
        raw = json.loads(data)
        _written(raw, redacted)
        lines[at[0]] = b"data: " + dumps(raw).encode()
        return b"\n".join(lines)


def _events(block: bytes) -> list[bytes]:
    parts = block.split(b"\n\n")
    events = [part + b"\n\n" for part in parts[:-1]]
    return [*events, parts[-1]] if parts[-1] else events


def _string_ends(forms: tuple[str, ...]) -> re.Pattern[bytes]:
    """A JSON string value (not a key) that ends with a secret's first characters, any number
    of them: each form as a chain of optional characters, then the closing quote."""
    chains = []
    for form in forms:
        data = form.encode()
        chain = b""
        for position in range(len(data) - 1, 0, -1):
            chain = b"(?:" + re.escape(data[position : position + 1]) + chain + b")?"
        chains.append(re.escape(data[:1]) + chain)
    return re.compile(b"(?:" + b"|".join(chains) + rb')"(?![ \t\r\n]*:)')


def _written(raw: dict[str, Any], chunk: ChatChunk) -> None:
    """Puts ``chunk``'s redacted texts into the upstream's own JSON of it, the rest as sent."""
    choice = chunk.first
    assert choice is not None
    delta = choice.delta
    choices = raw.get("choices")
    if delta is None or not isinstance(choices, list) or not isinstance(choices[0], dict):
        return
    target = choices[0].setdefault("delta", {})
    for name in ("content", "reasoning_content", "reasoning"):
        value = getattr(delta, name)
        if value is not None:
            target[name] = value
    if delta.tool_calls is None:
        return
    sent = target.get("tool_calls")
    pieces = sent if isinstance(sent, list) else []
    written: list[Any] = []
    for number, piece in enumerate(delta.tool_calls):
        arguments = piece.function.arguments if piece.function is not None else None
        if number < len(pieces) and isinstance(pieces[number], dict):
            old = dict(pieces[number])
            function = old.get("function")
            function = dict(function) if isinstance(function, dict) else {}
            if arguments is not None:
                function["arguments"] = arguments
            old["function"] = function
            written.append(old)
        else:
            written.append({"index": piece.index, "function": {"arguments": arguments or ""}})
    target["tool_calls"] = written
