"""The MCP server's stop, in process: a running call ended by the stop raises the JSON-RPC
error, the SSE streams are told to close once no request is left, and sse-starlette's
process-wide state is put back after the server ran."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED
from sse_starlette.sse import AppStatus

from webreach.tools.mcp.stopping import CallsInFlight

REASON = "the server is stopping: the call was ended after 1 s (WEBREACH_SHUTDOWN_TIMEOUT)"


async def test_a_call_ends_with_its_result_or_with_the_stops_error() -> None:
    calls = CallsInFlight()

    async def quick() -> str:
        return "done"

    assert await calls.run(quick) == "done"

    started = anyio.Event()

    async def held() -> str:
        started.set()
        await anyio.sleep_forever()
        return "never"

    async def end_once_started() -> None:
        await started.wait()
        calls.end(REASON)

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(end_once_started)
            with pytest.raises(MCPError) as ended:
                await calls.run(held)
    assert (ended.value.code, ended.value.message) == (CONNECTION_CLOSED, REASON)

    with pytest.raises(MCPError, match="the server is stopping"):
        await calls.run(quick)  # a call that starts after the stop ended the others


async def test_the_streams_close_once_no_request_is_left() -> None:
    calls = CallsInFlight()
    inside = anyio.Event()
    leave = anyio.Event()

    async def app(scope: dict[str, Any], _receive: Any, _send: Any) -> None:
        if scope["method"] == "POST":
            inside.set()
            await leave.wait()

    counted = calls.counted(app)
    with calls.serving():
        assert not AppStatus.enable_automatic_graceful_drain
        async with anyio.create_task_group() as group:
            group.start_soon(counted, {"type": "http", "method": "POST"}, None, None)
            await inside.wait()
            assert calls.requests == 1
            await counted({"type": "http", "method": "GET"}, None, None)  # a stream: not counted
            calls.stopping()
            assert not AppStatus.should_exit, "a request may still answer on its stream"
            leave.set()
        assert calls.requests == 0
        assert AppStatus.should_exit
    assert not AppStatus.should_exit
    assert AppStatus.enable_automatic_graceful_drain
