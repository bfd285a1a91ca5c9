"""Where the MCP server keeps the events of its SSE streams, so a client whose stream dropped
mid-call (a slow search behind a proxy that cuts idle connections) reconnects with
``Last-Event-ID`` and gets what it missed: the SDK's :class:`EventStore`, in memory or on Redis.

The SDK names a stream by its JSON-RPC request id, which every session reuses (``1``, ``2``, …),
so each event is kept under the MCP session it belongs to as well; :func:`session_scoped` tells
the store which session is asking. An event id names its stream and its place in it, never the
session, and a session replays only its own streams.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import mcp.types as types
from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId

__all__ = [
    "DEFAULT_EVENTS_PER_STREAM",
    "DEFAULT_EVENT_TTL_S",
    "DEFAULT_STREAMS",
    "RETRY_MS",
    "MemoryEventStore",
    "RedisEventStore",
    "event_store_for",
    "session_scoped",
]

DEFAULT_EVENTS_PER_STREAM = 256
"""Events one stream keeps (a search's progress, once a second, and its result): the oldest go."""
DEFAULT_STREAMS = 1024
"""Streams the in-memory store keeps, the least recently written going first."""
DEFAULT_EVENT_TTL_S = 600.0
"""Seconds a stream's events are kept after its last one: time enough to reconnect."""
RETRY_MS = 1000
"""The ``retry`` a stream's priming event asks of a client before it reconnects."""

logger = logging.getLogger("webreach.mcp")

ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]
_MESSAGE = types.jsonrpc_message_adapter


@dataclass
class _Session:
    """The session a request belongs to, filled from the response of the one that opens it."""

    id: str = field(default_factory=lambda: f"opening-{uuid.uuid4().hex}")


_SESSION: ContextVar[_Session | None] = ContextVar("webreach_mcp_session", default=None)


