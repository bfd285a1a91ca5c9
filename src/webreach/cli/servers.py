"""``webreach serve`` (the API server) and ``webreach mcp`` (the MCP server)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .app import command
from .common import (
    EXIT_INTERRUPTED,
    EXIT_TOOL_ERROR,
    EXIT_USAGE,
    check_providers,
    fail,
    invalid_setting,
    require_extra,
    startup,
    usage,
    warn,
)

if TYPE_CHECKING:
    import socket
    from collections.abc import Callable

    from ..seam import WebRuntime
    from ..settings import Settings


def _is_loopback(host: str) -> bool:
    import ipaddress

    try:
        return host == "localhost" or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class LogLevel(StrEnum):
    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"


class LogFormat(StrEnum):
    text = "text"
    json = "json"


class Client(StrEnum):
    claude_desktop = "claude-desktop"
    cursor = "cursor"
    vscode = "vscode"


@command(short_help="Serve web_search and web_fetch to MCP clients.")
def mcp(
    http: Annotated[
        bool, typer.Option("--http", help="Serve streamable HTTP instead of stdio.")
    ] = False,
    host: Annotated[
        str | None,
        typer.Option(
            "--host",
            metavar="ADDRESS",
            help="Address to bind with --http [127.0.0.1]; any other than loopback needs "
            "WEBREACH_SERVER_API_KEYS, which clients send as bearer tokens.",
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            "--port", metavar="PORT", min=1, max=65535, help="Port to bind with --http [8000]."
        ),
    ] = None,
    print_config: Annotated[
        bool,
        typer.Option(
            "--print-config",
            help="Print the JSON that adds this server to an MCP client, with the absolute path "
            "of this webreach, and exit.",
        ),
    ] = False,
    client: Annotated[
        Client,
        typer.Option("--client", help="The client --print-config writes for [claude-desktop]."),
    ] = Client.claude_desktop,
) -> None:
    """Serve web_search and web_fetch to MCP clients (stdio by default).

    On stdio the client starts this command and talks to it over stdin and stdout; started by
    hand in a terminal it waits for a client (Ctrl-C stops it).
    """
    if print_config and http:
        usage("--print-config describes the stdio server, which clients start themselves")
    require_extra("mcp", "mcp")  # a config that starts a server that cannot run helps no one
    if print_config:
        print(json.dumps(_client_config(client), indent=2))
        return
    if not http and (host is not None or port is not None):
        usage("--host and --port apply only with --http")
    settings = startup(False)
    check_providers(settings, need=None, warn_unavailable=True)
    from ..config import build_runtime

    def open_runtime() -> WebRuntime:
        # Over HTTP it serves many clients at once, whose searches read pages in processes.
        return build_runtime(settings, default_cache="memory", readers=http)

    try:
        if http:
            _serve_mcp_http(settings, open_runtime, host, port)
        else:
            _serve_mcp_stdio(settings, open_runtime)
    except KeyboardInterrupt:
        raise typer.Exit(EXIT_INTERRUPTED) from None


def _serve_mcp_stdio(settings: Settings, open_runtime: Callable[[], WebRuntime]) -> None:
    """The MCP server on stdin and stdout, for the client that started this command."""
    import asyncio

    from .. import __version__
    from ..tools.mcp.server import serve_stdio

    _stop_at_once_on_interrupt()  # before the hint: a Ctrl-C right after it is caught
    if sys.stdin.isatty():
        print("webreach mcp: waiting for an MCP client on stdin; Ctrl-C to stop", file=sys.stderr)
    asyncio.run(
        serve_stdio(
            open_runtime,
            settings.tool_options(),
            version=__version__,
            calls_per_minute=settings.mcp_calls_per_minute,
        )
    )


def _serve_mcp_http(
    settings: Settings,
    open_runtime: Callable[[], WebRuntime],
    host: str | None,
    port: int | None,
) -> None:
    """The MCP server over streamable HTTP, its address checked and bound before it starts."""
    import asyncio

    from .. import __version__
    from ..tools.mcp.events import event_store_for
    from ..tools.mcp.server import DEFAULT_HTTP_PATH, DEFAULT_HTTP_PORT, serve_http

    host, port = host or "127.0.0.1", port or DEFAULT_HTTP_PORT
    _check_exposure(settings, host, port)
    sock = _bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}{DEFAULT_HTTP_PATH}"
    asyncio.run(
        serve_http(
            open_runtime,
            settings.tool_options(),
            host=host,
            port=port,
            version=__version__,
            sock=sock,
            keys=settings.api_keys(),
            calls_per_minute=settings.mcp_calls_per_minute,
            shutdown_timeout=settings.shutdown_timeout,
            event_store=event_store_for(
                settings.mcp_event_store,
                per_stream=settings.mcp_events_per_stream,
                streams=settings.mcp_event_streams,
                ttl=settings.mcp_event_ttl,
            ),
            started=lambda: print(f"webreach: MCP server on {url}", file=sys.stderr),
        )
    )


def _stop_at_once_on_interrupt() -> None:
    """Ctrl-C (SIGINT) ends the stdio server at once.

    The MCP SDK reads stdin in a worker thread that cancellation cannot interrupt, so asyncio's
    own handling would wait for one more line of input before stopping.
    """

    def stop(_signum: int, _frame: object) -> None:
        os.write(sys.stderr.fileno(), b"\nwebreach mcp: stopped\n")
        os._exit(EXIT_INTERRUPTED)

    signal.signal(signal.SIGINT, stop)


def webreach_command() -> list[str]:
    """The absolute command that starts this webreach, for a client that does not share this
    shell's PATH: the script beside this Python, else the one on PATH, else ``python -m``."""
    name = "webreach.exe" if os.name == "nt" else "webreach"
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return [str(beside)]
    if found := shutil.which("webreach"):
        return [str(Path(found).absolute())]
    return [sys.executable, "-m", "webreach"]


