"""The ``webreach`` command line; heavy modules load inside commands so ``--help`` is instant."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

if TYPE_CHECKING:
    from .config import Settings
    from .seam import FetchResult, SearchResult, WebRuntime
    from .tools import ToolDefinition, ToolResult

app = typer.Typer(
    name="webreach",
    help="Give any language model the web: search, fetch, and serve web tools.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE = 0, 1, 2


def _version(value: bool) -> None:
    if value:
        from . import __version__

        print(f"webreach {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Give any language model the web: search, fetch, and serve web tools."""


def _fail(
    code: str,
    message: str,
    *,
    as_json: bool,
    exit_code: int = EXIT_TOOL_ERROR,
    retry_after: float | None = None,
) -> NoReturn:
    if as_json:
        error: dict[str, Any] = {"code": code, "message": message}
        if retry_after is not None:
            error["retry_after"] = retry_after
        print(json.dumps({"error": error}, ensure_ascii=False))
    else:
        print(f"webreach: {code}: {message}", file=sys.stderr)
    raise typer.Exit(exit_code)


# What `pip install webreach` leaves out: the commands that need more name the extra to install.
_EXTRAS: dict[str, tuple[str, ...]] = {
    "server": ("starlette", "uvicorn", "openai", "cryptography"),
    "mcp": ("mcp", "uvicorn"),
}


def _require_extra(command: str, extra: str) -> None:
    """Stop with one line (exit 2) when ``command`` needs an extra that is not installed."""
    from importlib import import_module

    for module in _EXTRAS[extra]:
        try:
            import_module(module)
        except ImportError as error:
            missing = error.name or module
            _fail(
                "MISSING_EXTRA",
                f"`webreach {command}` needs the {extra} extra ({missing} is not installed): "
                f'pip install "webreach[{extra}]"',
                as_json=False,
                exit_code=EXIT_USAGE,
            )


def _settings(as_json: bool, **overrides: Any) -> Settings:
    from .config import ConfigError, load_settings

    try:
        return load_settings(**{k: v for k, v in overrides.items() if v is not None})
    except ConfigError as error:
        _invalid_setting(error, as_json=as_json)


def _invalid_setting(error: Exception, *, as_json: bool) -> NoReturn:
    """A shared setting, or a provider's own one (read when the runtime is built), is invalid."""
    _fail("INVALID_SETTING", str(error), as_json=as_json, exit_code=EXIT_USAGE)


class _Status:
    """A live status line on a terminal's stderr; silent when stderr is not a terminal."""

    def __init__(self, title: str, items: list[str]) -> None:
        self._title = title
        self._items = items
        self._done: set[str] = set()
        self._live: Any = None
        if sys.stderr.isatty():
            from rich.console import Console

            self._live = Console(stderr=True).status(self._text())

    def _text(self) -> str:
        marks = " · ".join(f"{item} ✓" if item in self._done else item for item in self._items)
        return f"{self._title}: {marks} …"

    def done(self, item: str) -> None:
        self._done.add(item)
        if self._live is not None:
            self._live.update(self._text())

    def __enter__(self) -> _Status:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._live is not None:
            self._live.stop()


def _run_tool(
    settings: Settings,
    make_tool: Callable[[WebRuntime], ToolDefinition],
    arguments: dict[str, Any],
    *,
    as_json: bool,
) -> ToolResult:
    from .cache import default_sqlite_url
    from .config import ConfigError, build_runtime
    from .tools import ToolError

    async def main() -> ToolResult:
        async with build_runtime(settings, default_cache=default_sqlite_url()) as runtime:
            return await make_tool(runtime).execute(arguments)

    try:
        return asyncio.run(main())
    except ToolError as error:
        _fail(error.code, error.message, as_json=as_json, retry_after=error.retry_after)
    except ConfigError as error:
        _invalid_setting(error, as_json=as_json)
    except KeyboardInterrupt:
        print("webreach: interrupted", file=sys.stderr)
        raise typer.Exit(130) from None


