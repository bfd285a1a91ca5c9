"""The web tools as an MCP server, on the official ``mcp`` SDK's low-level server.

Names, descriptions and input schemas are the :class:`ToolDefinition`s' own, so MCP clients see
exactly what every other adapter offers. Importing this module loads the SDK; the command line
imports it only inside ``webreach mcp``.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import mcp.types as types
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http import EventStore
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError

from ...seam import WebRuntime
from ..adapters import WebToolkit, tool_error_text
from ..base import ToolDefinition, ToolError, ToolOptions, ToolResult
from ..prompt import web_tools_prompt
from .calls import (
    OUTPUT_SCHEMAS,
    TITLES,
    CallRateLimit,
    error_meta,
    rate_limited_json,
    rate_limited_text,
    with_progress,
)
from .events import RETRY_MS, session_scoped
from .stopping import CallsInFlight

if TYPE_CHECKING:
    from ..stopping import StoppingServer

__all__ = [
    "SERVER_NAME",
    "RuntimeSource",
    "create_server",
    "mcp_tool",
    "serve_http",
    "serve_stdio",
    "transport_security",
]

SERVER_NAME = "webreach"
DEFAULT_HTTP_PORT = 8000
DEFAULT_HTTP_PATH = "/mcp"
DEFAULT_CALLS_PER_MINUTE = 60
TOOLS_TTL_MS = 3_600_000
"""How long a client may cache the tool list: it changes only when the server restarts with
other settings, and it is the same for every caller (so ``public``)."""

INBOUND_KEY_STATE = "webreach_inbound_key"
"""Where the bearer check leaves, in the request's ``state``, which inbound key let it in."""

ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]
RuntimeSource = WebRuntime | Callable[[], WebRuntime]
"""A runtime the caller keeps open, or a factory for one the server opens on first use and closes
when it stops: loading the providers then waits until a client needs a tool, not ``initialize``."""

# Hints for clients: both tools only read, and what they read is the open web.
_READ_ONLY_WEB = types.ToolAnnotations(read_only_hint=True, open_world_hint=True)


class _Tools:
    """The server's tool set, built once, on the first request that needs it."""

    def __init__(self, source: RuntimeSource, options: ToolOptions, stack: AsyncExitStack) -> None:
        self._source = source
        self._options = options
        self._stack = stack
        self._lock = anyio.Lock()
        self._toolkit: WebToolkit | None = None

    async def get(self) -> WebToolkit:
        async with self._lock:
            if self._toolkit is None:
                source = self._source
                runtime = (
                    source
                    if isinstance(source, WebRuntime)
                    else await self._stack.enter_async_context(source())
                )
                self._toolkit = WebToolkit(runtime, self._options)
            return self._toolkit


def mcp_tool(definition: ToolDefinition) -> types.Tool:
    """One definition as an MCP tool, with a title and the schema of its structured result."""
    return types.Tool(
        name=definition.name,
        title=TITLES.get(definition.name),
        description=definition.description,
        input_schema=definition.input_schema,
        output_schema=OUTPUT_SCHEMAS.get(definition.name),
        annotations=_READ_ONLY_WEB,
    )


def _error_result(text: str, error_json: dict[str, Any]) -> types.CallToolResult:
    """A failed call as the model reads it, its code for programs in ``_meta``, and no
    ``structuredContent``: the ``outputSchema`` describes a result, which a failed call has not."""
    return types.CallToolResult(
        content=[types.TextContent(text=text)], is_error=True, _meta=error_meta(error_json)
    )


def _session_of(ctx: ServerRequestContext[Any]) -> str | None:
    """Whose budget a call spends: its MCP session (``Mcp-Session-Id``) on streamable HTTP; on
    HTTP without sessions (protocol 2026-07-28 has none) the inbound key it was let in with, so
    clients behind one proxy keep budgets of their own, else the client's address; on stdio, one
    client per process, the one budget ``None``. A key is named by its place among the server's
    keys, never by itself; a bearer token the server did not check names nothing."""
    request = ctx.request
    headers = getattr(request, "headers", None)
    session = headers.get("mcp-session-id") if headers is not None else None
    if isinstance(session, str) and session:
        return f"session {session}"
    key = getattr(getattr(request, "state", None), INBOUND_KEY_STATE, None)
    if isinstance(key, str):
        return key
    host = getattr(getattr(request, "client", None), "host", None)
    return f"address {host}" if isinstance(host, str) else None