def _client_config(client: Client) -> dict[str, Any]:
    """The client's JSON for this server; the settings it reads that are set in the environment
    come along (keys as placeholders to fill in, never their values), and the settings file by
    its absolute path."""
    from ..config import check_settings
    from ..config_sources import read_settings_file

    try:
        check_settings()
    except Exception as error:
        invalid_setting(error, as_json=False)
    command, *args = webreach_command()
    env = _environment()
    if (file := read_settings_file()).exists:
        env["WEBREACH_CONFIG"] = str(file.path)
    server: dict[str, Any] = {"command": command, "args": [*args, "mcp"]}
    if env:
        server["env"] = env
    if client is Client.vscode:
        return {"servers": {"webreach": {"type": "stdio", **server}}}
    return {"mcpServers": {"webreach": server}}


def _environment() -> dict[str, str]:
    """The settings set in this environment that the MCP server reads: the API server's own
    (``WEBREACH_UPSTREAM_*``, inbound keys, the store …) stay out of an MCP client's config."""
    from ..config import all_settings
    from ..settings.server import ServerSettings

    env: dict[str, str] = {}
    for setting in all_settings():
        if setting.provider is None and setting.field in ServerSettings.model_fields:
            continue
        if setting.secret and (path := _secret_file(setting.variable)) is not None:
            # A mounted secret's path is no secret, and the client starts the server elsewhere.
            env[f"{setting.variable}_FILE"] = os.path.abspath(path)
            continue
        if (value := setting.environment_value(os.environ)) is None:
            continue
        env[setting.variable] = f"<your {setting.variable}>" if setting.secret else value
    return env


def _secret_file(variable: str) -> str | None:
    """The path ``<variable>_FILE`` names (names are case-insensitive, as settings read them)."""
    wanted = f"{variable}_FILE"
    return next((v for k, v in os.environ.items() if k.upper() == wanted and v), None)


def _bind(host: str, port: int) -> socket.socket:
    """The server's socket, bound before anything is served: an address that cannot be had
    stops the command with one line and exit 1."""
    from ..server.binding import CannotListen, listen

    try:
        return listen(host, port)
    except CannotListen as error:
        fail("CANNOT_LISTEN", str(error), as_json=False, exit_code=EXIT_TOOL_ERROR)


def _check_exposure(settings: Settings, host: str, port: int) -> None:
    """Stop before anything starts on a host that does not resolve (exit 1, as a busy port), or
    one off loopback without inbound keys (exit 2): either server's tools would be open to
    anyone who reaches it."""
    from ..server.binding import CannotListen, resolve

    try:
        resolve(host, port)
    except CannotListen as error:
        fail("CANNOT_LISTEN", str(error), as_json=False, exit_code=EXIT_TOOL_ERROR)
    if not settings.api_keys() and not _is_loopback(host):
        fail(
            "INVALID_SETTING",
            f"refusing to serve on {host} without WEBREACH_SERVER_API_KEYS; "
            "set inbound keys or bind to a loopback address",
            as_json=False,
            exit_code=EXIT_USAGE,
        )


