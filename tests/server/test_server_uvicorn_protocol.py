"""The one module that reaches into uvicorn's internals, driven in process on each uvicorn the
pyproject bound admits: the names it subclasses and reads are there, and a request whose headers
stop arriving is answered 408 and closed, one whose body stops is 408 with the app told the
client left, and a complete one passes through untouched."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest
from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle
from uvicorn.server import ServerState

from webreach.server.connections import TIMED_OUT, ConnectionLimits
from webreach.server.uvicorn_protocol import GuardedH11Protocol, LimitedConfig


class _Transport(asyncio.Transport):
    """What the protocol writes, and an event for its close."""

    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.closed = asyncio.Event()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8000)}.get(
            name, default
        )

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += bytes(data)

    def is_closing(self) -> bool:
        return self.closed.is_set()

    def close(self) -> None:
        self.closed.set()

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def test_the_internals_it_reads_are_there() -> None:
    parameters = list(inspect.signature(H11Protocol.__init__).parameters)
    assert parameters[:4] == ["self", "config", "server_state", "app_state"]
    cycle = inspect.getsource(RequestResponseCycle)
    for name in ("more_body", "response_started", "response_complete", "disconnected"):
        assert f"self.{name}" in cycle, name
    assert "self.message_event" in cycle
    protocol = inspect.getsource(H11Protocol)
    for name in ("self.cycle", "self.connections", "def on_response_complete"):
        assert name in protocol, name


async def _connection(
    app: Any, header_timeout: float = 60.0, body_timeout: float = 60.0
) -> tuple[GuardedH11Protocol, _Transport]:
    limits = ConnectionLimits(10, header_timeout, body_timeout)
    config = LimitedConfig(app, limits, log_config=None, access_log=False, lifespan="off")
    config.load()
    protocol = GuardedH11Protocol(config, ServerState(), {})
    transport = _Transport()
    protocol.connection_made(transport)
    return protocol, transport


async def _ok(scope: Any, receive: Any, send: Any) -> None:
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"fine"})


async def test_headers_that_stop_arriving_are_408_then_closed() -> None:
    protocol, transport = await _connection(_ok, header_timeout=0.05)
    protocol.data_received(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
    await asyncio.wait_for(transport.closed.wait(), 60)
    assert transport.written.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert b"WEBREACH_SERVER_HEADER_TIMEOUT" in transport.written


async def test_a_body_that_stops_arriving_is_408_and_the_app_sees_the_client_leave() -> None:
    told: list[dict[str, Any]] = []
    scopes: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        scopes.append(scope)
        while True:
            message = await receive()
            told.append(message)
            if message["type"] == "http.disconnect" or not message.get("more_body"):
                return

    protocol, transport = await _connection(app, body_timeout=0.05)
    protocol.data_received(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
    await asyncio.wait_for(transport.closed.wait(), 60)
    assert transport.written.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert b"WEBREACH_SERVER_BODY_TIMEOUT" in transport.written
    for _ in range(600):
        if told and told[-1]["type"] == "http.disconnect":
            break
        await asyncio.sleep(0.1)
    assert told[-1]["type"] == "http.disconnect"
    assert scopes[0][TIMED_OUT] == pytest.approx(0.05)


async def test_a_complete_request_is_answered_and_the_connection_kept() -> None:
    protocol, transport = await _connection(_ok, header_timeout=60.0, body_timeout=60.0)
    protocol.data_received(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
    for _ in range(600):
        if transport.written.endswith(b"0\r\n\r\n"):
            break
        await asyncio.sleep(0.1)
    assert transport.written.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"\r\nfine\r\n" in transport.written
    assert not transport.closed.is_set()
    protocol.connection_lost(None)
