"""A remote MCP tool, called with the official ``mcp`` SDK's client over Streamable HTTP.

The SDK speaks the protocol: ``initialize`` (the ``Mcp-Session-Id`` it answers with goes back on
every later request, as Z.AI's server requires), ``notifications/initialized``, the negotiated
``MCP-Protocol-Version``, request ids, and answers as one JSON body or a ``text/event-stream``.

Its HTTP (httpx2) goes through :class:`_Bridge`, a transport that sends each request with the
provider's own httpx client (its connections, timeouts, proxy and event hooks) and reads what the
SDK does not keep: an HTTP error's status, ``Retry-After`` and the server's own words (the SDK
says "Server returned an error response"), and a JSON body it cannot tie to the request (it
would wait for an answer until the read timeout). Errors never carry the key; a JSON-RPC error is a
:class:`RpcError`, for the caller to judge.

Importing this module imports the SDK (half a second), so the provider imports it only when a
search runs.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, INTERNAL_ERROR, Implementation
from pydantic import ValidationError

from ..._version import __version__
from ...seam import WebError, WebErrorCode
from ...seam.causes import network_cause
from .._json_api import redact, retry_after_seconds

__all__ = ["McpSession", "RpcError"]

_RAW_LIMIT = 500
"""The most characters of a server's error message a message quotes."""
_FRAMING = frozenset({"host", "content-length", "transfer-encoding"})
"""Headers of the SDK's request that the provider's client sets itself."""
_DECODED = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Headers that no longer describe a body the bridge has read (and decoded) whole."""


class RpcError(Exception):
    """A JSON-RPC error object (or a gateway's ``{"success": false, "msg": ...}``), its message
    already redacted."""

    def __init__(self, code: int | None, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class McpSession:
    """One session with one MCP server, as an ``async with`` block: entering it is the
    handshake; any failure, inside or out, leaves it as a :class:`WebError` or
    :class:`RpcError`. The key lives only here and in the bridge's headers."""

    def __init__(self, client: httpx.AsyncClient, pid: str, url: str, *, api_key: str) -> None:
        self._pid = pid
        self._url = url
        self._api_key = api_key
        self._bridge = _Bridge(client, pid, url, api_key)
        self._stack = AsyncExitStack()
        self._client: Client | None = None

    async def __aenter__(self) -> McpSession:
        http = httpx2.AsyncClient(
            transport=self._bridge,
            headers=[*self._bridge.client_headers(), ("Authorization", f"Bearer {self._api_key}")],
            timeout=None,  # the provider's client times each request
            trust_env=False,
            follow_redirects=False,
        )
        try:
            await self._stack.enter_async_context(http)
            self._client = await self._stack.enter_async_context(
                Client(
                    # No DELETE when the search ends: the session is the search's alone.
                    streamable_http_client(self._url, http_client=http, terminate_on_close=False),
                    # The initialize handshake, without first probing for a 2026 server.
                    mode="legacy",
                    client_info=Implementation(name="webreach", version=__version__),
                    cache=None,
                )
            )
        except BaseException as error:
            await self._stack.aclose()
            raise self._reason(error) from None
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            await self._stack.__aexit__(kind, error, traceback)
        except BaseException as group:
            if group is error:
                raise
            raise self._reason(group, error) from None

    async def list_tools(self) -> list[dict[str, Any]]:
        """The tools the server offers (``name``, ``inputSchema``), or :class:`RpcError`."""
        try:
            listing = await self._connected().list_tools()
        except Exception as error:
            raise self._reason(error) from None
        return [tool.model_dump(by_alias=True, mode="json") for tool in listing.tools]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool's result (``content``, ``isError``...), or :class:`RpcError`."""
        try:
            result = await self._connected().call_tool(name, arguments)
        except Exception as error:
            raise self._reason(error) from None
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    def _connected(self) -> Client:
        assert self._client is not None, "use the session in an `async with` block"
        return self._client

    def _reason(self, error: BaseException, inner: BaseException | None = None) -> BaseException:
        """What ``error`` (an SDK's, or the task group the SDK's transport runs in) means: what
        the bridge saw first, as it knows the HTTP answer; then what the block itself raised;
        then the SDK's own account. Anything else (a bug) is left as it is."""
        if self._bridge.failure is not None:
            return self._bridge.failure
        if isinstance(inner, WebError | RpcError):
            return inner
        for leaf in _leaves(error):
            if isinstance(leaf, WebError | RpcError):
                return leaf
            if isinstance(leaf, MCPError):
                if self._bridge.refusal is not None:
                    return self._bridge.refusal
                if leaf.code == CONNECTION_CLOSED and self._bridge.stream_ended:
                    return self._bridge.error("the event stream ended without an answer")
                return RpcError(leaf.code, self._bridge.raw(leaf.message) or "unknown error")
            if isinstance(leaf, ValidationError):
                return self._bridge.error(f"unexpected response shape ({leaf.title} is not valid)")
            if isinstance(leaf, RuntimeError):
                # The SDK's refusal of the handshake, a protocol version it does not speak.
                said = self._bridge.raw(str(leaf)) or type(leaf).__name__
                return self._bridge.error(f"the MCP session failed ({said})")
        return error


class _Bridge(httpx2.AsyncBaseTransport):
    """The SDK's requests, sent by the provider's httpx client. What it saw the session
    reports rather than what the SDK made of it: the first failure (an HTTP error, a timeout, a
    body that answers nothing), the server's error for the request in flight (its code may be
    none, and the SDK's needs one), and whether the last event stream was read to its end
    (what the SDK's "SSE stream ended without a response" means here)."""

    def __init__(self, client: httpx.AsyncClient, pid: str, url: str, api_key: str) -> None:
        self._client = client
        self._pid = pid
        self._url = url
        self._api_key = api_key
        self.failure: WebError | None = None
        self.refusal: RpcError | None = None
        self.stream_ended = False

    def client_headers(self) -> list[tuple[str, str]]:
        """The provider client's headers (its User-Agent...), for the SDK's client to send
        instead of its own defaults."""
        return self._client.headers.multi_items()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method != "POST":
            # The SDK opens a GET stream for messages a server starts; the search needs none,
            # so it is refused here as a server without one would (405), and never sent.
            return httpx2.Response(405, request=request)
        if self.failure is not None:
            raise self.failure  # after a notification failed: nothing more is sent
        content = await request.aread()
        rid = _request_id(content)
        try:
            return await self._exchange(request, content, rid)
        except WebError as error:
            if rid is not None:
                raise
            # The SDK logs a failed notification as its own error and carries on; the failure
            # is kept for the next request to raise, and the SDK told only what a proxy would.
            return httpx2.Response(error.status or 502, request=request)

    async def _exchange(
        self, request: httpx2.Request, content: bytes, rid: int | str | None
    ) -> httpx2.Response:
        self.stream_ended = False
        self.refusal = None
        headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() not in _FRAMING]
        outgoing = self._client.build_request(
            "POST", str(request.url), headers=headers, content=content
        )
        try:
            response = await self._client.send(outgoing, stream=True)
        except httpx.HTTPError as error:
            raise self.failed(self.transport_error(error)) from None
        if response.status_code >= 400:
            body = await self._read(response)
            raise self.failed(self._status_error(response, body))
        if rid is not None and _is_json(response):
            body = await self._read(response)
            return httpx2.Response(
                response.status_code,
                headers=[(k, v) for k, v in response.headers.multi_items() if k not in _DECODED],
                content=self._answer(body, rid),
                request=request,
            )
        return httpx2.Response(
            response.status_code,
            headers=response.headers.multi_items(),
            stream=_Body(response, self),
            request=request,
        )

    def _answer(self, body: bytes, rid: int | str) -> bytes:
        """The one JSON-RPC message in ``body`` that answers request ``rid``, for the SDK: a
        batch's, and an error the server could not tie to the request (no id, a gateway's
        ``{"success": false}``) as this request's. A failure when none answers it."""
        try:
            reply = json.loads(body)
        except ValueError:
            raise self.failed(self.error("the response is not valid JSON")) from None
        message = _matching(reply, rid)
        if message is None:
            raise self.failed(self.error("the answer is not a JSON-RPC response"))
        if message.get("success") is False:
            error: Any = {"code": message.get("code"), "message": message.get("msg")}
            error["message"] = error["message"] or message.get("message")
        elif (error := message.get("error")) is None:
            if not isinstance(message.get("result"), dict):
                raise self.failed(self.error("unexpected response shape (no valid 'result')"))
            return json.dumps({"jsonrpc": "2.0", "id": rid, "result": message["result"]}).encode()
        detail = error if isinstance(error, dict) else {"message": error}
        code = detail.get("code")
        self.refusal = RpcError(
            code if isinstance(code, int) else None,
            self.raw(detail.get("message")) or "unknown error",
        )
        said = {"code": self.refusal.code or INTERNAL_ERROR, "message": self.refusal.message}
        return json.dumps({"jsonrpc": "2.0", "id": rid, "error": said}).encode()

    async def _read(self, response: httpx.Response) -> bytes:
        try:
            return await response.aread()
        except httpx.HTTPError as error:
            raise self.failed(self.transport_error(error)) from None
        finally:
            await response.aclose()

    def failed(self, error: WebError) -> WebError:
        if self.failure is None:
            self.failure = error
        return error

    def transport_error(self, error: httpx.HTTPError) -> WebError:
        if isinstance(error, httpx.TimeoutException):
            return self.error("the request timed out")
        cause = network_cause(error)
        parts = httpx.URL(self._url)
        where = f"{parts.host}:{parts.port}" if parts.port else parts.host
        detail = (
            cause.describe(where)
            if cause is not None
            else f"{type(error).__name__}: {self.raw(str(error)) or type(error).__name__}"
        )
        return self.error(f"request failed ({detail})")

    def _status_error(self, response: httpx.Response, body: bytes) -> WebError:
        status = response.status_code
        raw = self.raw(_message_of(body))
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

    def raw(self, text: Any) -> str | None:
        """A server's own message, trimmed, bounded and without the key."""
        if not isinstance(text, str) or not text.strip():
            return None
        return redact(text.strip(), [self._api_key])[:_RAW_LIMIT]

    def error(self, what: str) -> WebError:
        return WebError(WebErrorCode.WEB_PROVIDER_ERROR, f"{self._pid}: {what}", provider=self._pid)


