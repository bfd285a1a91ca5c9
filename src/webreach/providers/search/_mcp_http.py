"""A remote MCP tool called over the Streamable HTTP transport: JSON-RPC 2.0 POSTs to one URL.

A session begins with ``initialize`` (whose answer may carry an ``Mcp-Session-Id`` that every
later request must send back, as Z.AI's server requires) and ``notifications/initialized``. Each
answer is either one JSON body or a ``text/event-stream`` whose events carry JSON-RPC messages;
the server chooses, so both are read, the events by ``httpx-sse``.

Errors keep the server's own words (Z.AI's are the only guide to what went wrong), without any
secret; a JSON-RPC error object is a :class:`RpcError`, for the caller to judge.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import httpx
from httpx_sse import EventSource, SSEError

from ..._version import __version__
from ...seam import WebError, WebErrorCode
from ...seam.causes import network_cause
from .._json_api import redact, retry_after_seconds

__all__ = ["McpSession", "RpcError"]

PROTOCOL_VERSION = "2025-06-18"
_RAW_LIMIT = 500
"""The most characters of a server's error message a message quotes."""


class RpcError(Exception):
    """A JSON-RPC error object (or a gateway's ``{"success": false, "msg": ...}``), its message
    already redacted."""

    def __init__(self, code: int | None, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class McpSession:
    """One session with one MCP server; the key lives only here and never in a message."""

    def __init__(self, client: httpx.AsyncClient, pid: str, url: str, *, api_key: str) -> None:
        self._client = client
        self._pid = pid
        self._url = url
        self._api_key = api_key
        self._session_id: str | None = None
        self._version: str | None = None
        self._ids = itertools.count(1)

    async def open(self) -> None:
        result = await self._request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "webreach", "version": __version__},
            },
        )
        version = result.get("protocolVersion")
        self._version = version if isinstance(version, str) and version else None
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"}, None)

    async def list_tools(self) -> list[dict[str, Any]]:
        """The tools the server offers (``name``, ``inputSchema``), or :class:`RpcError`."""
        tools = (await self._request("tools/list", {})).get("tools")
        if not isinstance(tools, list):
            raise self._error("unexpected response shape (no valid 'tools')")
        return [
            tool for tool in tools if isinstance(tool, dict) and isinstance(tool.get("name"), str)
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool's result (``content``, ``isError``...), or :class:`RpcError`."""
        return await self._request("tools/call", {"name": name, "arguments": arguments})

    async def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        rid = next(self._ids)
        reply = await self._post(
            {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}, rid
        )
        if not isinstance(reply, dict):
            raise self._error("the answer is not a JSON-RPC response")
        error = reply.get("error")
        if error is not None:
            detail = error if isinstance(error, dict) else {"message": error}
            code = detail.get("code")
            raise RpcError(
                code if isinstance(code, int) else None,
                self._raw(detail.get("message")) or "unknown error",
            )
        if reply.get("success") is False:
            code = reply.get("code")
            raise RpcError(
                code if isinstance(code, int) else None,
                self._raw(reply.get("msg") or reply.get("message")) or "unknown error",
            )
        result = reply.get("result")
        if not isinstance(result, dict):
            raise self._error("unexpected response shape (no valid 'result')")
        return result

    async def _post(self, message: dict[str, Any], rid: int | None) -> Any:
        """Send one message; the reply to ``rid`` (None for a notification, which has none)."""
        headers = {
            "Authorization": f"Bearer {self._api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if self._session_id is not None:
            headers["Mcp-Session-Id"] = self._session_id
        if self._version is not None:
            headers["MCP-Protocol-Version"] = self._version
        try:
            async with self._client.stream(
                "POST", self._url, headers=headers, json=message
            ) as response:
                if not response.is_success:
                    await response.aread()
                    raise self._status_error(response)
                if session_id := response.headers.get("mcp-session-id"):
                    self._session_id = session_id
                if rid is None:
                    return None
                if _is_event_stream(response):
                    return await self._from_events(response, rid)
                await response.aread()
                return _matching(_json(response.content, self._error), rid)
        except httpx.TimeoutException:
            raise self._error("the request timed out") from None
        except httpx.HTTPError as error:
            cause = network_cause(error)
            parts = httpx.URL(self._url)
            where = f"{parts.host}:{parts.port}" if parts.port else parts.host
            detail = (
                cause.describe(where)
                if cause is not None
                else f"{type(error).__name__}: {self._raw(str(error)) or type(error).__name__}"
            )
            raise self._error(f"request failed ({detail})") from None

    async def _from_events(self, response: httpx.Response, rid: int) -> Any:
        """The event carrying the reply to ``rid``; notifications the server sends first (its
        progress, say) are passed over."""
        try:
            async for event in EventSource(response).aiter_sse():
                if not event.data.strip():
                    continue
                reply = _matching(_json(event.data, self._error), rid)
                if reply is not None:
                    return reply
        except SSEError:
            raise self._error("the event stream is malformed") from None
        raise self._error("the event stream ended without an answer")

    def _status_error(self, response: httpx.Response) -> WebError:
        status = response.status_code
        raw = self._raw(_message_of(response.content))
        retry_after = (
            retry_after_seconds(response.headers.get("retry-after")) if status == 429 else None
        )
        if raw:
            text = raw
        elif status in (401, 403):
            text = "authorization failed; check the API key"
        elif status == 429:
            text = "rate limited"
        else:
            text = "server error" if status >= 500 else "request rejected"
        hint = f", retry after {retry_after:g} s" if retry_after is not None else ""
        return WebError(
            WebErrorCode.WEB_PROVIDER_ERROR,
            f"{self._pid}: {text} (HTTP {status}{hint})",
            provider=self._pid,
            status=status,
            retry_after=retry_after,
        )

    def _raw(self, text: Any) -> str | None:
        """A server's own message, trimmed, bounded and without the key."""
        if not isinstance(text, str) or not text.strip():
            return None
        return redact(text.strip(), [self._api_key])[:_RAW_LIMIT]

    def _error(self, what: str) -> WebError:
        return WebError(WebErrorCode.WEB_PROVIDER_ERROR, f"{self._pid}: {what}", provider=self._pid)


def _is_event_stream(response: httpx.Response) -> bool:
    kind: str = response.headers.get("content-type", "")
    return kind.partition(";")[0].strip().lower() == "text/event-stream"


def _json(payload: bytes | str, error: Callable[[str], WebError]) -> Any:
    try:
        return json.loads(payload)
    except ValueError:
        raise error("the response is not valid JSON") from None


def _matching(reply: Any, rid: int) -> Any:
    """The response to ``rid`` in a body or event: a message, or one of a batch. One without an
    id (an error about a request the server could not read, a gateway's error body) answers
    too; a notification or another request's response does not."""
    for message in reply if isinstance(reply, list) else [reply]:
        if (
            isinstance(message, dict)
            and "method" not in message
            and message.get("id") in (rid, None)
        ):
            return message
    return None


def _message_of(body: bytes) -> str | None:
    """The message in an error body, whichever of the usual shapes it has; else its text, unless
    that is a page of HTML (a proxy's)."""
    try:
        data = json.loads(body)
    except ValueError:
        text = body.decode("utf-8", "replace").strip()
        return text if text and not text.startswith("<") else None
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict):
        data = error
    elif isinstance(error, str):
        return error
    for key in ("message", "msg", "detail"):
        if isinstance(data.get(key), str):
            return str(data[key])
    return None
