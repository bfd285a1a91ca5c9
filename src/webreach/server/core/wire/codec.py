"""The contract between the protocol codecs and the rest of the server, and its one driver.

A codec owns one wire protocol in both directions: it parses a request body into a
:class:`Turn` (raising :class:`RequestError` with the exact 400 messages), and gives a
:class:`Renderer` that turns the loop's events into that protocol's reply. The same renderer
serves a stream (frames as events arrive) and a body (the reply once finished), so the two
always agree; :func:`stream_frames` and :func:`whole_body` drive it, with one failure policy.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Protocol

from ..state.store import ResponseStore
from ..turn.errors import ServerFailure
from ..turn.events import Event, Failed, Finished
from ..turn.operator_log import request_log
from ..turn.shape import JSON, Turn
from .keepalive import KEEP_ALIVE

__all__ = [
    "INTERNAL",
    "UNFINISHED",
    "Codec",
    "Renderer",
    "Reply",
    "stream_frames",
    "whole_body",
]

logger = logging.getLogger("webreach.server")

INTERNAL = "webreach failed while answering; please retry"
UNFINISHED = "the response ended before it was complete; please retry"

Reply = Mapping[str, object]
"""A whole reply as a renderer made it: each protocol declares its own shape (a ``TypedDict``,
say), which is read here only to be written out or kept."""


class Renderer(Protocol):
    """One reply in the making. ``feed`` returns the SSE frames of an event when streaming
    (each frame ends in a blank line; ``""`` when there is none or when not streaming)."""

    @property
    def done(self) -> bool:
        """A ``Finished`` or ``Failed`` event was fed; nothing more will be rendered."""
        ...

    def start(self) -> str:
        """The frames a stream opens with, before any event (``""``: its opening waits for
        the first event, and a keep-alive comment goes first so the client has its first
        byte at once)."""
        ...

    def feed(self, event: Event) -> str: ...

    def body(self) -> Reply:
        """The whole reply, once ``Finished`` was fed."""
        ...


class Codec(Protocol):
    protocol: str

    def parse(self, body: JSON) -> Turn:
        """Validate and translate a request; raise ``RequestError`` for what is refused."""
        ...

    def error_body(
        self, status: int, message: str, *, param: str | None = None, code: str | None = None
    ) -> JSON:
        """The protocol's own error JSON for an HTTP error response; ``param`` and ``code`` as
        the refusal named them, where the protocol's shape has room for them."""
        ...

    def renderer(self, turn: Turn, *, streaming: bool) -> Renderer: ...

    async def prepare(self, body: JSON, store: ResponseStore | None) -> JSON:
        """The body with what it names from earlier responses filled in (before ``parse``)."""
        ...

    async def remember(self, body: JSON, reply: Reply, store: ResponseStore | None) -> None:
        """Keep what a later request may name of this finished reply."""
        ...


async def stream_frames(
    codec: Codec,
    turn: Turn,
    events: AsyncIterator[Event],
    finished: Callable[[Reply], Awaitable[None]] | None = None,
) -> AsyncIterator[str]:
    """A streamed reply. Once the status line is sent a failure can only be told in-band: the
    loop's ``Failed``, an unexpected error, or events that stop before ``Finished`` all end the
    stream with the protocol's own failure (error event, ``response.failed``, error chunk).
    ``finished`` receives the whole reply once it ended well."""
    renderer = codec.renderer(turn, streaming=True)
    yield renderer.start() or KEEP_ALIVE
    try:
        async for event in events:
            if isinstance(event, Failed):
                _failed_in_stream(event.message)
            frames = renderer.feed(event)
            if frames:
                yield frames
            if renderer.done:
                if finished is not None and isinstance(event, Finished):
                    await finished(renderer.body())
                return
    except Exception:
        logger.exception("the %s stream failed", codec.protocol)
        _failed_in_stream(INTERNAL)
        yield renderer.feed(Failed(INTERNAL))
        return
    _failed_in_stream(UNFINISHED)
    yield renderer.feed(Failed(UNFINISHED))


def _failed_in_stream(message: str) -> None:
    """The access line says why a stream that was answered 200 ended in an error event."""
    request_log().note = f"failed in stream: {message}"


async def whole_body(codec: Codec, turn: Turn, events: AsyncIterator[Event]) -> Reply:
    """A non-streamed reply; nothing was sent yet, so a failure is an HTTP error instead."""
    renderer = codec.renderer(turn, streaming=False)
    async for event in events:
        if isinstance(event, Failed):
            raise ServerFailure(502, event.message)
        renderer.feed(event)
        if isinstance(event, Finished):
            return renderer.body()
    raise ServerFailure(502, UNFINISHED)