HostOption = Annotated[
    str, typer.Option("--host", metavar="ADDRESS", help="Address to bind [127.0.0.1].")
]
PortOption = Annotated[
    int, typer.Option("--port", metavar="PORT", min=1, max=65535, help="Port to bind [8080].")
]
LogLevelOption = Annotated[
    LogLevel | None,
    typer.Option(
        "--log-level",
        case_sensitive=False,
        help="Least severe log line written [WEBREACH_LOG_LEVEL: info].",
    ),
]
LogFormatOption = Annotated[
    LogFormat | None,
    typer.Option(
        "--log-format",
        case_sensitive=False,
        help="text for people, json for one object per line [WEBREACH_LOG_FORMAT: text].",
    ),
]


@command(short_help="Serve Chat Completions, Responses and Messages with web search.")
def serve(
    host: HostOption = "127.0.0.1",
    port: PortOption = 8080,
    log_level: LogLevelOption = None,
    log_format: LogFormatOption = None,
) -> None:
    """Serve Chat Completions, Responses and Messages with server-side web search.

    Needs WEBREACH_UPSTREAM_BASE_URL, the OpenAI-compatible endpoint of the model to front
    (e.g. http://localhost:11434/v1 for Ollama); WEBREACH_UPSTREAM_API_KEY and
    WEBREACH_UPSTREAM_MODEL when it wants them. It searches with DuckDuckGo (no key) unless
    WEBREACH_SEARCH_PROVIDER names another, or a provider's key (EXA_API_KEY …) is set:
    `webreach config` shows which. Off loopback it needs WEBREACH_SERVER_API_KEYS.

    The playground, a page that tries the endpoints, is at / on loopback
    (WEBREACH_PLAYGROUND=false turns it off). One access line per request and a line per
    failed search, fetch or upstream call go to stderr; a port in use stops it with exit 1.
    """
    require_extra("serve", "server")
    from ..server.logs import configure_logging

    settings = startup(False)
    # From here on, warnings are log lines in the log's own format (JSON lines stay JSON).
    configure_logging(log_level or settings.log_level, log_format or settings.log_format)
    check_providers(settings, need=None, warn_unavailable=True)
    _check_servable(settings, host, port)
    if settings.playground is None:  # unset: a page for the person at this machine only
        settings = settings.model_copy(update={"playground": _is_loopback(host)})
    from ..config import ConfigError, build_runtime, configured_secrets, open_response_store
    from ..server.app import create_app
    from ..server.serving import serve as serve_app

    try:
        runtime = build_runtime(settings, default_cache="memory", readers=True)
    except ConfigError as error:
        invalid_setting(error, as_json=False)
    store = open_response_store(settings)
    secrets = configured_secrets(settings)
    server = create_app(settings, runtime, settings.tool_options(), store=store, secrets=secrets)
    sock = _bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    if settings.playground:
        from ..server.logs import announce

        announce(f"playground at http://{shown}:{port}/", url=f"http://{shown}:{port}/")
    serve_app(server, sock, f"http://{shown}:{port}/v1", settings)


def _check_servable(settings: Settings, host: str, port: int) -> None:
    """Stop before anything starts when the server could not work (exit 2), could not bind
    (exit 1) or would be open to anyone (exit 2); warn when read pages would not survive a
    restart."""
    if not settings.upstream_base_url:
        fail(
            "INVALID_SETTING",
            "WEBREACH_UPSTREAM_BASE_URL is not set: name the OpenAI-compatible endpoint to "
            "front (e.g. WEBREACH_UPSTREAM_BASE_URL=http://localhost:11434/v1)",
            as_json=False,
            exit_code=EXIT_USAGE,
        )
    _check_exposure(settings, host, port)
    if not (settings.signing_key and settings.signing_key.get_secret_value()):
        warn(
            "WEBREACH_SIGNING_KEY is not set; a random key encrypts read pages, "
            "so restoring them in later rounds works only within this process"
        )