def create_server(
    runtime: RuntimeSource,
    options: ToolOptions | None = None,
    *,
    version: str = "",
    calls_per_minute: int = DEFAULT_CALLS_PER_MINUTE,
    calls: CallsInFlight | None = None,
) -> Server[Any]:
    """A low-level MCP server offering the enabled web tools, ready for any SDK transport;
    each MCP session may make ``calls_per_minute`` tool calls in any minute. ``calls``, when
    given, is how the server's stop ends the tool calls still running."""
    options = options or ToolOptions()
    limit = CallRateLimit(calls_per_minute)
    running = calls if calls is not None else CallsInFlight()

    @asynccontextmanager
    async def lifespan(_server: Server[_Tools]) -> AsyncIterator[_Tools]:
        async with AsyncExitStack() as stack:
            yield _Tools(runtime, options, stack)

    async def list_tools(
        ctx: ServerRequestContext[_Tools], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        toolkit = await ctx.lifespan_context.get()
        return types.ListToolsResult(tools=[mcp_tool(d) for d in toolkit.definitions])

    async def call_tool(
        ctx: ServerRequestContext[_Tools], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        toolkit = await ctx.lifespan_context.get()
        if toolkit.get(params.name) is None:
            offered = ", ".join(toolkit.names) or "none"
            raise MCPError(
                types.INVALID_PARAMS, f"Unknown tool: {params.name} (offered: {offered})"
            )
        retry_after = limit.admit(_session_of(ctx))
        if retry_after is not None:
            return _error_result(
                rate_limited_text(params.name, limit.per_minute, retry_after),
                rate_limited_json(limit.per_minute, retry_after),
            )
        return await _called(toolkit, ctx, params, running)

    return Server(
        SERVER_NAME,
        version=version,
        instructions=web_tools_prompt(options) or None,
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        cache_hints={"tools/list": CacheHint(ttl_ms=TOOLS_TTL_MS, scope="public")},
    )


async def _called(
    toolkit: WebToolkit,
    ctx: ServerRequestContext[_Tools],
    params: types.CallToolRequestParams,
    running: CallsInFlight,
) -> types.CallToolResult:
    """One admitted call, its progress told to the session, counted among the running calls
    so the server's stop can end it; a tool's error is a result the model reads."""

    async def call() -> ToolResult:
        return await toolkit.call(params.name, params.arguments or {})

    async def reported() -> ToolResult:
        return await with_progress(call, ctx.session.report_progress, params.name)

    try:
        result = await running.run(reported)
    except ToolError as error:
        return _error_result(tool_error_text(params.name, error), error.to_json())
    return types.CallToolResult(
        content=[types.TextContent(text=result.text)],
        structured_content=result.data.to_json(),
    )


async def serve_stdio(
    runtime: RuntimeSource,
    options: ToolOptions | None = None,
    *,
    version: str = "",
    calls_per_minute: int = DEFAULT_CALLS_PER_MINUTE,
) -> None:
    """Serve one client over this process's stdin and stdout until stdin closes."""
    from mcp.server.stdio import stdio_server

    server = create_server(runtime, options, version=version, calls_per_minute=calls_per_minute)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


class _BearerKeys:
    """Refuses every HTTP request without ``Authorization: Bearer <one of the keys>`` with a
    401, compared in constant time against every key (the time taken names none)."""

    def __init__(self, app: ASGIApp, keys: Sequence[str]) -> None:
        self.app = app
        self._keys = [key.encode() for key in keys if key]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        which = self._which_key(scope.get("headers", ()))
        if which is not None:
            scope.setdefault("state", {})[INBOUND_KEY_STATE] = f"key {which}"
            await self.app(scope, receive, send)
            return
        body = b'{"error": "invalid or missing bearer token (Authorization: Bearer <key>)"}'
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer realm="webreach"'),
        ]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def _which_key(self, headers: Sequence[tuple[bytes, bytes]]) -> int | None:
        """The place (from 1) of the key the request carries among the server's keys, or None."""
        said = [value for name, value in headers if name.lower() == b"authorization"]
        authorization = said[0] if len(said) == 1 else b""
        candidate = authorization[7:].strip() if authorization[:7].lower() == b"bearer " else b""
        which = 0
        for place, key in enumerate(self._keys, start=1):
            which = max(which, place * hmac.compare_digest(candidate, key))
        return which or None


def transport_security(host: str, port: int) -> TransportSecuritySettings | None:
    """On a loopback host (all of 127.0.0.0/8, ``::1``, ``localhost``), the Host a request may
    name (that address and port, or ``localhost``) and the Origin it may come from, which a
    DNS-rebinding page cannot forge; elsewhere None, and the keys protect the server."""
    bare = host.strip("[]")
    try:
        loopback = bare == "localhost" or ipaddress.ip_address(bare).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        return None
    names = {f"[{bare}]" if ":" in bare else bare, "localhost"}
    if bare == "localhost":
        names |= {"127.0.0.1", "[::1]"}  # what localhost resolves to, and a client may name
    hosts = sorted(f"{name}:{port}" for name in names)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{allowed}" for allowed in hosts],
    )