@app.command()
def search(
    queries: Annotated[list[str], typer.Argument(help="One or more search queries.")],
    provider: Annotated[
        str | None,
        typer.Option("--provider", help="Search provider id (or a comma list for fallback)."),
    ] = None,
    max_results: Annotated[
        int | None, typer.Option("--max-results", min=1, help="Sources to return.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the structured result.")] = False,
) -> None:
    """Search the web; several queries run concurrently and their sources are merged."""
    from .tools import web_search_tool

    settings = _settings(as_json, search_provider=provider, search_max_results=max_results)
    status = _Status("Searching the web", list(dict.fromkeys(q.strip() for q in queries)))

    def on_done(query: str, _result: SearchResult) -> None:
        status.done(query)

    with status:
        result = _run_tool(
            settings,
            lambda runtime: web_search_tool(
                runtime, settings.tool_options(), on_query_done=on_done
            ),
            {"queries": list(queries)},
            as_json=as_json,
        )
    _print(result, as_json=as_json)


@app.command()
def fetch(
    url: Annotated[str, typer.Argument(help="The http(s) URL to read.")],
    raw: Annotated[
        bool, typer.Option("--raw", help="Print the decoded body instead of the rendering.")
    ] = False,
    start: Annotated[
        int, typer.Option("--start", min=0, help="Character offset to continue from.")
    ] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the structured result.")] = False,
) -> None:
    """Fetch a page safely and print its main content as Markdown."""
    from .tools import web_fetch_tool

    settings = _settings(as_json)
    with _Status("Fetching", [url]):
        if raw:
            _print_raw(_fetch_raw(settings, url, as_json=as_json), as_json=as_json)
            return
        result = _run_tool(
            settings,
            lambda runtime: web_fetch_tool(runtime, settings.tool_options()),
            {"url": url, "start": start},
            as_json=as_json,
        )
    _print(result, as_json=as_json)


def _fetch_raw(settings: Settings, url: str, *, as_json: bool) -> FetchResult:
    """The seam's result itself, for ``--raw``: same validation and limits, no rendering."""
    from .cache import default_sqlite_url
    from .config import ConfigError, build_runtime
    from .seam import FetchRequest, WebError
    from .tools import ToolError
    from .tools.fetch import parse_fetch_arguments

    async def main() -> FetchResult:
        checked, _ = parse_fetch_arguments({"url": url})
        async with build_runtime(settings, default_cache=default_sqlite_url()) as runtime:
            return await runtime.fetch(FetchRequest(checked))

    try:
        return asyncio.run(main())
    except ToolError as error:
        _fail(error.code, error.message, as_json=as_json)
    except WebError as error:
        _fail(error.code.value, error.message, as_json=as_json)
    except ConfigError as error:
        _invalid_setting(error, as_json=as_json)


def _print_raw(result: FetchResult, *, as_json: bool) -> None:
    from .tools.fetch import body_kind

    if as_json:
        data = {
            "url": result.url,
            "status_code": result.status_code,
            "kind": body_kind(result.body),
            "content": result.body.content,
            "truncated": result.truncated,
        }
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(result.body.content)


def _print(result: ToolResult, *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result.data.to_json(), ensure_ascii=False, indent=2))
    else:
        print(result.text)


