"""Running a codec over a fixed list of events, outside any server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from typing import Any

from webreach.server.core.turn.events import Event
from webreach.server.core.turn.shape import Turn
from webreach.server.core.wire.codec import Codec, stream_frames, whole_body


async def _aiter(events: Iterable[Event]) -> AsyncIterator[Event]:
    for event in events:
        yield event


def stream_of(codec: Codec, turn: Turn, events: Iterable[Event]) -> str:
    """Every SSE frame the codec writes for these events, joined."""

    async def collect() -> str:
        return "".join([frame async for frame in stream_frames(codec, turn, _aiter(events))])

    return asyncio.run(collect())


def body_of(codec: Codec, turn: Turn, events: Iterable[Event]) -> dict[str, Any]:
    """The codec's non-streaming body for these events."""
    return asyncio.run(whole_body(codec, turn, _aiter(events)))
