"""The in-memory MCP event store's bounds (events a stream, streams, age) and its sessions: each
replays only its own streams, though the SDK names streams by request ids every session reuses."""

from __future__ import annotations

import mcp.types as types
import pytest
from mcp.server.streamable_http import EventMessage

from webreach.tools.mcp import events as mcp_events
from webreach.tools.mcp.events import MemoryEventStore


def note(n: int) -> types.JSONRPCNotification:
    return types.JSONRPCNotification(jsonrpc="2.0", method="notifications/message", params={"n": n})


async def replayed(store: MemoryEventStore, after: str) -> tuple[str | None, list[int]]:
    got: list[EventMessage] = []

    async def send(event: EventMessage) -> None:
        got.append(event)

    stream = await store.replay_events_after(after, send)
    return stream, [e.message.params["n"] for e in got]  # type: ignore[union-attr,index]


def in_session(monkeypatch: pytest.MonkeyPatch, session: str) -> None:
    monkeypatch.setattr(mcp_events, "_session", lambda: session)


async def test_a_stream_replays_what_came_after_the_last_event_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    in_session(monkeypatch, "a")
    store = MemoryEventStore()
    priming = await store.store_event("1", None)
    for n in range(3):
        await store.store_event("1", note(n))
    assert await replayed(store, priming) == ("1", [0, 1, 2])
    in_session(monkeypatch, "b")
    theirs = await store.store_event("1", None)  # another session's request 1
    await store.store_event("1", note(9))
    assert await replayed(store, theirs) == ("1", [9])
    in_session(monkeypatch, "a")
    assert await replayed(store, priming) == ("1", [0, 1, 2])
    assert await replayed(store, "not an event id") == (None, [])


async def test_the_store_is_bounded_by_events_streams_and_age(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    in_session(monkeypatch, "a")
    now = [0.0]
    store = MemoryEventStore(per_stream=2, streams=2, ttl=60, clock=lambda: now[0])
    first = await store.store_event("1", None)
    for n in range(3):
        await store.store_event("1", note(n))
    assert await replayed(store, first) == ("1", [1, 2]), "a stream keeps its newest events"
    other = await store.store_event("2", None)
    await store.store_event("3", None)
    assert await replayed(store, other) == ("2", [])
    assert await replayed(store, first) == (None, []), "the least recently written went"
    now[0] += 61
    assert await replayed(store, other) == (None, []), "past its age a stream is gone"


@pytest.mark.parametrize("where", ["sqlite:///tmp/events.db", "memcached://cache", "bogus"])
def test_an_event_store_other_than_memory_none_or_redis_is_refused(where: str) -> None:
    from pydantic import ValidationError

    from webreach.settings import WebSettings

    with pytest.raises(ValidationError, match="must be memory, none or a redis:// URL"):
        WebSettings(mcp_event_store=where)
    assert WebSettings(mcp_event_store=" redis://127.0.0.1:6379/0 ").mcp_event_store == (
        "redis://127.0.0.1:6379/0"
    )


async def test_redis_down_loses_the_way_back_not_the_call() -> None:
    import socket

    from webreach.tools.mcp.events import RedisEventStore

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = RedisEventStore(f"redis://127.0.0.1:{port}/0", timeout=2.0)
    try:
        priming = await store.store_event("1", None)
        await store.store_event("1", note(1))

        async def send(event: EventMessage) -> None:
            raise AssertionError("nothing to replay")

        assert await store.replay_events_after(priming, send) is None
    finally:
        await store.aclose()