@app.command()
def mcp(
    http: Annotated[
        bool, typer.Option("--http", help="Serve streamable HTTP instead of stdio.")
    ] = False,
    host: Annotated[
        str | None, typer.Option("--host", help="Address to bind with --http [127.0.0.1].")
    ] = None,
    port: Annotated[
        int | None,
        typer.Option("--port", min=1, max=65535, help="Port to bind with --http [8000]."),
    ] = None,
) -> None:
    """Serve web_search and web_fetch to MCP clients (stdio by default)."""
    _require_extra("mcp", "mcp")
    from . import __version__
    from .config import build_runtime
    from .tools.mcp_server import DEFAULT_HTTP_PATH, DEFAULT_HTTP_PORT, serve_http, serve_stdio

    if not http and (host is not None or port is not None):
        raise typer.BadParameter("--host and --port apply only with --http")
    settings = _settings(False)

    def open_runtime() -> WebRuntime:
        return build_runtime(settings, default_cache="memory")

    try:
        if not http:
            asyncio.run(serve_stdio(open_runtime, settings.tool_options(), version=__version__))
            return
        host, port = host or "127.0.0.1", port or DEFAULT_HTTP_PORT
        _announce_mcp_http(host, port, DEFAULT_HTTP_PATH)
        asyncio.run(
            serve_http(
                open_runtime, settings.tool_options(), host=host, port=port, version=__version__
            )
        )
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


def _is_loopback(host: str) -> bool:
    import ipaddress

    try:
        return host == "localhost" or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _announce_mcp_http(host: str, port: int, path: str) -> None:
    shown = f"[{host}]" if ":" in host else host
    print(f"webreach: MCP server on http://{shown}:{port}{path}", file=sys.stderr)
    if not _is_loopback(host):
        print(
            f"webreach: warning: {host} is not a loopback address and this server has no "
            "authentication; anyone who can reach it can use its web tools",
            file=sys.stderr,
        )


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to bind.")] = 8080,
) -> None:
    """Serve Chat Completions, Responses and Messages with server-side web search."""
    _require_extra("serve", "server")
    settings = _settings(False)
    if not settings.upstream_base_url:
        _fail(
            "INVALID_SETTING",
            "WEBREACH_UPSTREAM_BASE_URL is not set: name the OpenAI-compatible endpoint to front",
            as_json=False,
            exit_code=EXIT_USAGE,
        )
    keys = _secret_list(settings.server_api_keys)
    if not keys and not _is_loopback(host):
        _fail(
            "INVALID_SETTING",
            f"refusing to serve on {host} without WEBREACH_SERVER_API_KEYS; "
            "set inbound keys or bind to a loopback address",
            as_json=False,
            exit_code=EXIT_USAGE,
        )
    import uvicorn

    from .config import ConfigError, build_runtime, open_response_store
    from .server.app import ServerConfig, create_app

    upstream_key = settings.upstream_api_key
    signing_key = settings.signing_key.get_secret_value() if settings.signing_key else None
    if not signing_key:
        print(
            "webreach: warning: WEBREACH_SIGNING_KEY is not set; a random key seals read pages, "
            "so restoring them in later rounds works only within this process",
            file=sys.stderr,
        )
    config = ServerConfig(
        upstream_base_url=settings.upstream_base_url,
        upstream_api_key=upstream_key.get_secret_value() if upstream_key else None,
        upstream_model=settings.upstream_model,
        api_keys=keys,
        signing_key=signing_key,
        upstream_timeout=settings.upstream_timeout,
        upstream_connect_timeout=settings.upstream_connect_timeout,
        max_body_bytes=settings.server_max_body_bytes,
        store_ttl=settings.store_ttl,
        upstream_dialect=settings.upstream_dialect,
        citations=settings.citations,
        upstream_continue=settings.upstream_continue,
        moderation_base_url=settings.moderation_base_url,
        moderation_api_key=(
            settings.moderation_api_key.get_secret_value() if settings.moderation_api_key else None
        ),
        moderation_model=settings.moderation_model,
    )
    try:
        runtime = build_runtime(settings, default_cache="memory")
    except ConfigError as error:
        _invalid_setting(error, as_json=False)
    store = open_response_store(settings)
    server = create_app(config, runtime, settings.tool_options(), store=store)
    print(f"webreach: serving on http://{host}:{port}/v1", file=sys.stderr)
    uvicorn.run(server, host=host, port=port, log_level="warning", access_log=False)


def _secret_list(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    return tuple(part.strip() for part in value.get_secret_value().split(",") if part.strip())


def main() -> None:
    app()