async def serve_http(
    runtime: RuntimeSource,
    options: ToolOptions | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_HTTP_PORT,
    path: str = DEFAULT_HTTP_PATH,
    version: str = "",
    sock: socket.socket | None = None,
    keys: Sequence[str] = (),
    started: Callable[[], None] | None = None,
    calls_per_minute: int = DEFAULT_CALLS_PER_MINUTE,
    event_store: EventStore | None = None,
    shutdown_timeout: float = 10.0,
) -> None:
    """Serve streamable HTTP at ``http://host:port/path`` until interrupted: a first Ctrl-C or
    SIGTERM gives running calls ``shutdown_timeout`` seconds, a second stops at once.

    ``sock``, when given, is the socket already bound to that address (so a busy port was the
    caller's one clear error); ``keys``, when given, are the bearer tokens every request must
    carry; ``started`` is called once the server listens; ``event_store``, when given, keeps
    each SSE stream's events so a client resumes a dropped one (a priming event with an id and
    ``retry`` opens each stream). On a loopback host the SDK also
    rejects requests whose Host is not that address and port (421) or whose Origin is not its
    own (403): DNS rebinding protection, for every loopback address.
    """
    calls = CallsInFlight()
    server = create_server(
        runtime, options, version=version, calls_per_minute=calls_per_minute, calls=calls
    )
    bound = sock.getsockname()[1] if sock is not None else port
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=path,
        host=host,
        transport_security=transport_security(host, bound),
        event_store=event_store,
        retry_interval=RETRY_MS if event_store is not None else None,
    )
    if event_store is not None:
        app = session_scoped(app)
    if any(keys):
        app = _BearerKeys(app, keys)
    stopping = _stopping_server(calls.counted(app), host, port, calls, started, shutdown_timeout)
    try:
        with calls.serving():
            await stopping.serve(sockets=[sock] if sock is not None else None)
    finally:
        close = getattr(event_store, "aclose", None)
        if close is not None:
            await close()


def _say(line: str) -> None:
    print(f"webreach: {line}", file=sys.stderr, flush=True)


def _stopping_server(
    app: ASGIApp,
    host: str,
    port: int,
    calls: CallsInFlight,
    started: Callable[[], None] | None,
    shutdown_timeout: float,
) -> StoppingServer:
    """The uvicorn server of ``app``: it tells ``started`` once it listens, and at its stop
    refuses new calls and gives the running ones ``shutdown_timeout`` seconds."""
    import uvicorn

    from ..stopping import StoppingServer

    class Server(StoppingServer):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if started is not None and not self.should_exit:
                started()

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            calls.stopping()
            await super().shutdown(sockets)

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    return Server(
        config,
        shutdown_timeout=shutdown_timeout,
        say=_say,
        end_turns=calls.end,
        running=lambda: calls.requests,
        turn="call",
    )
