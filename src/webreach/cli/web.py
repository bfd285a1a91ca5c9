"""``webreach search`` and ``webreach fetch``: the model-facing tools, run for a person.

They run exactly the tools (same validation, same limits). What they print depends on
``--format``: ``text`` (the default, for people), ``tool`` (exactly what the tool returns to a
model) or ``json`` (``--json``: the structured result, for programs).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer

from .app import command
from .common import (
    EXIT_HTTP_ERROR,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    Status,
    checked_providers,
    fail,
    invalid_setting,
    print_json,
    startup,
    usage,
)
from .hints import search_hint
from .search_options import search_filters, search_tuning
from .web_options import (
    BrowserOption,
    ContextSizeOption,
    CountryOption,
    ExcludeSiteOption,
    FailOption,
    Format,
    FormatOption,
    JsonOption,
    LanguageOption,
    MaxAgeOption,
    MaxResultsOption,
    MaxTokensOption,
    NoCacheOption,
    NumSearchResultsOption,
    ProviderOption,
    QueriesArgument,
    RawOption,
    RecencyOption,
    SiteOption,
    StartOption,
    TemperatureOption,
    UrlArgument,
)

if TYPE_CHECKING:
    from ..config import Settings
    from ..providers import ProviderKind
    from ..seam import CacheStore, SearchResult, WebError, WebRuntime
    from ..tools import ToolResult
    from ..tools.fetch import FetchToolResult

T = TypeVar("T")


def _format(chosen: Format | None, as_json: bool) -> Format:
    if as_json and chosen not in (None, Format.json):
        usage(f"--json and --format {chosen.value if chosen else ''} disagree; pick one")
    return Format.json if as_json else chosen or Format.text


class _CacheWatch:
    """Counts cache answers, so ``--json`` can say whether a result came from the cache."""

    def __init__(self) -> None:
        self.hits = 0
        self.misses = 0

    @property
    def cached(self) -> bool:
        return self.hits > 0 and self.misses == 0

    def wrap(self, store: CacheStore) -> CacheStore:
        watch = self

        class Watched:
            async def get(self, key: str) -> bytes | None:
                value = await store.get(key)
                if value is None:
                    watch.misses += 1
                else:
                    watch.hits += 1
                return value

            async def set(self, key: str, value: bytes, ttl: float) -> None:
                await store.set(key, value, ttl)

            async def aclose(self) -> None:
                await store.aclose()

        return Watched()


def _run(
    settings: Settings,
    work: Callable[[WebRuntime], Awaitable[T]],
    watch: _CacheWatch,
    *,
    uses: ProviderKind,
    option: str | None,
    as_json: bool,
    hint: Callable[[WebError], str | None] | None = None,
) -> T:
    """``work`` with a runtime built from ``settings``, once its providers are checked (see
    :func:`check_providers`; ``option`` is the one that chose the provider of ``uses``); a
    failure is one line, never a traceback, with the next step that ``hint`` gives for it.

    Only the capabilities checked are built (``uses``, and those the settings name providers
    for), each provider once: the runtime registers the very providers the check built."""
    import asyncio

    from ..cache import default_sqlite_url
    from ..config import ConfigError, build_runtime
    from ..seam import WebError, WebErrorCode, WebRuntime

    # One command's few pages render sooner in threads than a pool of processes starts.
    one_shot = settings.model_copy(update={"render_processes": 0})

    async def main() -> T:
        async with WebRuntime() as owner:  # the providers and their clients, closed last
            built, kinds = await checked_providers(
                settings, owner, need=uses, option=option, as_json=as_json
            )
            runtime = build_runtime(
                one_shot,
                default_cache=default_sqlite_url(),
                wrap_cache=watch.wrap,
                kinds=kinds,
                built=built,
            )
            async with runtime:
                return await work(runtime)

    try:
        return asyncio.run(main())
    except WebError as error:
        message = error.message
        if error.code == WebErrorCode.WEB_PROVIDER_AMBIGUOUS:
            message += " (or pass --provider ID)"
        fail(
            error.code.value,
            message,
            as_json=as_json,
            retry_after=error.retry_after,
            hint=hint(error) if hint is not None else None,
        )
    except ConfigError as error:
        invalid_setting(error, as_json=as_json)
    except KeyboardInterrupt:
        print("webreach: interrupted", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED) from None


def _turned_off(settings: Settings, field: str, what: str, as_json: bool) -> NoReturn:
    from ..config import Settings
    from ..config_sources import Setting, read_settings_file

    setting = next(s for s in Setting.all_of(Settings) if s.field == field)
    where = setting.source(read_settings_file(), os.environ)
    origin = {"file": f"{setting.key} = false in the settings file"}.get(
        where, f"{setting.variable}=false"
    )
    fail(
        "NOT_ENABLED",
        f"web {what} is turned off ({origin}); set it to true to {what} from here",
        as_json=as_json,
        exit_code=EXIT_USAGE,
    )


def _print_json(data: dict[str, Any], cached: bool) -> None:
    print_json({**data, "cached": cached})


@command(short_help="Search the web and print the sources.")
def search(
    queries: QueriesArgument,
    provider: ProviderOption = None,
    max_results: MaxResultsOption = None,
    recency: RecencyOption = None,
    site: SiteOption = None,
    exclude_site: ExcludeSiteOption = None,
    country: CountryOption = None,
    language: LanguageOption = None,
    context_size: ContextSizeOption = None,
    num_search_results: NumSearchResultsOption = None,
    max_tokens: MaxTokensOption = None,
    temperature: TemperatureOption = None,
    output: FormatOption = None,
    as_json: JsonOption = False,
    no_cache: NoCacheOption = False,
) -> None:
    """Search the web; several queries run concurrently and their sources are merged."""
    from ..tools import web_search_tool

    form = _format(output, as_json)
    as_json = form is Format.json
    filters = search_filters(recency, site, exclude_site, country, language, as_json=as_json)
    tuning = search_tuning(num_search_results, max_tokens, temperature, as_json=as_json)
    settings = startup(
        as_json,
        uses="search",
        search_provider=provider,
        search_max_results=max_results,
        search_context_size=context_size,
        cache="none" if no_cache else None,
    )
    if not settings.search_enabled:
        _turned_off(settings, "search_enabled", "search", as_json)
    named = f"--provider {provider}" if provider else None
    status = Status("Searching the web", list(dict.fromkeys(q.strip() for q in queries)))

    def on_done(query: str, _result: SearchResult) -> None:
        status.done(query)

    watch = _CacheWatch()
    with status:
        result = _run(
            settings,
            lambda runtime: web_search_tool(
                runtime, settings.tool_options(), on_query_done=on_done, filters=filters
            ).execute({"queries": list(queries), **tuning}),
            watch,
            uses="search",
            option=named,
            as_json=as_json,
            hint=search_hint,
        )
    _print_search(result, form, cached=watch.cached)


def _print_search(result: ToolResult, form: Format, *, cached: bool) -> None:
    """The sources as the format asks: the result's JSON, the tool's text or the list."""
    if form is Format.json:
        _print_json(result.data.to_json(), cached)
    elif form is Format.tool:
        print(result.text)
    else:
        from ..tools.search.tool import SearchToolResult
        from .show import print_text, search_text

        assert isinstance(result.data, SearchToolResult)
        print_text(search_text(result.data, cached=cached))


@command(short_help="Fetch a page and print its main content.")
def fetch(
    url: UrlArgument,
    raw: RawOption = False,
    start: StartOption = 0,
    fail_on_error: FailOption = False,
    browser: BrowserOption = False,
    max_age: MaxAgeOption = None,
    output: FormatOption = None,
    as_json: JsonOption = False,
    no_cache: NoCacheOption = False,
) -> None:
    """Fetch a page safely and print its main content as Markdown (--raw: the body itself).

    By default a page is read over HTTP and drawn in the headless browser only when it is an
    app shell (its text is drawn by scripts); --browser draws it there in any case."""
    from ..tools.fetch import page_piece, parse_fetch_arguments, read_page

    form = _format(output, as_json)
    as_json = form is Format.json
    if raw and form is Format.tool:
        usage("--raw prints the body itself; the tool's text is --format tool without --raw")
    settings = startup(
        as_json,
        uses="fetch",
        cache="none" if no_cache else None,
        fetch_provider="browser" if browser else None,
    )
    if not settings.fetch_enabled:
        _turned_off(settings, "fetch_enabled", "fetch", as_json)

    async def work(runtime: WebRuntime) -> Any:
        checked, at = parse_fetch_arguments({"url": url, "start": start})
        # A person asked: robots.txt is for what a model asks for (WEBREACH_FETCH_ROBOTS=obey
        # makes this obey it too).
        result, rendered = await read_page(
            runtime, checked, "raw" if raw else "markdown", obey_robots=False, max_age=max_age
        )
        size = max(len(rendered.text) - at, 1) if raw else settings.fetch_max_chars
        return page_piece(result, rendered, at, size)

    watch = _CacheWatch()
    with Status("Fetching", [url]):
        piece = _run(
            settings,
            work,
            watch,
            uses="fetch",
            option="--browser" if browser else None,
            as_json=as_json,
        )
    if fail_on_error and piece.status_code >= 400:
        fail(
            "HTTP_ERROR",
            f"HTTP {piece.status_code} from {piece.url} (--fail)",
            as_json=as_json,
            exit_code=EXIT_HTTP_ERROR,
            status_code=piece.status_code,
        )
    _print_page(piece, form, raw=raw, cached=watch.cached)


def _print_page(piece: FetchToolResult, form: Format, *, raw: bool, cached: bool) -> None:
    """The page as the format asks: the result's JSON, the tool's text, the body itself (a
    note on stderr when it was cut) or the Markdown rendering."""
    from ..tools.fetch import format_fetch, limit_words

    if form is Format.json:
        _print_json(piece.to_json(), cached)
    elif form is Format.tool:
        print(format_fetch(piece))
    elif raw:
        sys.stdout.write(piece.content)
        if piece.body_truncated:
            print(
                "webreach: note: only the first part of the document was read; it is larger "
                f"than {limit_words(piece)}",
                file=sys.stderr,
            )
    else:
        from .show import fetch_text, print_text

        print_text(fetch_text(piece, cached=cached))