class _Body(httpx2.AsyncByteStream):
    """An event stream's bytes as the server sent them; a failure while reading is the
    bridge's, and reading to the end is noted."""

    def __init__(self, response: httpx.Response, bridge: _Bridge) -> None:
        self._response = response
        self._bridge = bridge

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.aiter_raw():
                yield chunk
        except httpx.HTTPError as error:
            raise self._bridge.failed(self._bridge.transport_error(error)) from None
        self._bridge.stream_ended = True

    async def aclose(self) -> None:
        await self._response.aclose()


def _leaves(error: BaseException) -> list[BaseException]:
    """The exceptions in ``error``, task groups opened, in order."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def _request_id(content: bytes) -> int | str | None:
    """The id of the JSON-RPC request the SDK wrote, None for a notification."""
    try:
        message = json.loads(content)
    except ValueError:
        return None
    rid = message.get("id") if isinstance(message, dict) else None
    return rid if isinstance(rid, int | str) and "method" in message else None


def _is_json(response: httpx.Response) -> bool:
    kind: str = response.headers.get("content-type", "")
    return kind.partition(";")[0].strip().lower() == "application/json"


def _matching(reply: Any, rid: int | str) -> dict[str, Any] | None:
    """The response to ``rid`` in a body: a message, or one of a batch. One without an id (an
    error about a request the server could not read, a gateway's error body) answers too; a
    notification or another request's response does not."""
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