def session_scoped(app: ASGIApp) -> ASGIApp:
    """``app`` with each request's MCP session known to the event store.

    A session's own task (which stores its messages) starts inside the request that opens the
    session, before its id exists, so that request's record is filled in when its response
    names the id (``Mcp-Session-Id``); the task shares the record and sees it.
    """

    async def scoped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        said = [v for k, v in scope.get("headers", ()) if k.lower() == b"mcp-session-id"]
        session = _Session(said[0].decode("latin-1")) if said else _Session()
        token = _SESSION.set(session)

        async def named(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and not said:
                for name, value in message.get("headers", ()):
                    if name.lower() == b"mcp-session-id":
                        session.id = value.decode("latin-1")
            await send(message)

        try:
            await app(scope, receive, named)
        finally:
            _SESSION.reset(token)

    return scoped


def _session() -> str:
    current = _SESSION.get()
    return current.id if current is not None else ""


def _event_id(stream_id: StreamId, place: str) -> EventId:
    return f"{stream_id.encode().hex()}.{place}"


def _parse(event_id: EventId) -> tuple[StreamId, str] | None:
    stream, dot, place = event_id.partition(".")
    try:
        return (bytes.fromhex(stream).decode(), place) if dot and place else None
    except ValueError:
        return None


@dataclass
class _Stream:
    events: deque[tuple[int, types.JSONRPCMessage | None]]
    written: float
    next: int = 1


class MemoryEventStore(EventStore):
    """Events in this process, bounded three ways: ``per_stream`` events a stream, ``streams``
    streams (the least recently written go first), and ``ttl`` seconds after a stream's last
    event. A server restart forgets them; replicas keep their own."""

    def __init__(
        self,
        *,
        per_stream: int = DEFAULT_EVENTS_PER_STREAM,
        streams: int = DEFAULT_STREAMS,
        ttl: float = DEFAULT_EVENT_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_stream, self.streams, self.ttl = per_stream, streams, ttl
        self._clock = clock
        self._streams: OrderedDict[tuple[str, StreamId], _Stream] = OrderedDict()

    async def store_event(
        self, stream_id: StreamId, message: types.JSONRPCMessage | None
    ) -> EventId:
        now = self._clock()
        key = (_session(), stream_id)
        stream = self._streams.pop(key, None) or _Stream(deque(maxlen=self.per_stream), now)
        self._streams[key] = stream
        place = stream.next
        stream.next += 1
        stream.events.append((place, message))
        stream.written = now
        self._forget(now)
        return _event_id(stream_id, str(place))

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        parsed = _parse(last_event_id)
        if parsed is None or not parsed[1].isdigit():
            return None
        stream_id, place = parsed[0], int(parsed[1])
        self._forget(self._clock())
        stream = self._streams.get((_session(), stream_id))
        if stream is None:
            return None
        for at, message in list(stream.events):
            if at > place and message is not None:
                await send_callback(EventMessage(message, _event_id(stream_id, str(at))))
        return stream_id

    def _forget(self, now: float) -> None:
        """Streams past their age, then the least recently written past the count."""
        while self._streams:
            key, oldest = next(iter(self._streams.items()))
            if len(self._streams) <= self.streams and oldest.written > now - self.ttl:
                break
            del self._streams[key]


class RedisEventStore(EventStore):
    """Events on Redis, one Redis stream per MCP stream (``XADD … MAXLEN per_stream``) that
    expires ``ttl`` seconds after its last event: they outlive a restart of the replica that
    wrote them and take none of its memory. A session lives in the replica that opened it, so a
    client resumes through the same replica (session affinity, as every stateful MCP session
    needs)."""

    def __init__(
        self,
        url: str,
        *,
        per_stream: int = DEFAULT_EVENTS_PER_STREAM,
        ttl: float = DEFAULT_EVENT_TTL_S,
        prefix: str = "webreach:mcp:events",
        timeout: float = 2.0,
    ) -> None:
        from redis.asyncio import Redis
        from redis.exceptions import RedisError

        self._failures: tuple[type[Exception], ...] = (RedisError, OSError)
        self.per_stream, self.ttl, self._prefix = per_stream, ttl, prefix
        self._client: Any = Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )

    def _key(self, stream_id: StreamId) -> str:
        return f"{self._prefix}:{_session()}:{stream_id.encode().hex()}"

    async def store_event(
        self, stream_id: StreamId, message: types.JSONRPCMessage | None
    ) -> EventId:
        body = (
            b""
            if message is None
            else message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        )
        key = self._key(stream_id)
        try:
            async with self._client.pipeline(transaction=True) as pipe:
                pipe.xadd(key, {"m": body}, maxlen=self.per_stream, approximate=False)
                pipe.pexpire(key, max(1, int(self.ttl * 1000)))
                replies = await pipe.execute()
        except self._failures as error:
            # The call goes on without a way back: Redis down never fails a search.
            logger.warning(
                "MCP event not stored on Redis (%s): a dropped stream cannot resume", error
            )
            return _event_id(stream_id, f"unstored-{uuid.uuid4().hex}")
        entry = replies[0]
        return _event_id(stream_id, entry.decode() if isinstance(entry, bytes) else str(entry))

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        parsed = _parse(last_event_id)
        if parsed is None:
            return None
        stream_id, place = parsed
        key = self._key(stream_id)
        try:
            entries = await self._client.xrange(key, min=f"({place}")
            if not entries and not await self._client.exists(key):
                return None
        except self._failures as error:
            logger.warning("MCP events not read from Redis (%s): the stream cannot resume", error)
            return None
        for entry, fields in entries:
            body = fields.get(b"m", b"")
            if body:
                message = _MESSAGE.validate_json(body)
                name = entry.decode() if isinstance(entry, bytes) else str(entry)
                await send_callback(EventMessage(message, _event_id(stream_id, name)))
        return stream_id

    async def aclose(self) -> None:
        await self._client.aclose()


def event_store_for(
    where: str,
    *,
    per_stream: int = DEFAULT_EVENTS_PER_STREAM,
    streams: int = DEFAULT_STREAMS,
    ttl: float = DEFAULT_EVENT_TTL_S,
) -> MemoryEventStore | RedisEventStore | None:
    """The store ``WEBREACH_MCP_EVENT_STORE`` names: ``memory``, ``none`` or a Redis URL."""
    if where == "none":
        return None
    if where == "memory":
        return MemoryEventStore(per_stream=per_stream, streams=streams, ttl=ttl)
    return RedisEventStore(where, per_stream=per_stream, ttl=ttl)
