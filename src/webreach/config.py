"""Settings from the environment and ``webreach.toml``, and a ready :class:`WebRuntime`.

This module and ``cli.py`` are the only places that wire concrete providers into a runtime. The
providers themselves are found, not listed: every module of ``webreach.providers.search`` and
``webreach.providers.fetch`` with a ``PROVIDER`` spec (see :mod:`webreach.providers.spec`), plus
the installed plugins. :class:`Settings` holds only what is shared; each provider declares and
reads its own settings (``EXA_API_KEY``, ``PERPLEXITY_MODEL`` …) and receives only those.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from pydantic import SecretStr, ValidationError
from pydantic_settings import BaseSettings

from .config_sources import (
    ConfigError,
    Setting,
    describe,
    read_settings_file,
    unknown_keys,
    unknown_variables,
)
from .providers import PACKAGES, ProviderKind, discover_providers, specs_reading
from .providers import provider_sources as _sources
from .providers.search import AUTO_ORDER
from .providers.spec import ClientPair, ProviderContext, ProviderSpec
from .seam import CacheStore, InvalidValueError, WebRuntime, parse_provider_ids
from .settings import Settings
from .stores import open_cache, open_response_store

__all__ = [
    "BuiltProvider",
    "ConfigError",
    "Settings",
    "all_settings",
    "build_runtime",
    "built_providers",
    "check_settings",
    "check_settings_of",
    "configured_secrets",
    "discover_providers",
    "load_settings",
    "open_response_store",
    "provider_kinds",
    "read_each_once",
    "read_provider_settings",
]

MODEL_SEARCH_TIMEOUT = 120.0
"""Seconds allowed to the model-backed search providers (perplexity, deepseek)."""

S = TypeVar("S", bound=BaseSettings)

Kinds = Iterable[ProviderKind] | None
"""The capabilities a call concerns; None is every one."""

_read_once: dict[type[BaseSettings], BaseSettings] | None = None
"""Each provider's settings as first read, once :func:`read_each_once` is called."""


def read_each_once() -> None:
    """From now on, read each provider's settings once and keep them: for a process that runs
    one command, whose environment and settings file do not change while it runs (the start-up
    check, the provider check and the runtime then share one reading of each)."""
    global _read_once
    if _read_once is None:
        _read_once = {}


def _provider_settings(settings_cls: type[S]) -> S:
    """``settings_cls()``, or the instance already read (see :func:`read_each_once`); an
    invalid value raises pydantic's ``ValidationError``, which callers describe."""
    if _read_once is None:
        return settings_cls()
    found = _read_once.get(settings_cls)
    if not isinstance(found, settings_cls):
        found = _read_once[settings_cls] = settings_cls()
    return found


def _read(settings_cls: type[S], **overrides: Any) -> S:
    """``settings_cls`` from its sources; an invalid value is a :class:`ConfigError` naming the
    variable or file key that holds it."""
    try:
        return settings_cls(**overrides)
    except ValidationError as error:
        problems = describe(error, settings_cls, read_settings_file(), None, overrides)
        raise ConfigError(problems) from None


def load_settings(**overrides: Any) -> Settings:
    """Read the shared settings; an invalid value becomes a :class:`ConfigError` naming the
    variable or file key. The providers' own settings are read by :func:`build_runtime`, or all
    at once by :func:`check_settings`.

    A settings file that is not valid TOML, a key of it no settings class reads, or a
    ``WEBREACH_*`` variable that is no setting, is an error too: a typo would otherwise leave
    the setting silently at its default.
    """
    return _load_settings((), overrides)


def _load_settings(kinds: Kinds, overrides: Mapping[str, Any]) -> Settings:
    """:func:`load_settings`, judging names first against the shared settings and those of the
    providers of ``kinds``; only a name none of them reads loads every provider to judge it."""
    file = read_settings_file()
    problems = _unknown_names(file, all_settings(kinds))
    if problems and kinds is not None:
        problems = _unknown_names(file, all_settings())
    try:
        settings = _read(Settings, **overrides)
    except ConfigError as error:
        problems += error.problems
    if problems:
        raise ConfigError(problems)
    return settings


def _unknown_names(file: Any, known: list[Setting]) -> list[str]:
    problems = unknown_variables(os.environ, known)
    return problems + (unknown_keys(file, known) if file.data else [])


def all_settings(kinds: Kinds = None) -> list[Setting]:
    """Every setting: the shared ones, then each provider's own (plugins' included); with
    ``kinds``, only the providers of those capabilities."""
    found = Setting.all_of(Settings)
    for spec in _all_specs(kinds):
        found += Setting.all_of(spec.settings, spec.id)
    return found


def check_settings(**overrides: Any) -> Settings:
    """The shared settings, after every setting has been read and validated: the settings
    file, the shared values and every provider's own. Commands call it first, so a bad value
    stops them before they do anything (an MCP server before it accepts a client)."""
    return check_settings_of(None, **overrides)


def check_settings_of(kinds: Kinds, **overrides: Any) -> Settings:
    """:func:`check_settings` for a command that uses only the providers of ``kinds``: the
    others' modules are not even imported (a name in the environment or the settings file
    that none of the shared or these providers' settings reads is still judged against all)."""
    kinds = None if kinds is None else tuple(kinds)
    problems: list[str] = []
    try:
        settings = _load_settings(kinds, overrides)
    except ConfigError as error:
        problems += error.problems
    file = read_settings_file()
    for spec in _all_specs(kinds) + _set_elsewhere(kinds, file):
        try:
            _provider_settings(spec.settings)
        except ValidationError as error:
            problems += describe(error, spec.settings, file, provider=spec.id)
    if problems:
        raise ConfigError(problems)
    return settings


def _set_elsewhere(kinds: Kinds, file: Any) -> list[ProviderSpec[Any, Any]]:
    """The providers outside ``kinds`` that the environment or the settings file may configure:
    a bad value of theirs stops a command too, though it never builds them."""
    if kinds is None:
        return []
    names = [*os.environ, *(file.data or {})]
    return [spec for kind in PACKAGES if kind not in kinds for spec in specs_reading(kind, names)]


def _all_specs(kinds: Kinds = None) -> list[ProviderSpec[Any, Any]]:
    """The built-in providers and the plugins that declare a :class:`ProviderSpec`, of
    ``kinds`` (None: of every kind)."""
    return [
        spec
        for kind in (PACKAGES if kinds is None else kinds)
        for spec, _plugin in _sources(kind)
        if isinstance(spec, ProviderSpec)
    ]


@dataclass(frozen=True, slots=True)
class BuiltProvider:
    """A provider as the settings give it, for ``webreach config`` and start-up checks."""

    kind: ProviderKind
    provider: Any
    spec: ProviderSpec[Any, Any] | None
    """None for a plugin callable, which declares no settings."""
    plugin: bool
    context: ProviderContext
    """What it was built with, to build it again with other settings."""


def provider_kinds() -> tuple[ProviderKind, ...]:
    """The capabilities providers are found for (``search``, ``fetch`` …)."""
    return tuple(PACKAGES)


def built_providers(
    settings: Settings, owner: WebRuntime, kinds: Kinds = None
) -> list[BuiltProvider]:
    """Every provider ``settings`` give, of every kind (or of ``kinds``), built without I/O;
    ``owner`` owns (and closes) their clients. Nothing is registered: this is for describing,
    not running."""
    context = _context(settings, owner, draws_pages=True)
    built: list[BuiltProvider] = []
    for kind in PACKAGES if kinds is None else kinds:
        for source, plugin in _sources(kind):
            if isinstance(source, ProviderSpec):
                spec: ProviderSpec[Any, Any] | None = source
                provider = source.create(read_provider_settings(source.settings), context)
            else:
                spec, provider = None, source(_without_secrets(settings))
            if provider is not None:
                _own_if_closeable(owner, provider)
                built.append(BuiltProvider(kind, provider, spec, plugin, context))
    return built


def read_provider_settings(settings_cls: type[S]) -> S:
    """One provider's settings, read (once, after :func:`read_each_once`); an invalid value is
    a :class:`ConfigError` naming the variable or file key that holds it."""
    try:
        return _provider_settings(settings_cls)
    except ValidationError as error:
        problems = describe(error, settings_cls, read_settings_file(), None, {})
        raise ConfigError(problems) from None


def build_runtime(
    settings: Settings | None = None,
    *,
    default_cache: str | None = "memory",
    provider_settings: Iterable[BaseSettings] = (),
    wrap_cache: Callable[[CacheStore], CacheStore] | None = None,
    kinds: Kinds = None,
    built: Iterable[BuiltProvider] | None = None,
    draws_pages: bool = True,
    readers: bool = False,
) -> WebRuntime:
    """A runtime with the built-in and plugin providers registered; it owns their HTTP clients.

    ``default_cache`` applies when ``WEBREACH_CACHE`` is unset: ``memory`` suits a server,
    the command line passes a SQLite file so repeated searches are free across runs.
    ``provider_settings`` holds settings objects made in code (``ExaSettings(exa_api_key=…)``)
    that replace what those providers would read from the environment and the TOML file.
    ``wrap_cache`` receives the opened cache store and returns the one to use (the command line
    counts hits with it, to say when a result came from the cache). ``kinds`` limits the
    providers built and registered to those capabilities (``webreach fetch`` builds no search
    provider); None registers every kind. ``built`` holds the providers :func:`built_providers`
    made for a check of these same settings: they are registered as they are, none is built
    again (the caller keeps their owner, and closes it with the runtime). Without
    ``draws_pages`` no browser is started: a page that needs one comes back as served, its
    ``render_reason`` saying so (a page reader process, whose owner draws it).
    With ``readers`` the runtime reads a search's pages in ``WEBREACH_READ_PROCESSES`` reader
    processes, each with a runtime built from these same settings (the servers do): a runtime
    given providers by hand must not, as its readers would not have them.

    Every provider's settings are read before anything is opened; an invalid one raises
    :class:`ConfigError` naming its variable.
    """
    settings = settings or load_settings()
    given = {type(item): item for item in provider_settings}
    problems: list[str] = []
    paces: dict[str, float] = {}
    wanted = set(PACKAGES if kinds is None else kinds) if built is None else set()
    builders = [
        (kind, build)
        for kind in PACKAGES
        if kind in wanted
        for build in _builders(kind, settings, given, problems, paces if kind == "search" else None)
    ]
    ready = [item for item in built or () if kinds is None or item.kind in kinds]
    for item in ready:
        if item.kind == "search" and item.spec is not None:
            _pace(read_provider_settings(item.spec.settings), item.spec.id, paces)
    try:
        WebRuntime(**_selection(settings))
    except InvalidValueError as error:
        problems.append(error.message)
    if problems:
        raise ConfigError(problems)
    readers_given = _fetch_settings(given) if readers else None
    runtime = _empty_runtime(settings, default_cache, wrap_cache, paces, readers=readers_given)
    for item in ready:
        _register(runtime, item.kind, item.provider)
    if not builders:
        return runtime
    context = _context(settings, runtime, draws_pages=draws_pages)
    for kind, build in builders:
        if (provider := build(context)) is not None:
            _register(runtime, kind, provider)
            _own_if_closeable(runtime, provider)
    return runtime


def _empty_runtime(
    settings: Settings,
    default_cache: str | None,
    wrap_cache: Callable[[CacheStore], CacheStore] | None,
    paces: dict[str, float],
    *,
    readers: tuple[BaseSettings, ...] | None,
) -> WebRuntime:
    """The runtime the settings describe, its cache open and its render pool (and with
    ``readers``, the fetch providers' settings, its page readers) attached, before any provider
    is registered."""
    cache = open_cache(settings, default_cache)
    runtime = WebRuntime(
        **_selection(settings),
        cache=wrap_cache(cache) if cache is not None and wrap_cache else cache,
        cache_ttl=settings.cache_ttl,
        search_timeout=settings.search_timeout,
        image_search_timeout=settings.image_search_timeout,
        search_pace=paces,
        robots=settings.fetch_robots,
        user_agent=settings.fetch_user_agent or "webreach",
    )
    from .tools.render_pool import attach_render_pool

    attach_render_pool(runtime, settings.render_processes)
    if readers is not None and not _draws_every_page(settings):
        from .tools.read_pool import attach_read_pool

        factory = partial(reader_runtime, settings, readers)
        attach_read_pool(runtime, settings.read_processes, factory)
    return runtime


def _draws_every_page(settings: Settings) -> bool:
    """``browser`` draws every page, so a reader, which draws none, would hand each one back."""
    return "browser" in parse_provider_ids(settings.fetch_provider, "fetch_provider")


def reader_runtime(settings: Settings, fetch_settings: Iterable[BaseSettings]) -> WebRuntime:
    """A page reader process's runtime: the same fetch providers, settings, cache and limits,
    reading in place (no processes of its own) and drawing nothing, since a page a browser must
    draw goes back to the owner's (with ``browser``, which draws every page, there are none).

    The providers' settings are the owner's as it read them: the reader's environment is the
    fork server's, as it was when the first pool started."""
    own = settings.model_copy(update={"render_processes": 0, "read_processes": 0})
    return build_runtime(own, provider_settings=fetch_settings, kinds=("fetch",), draws_pages=False)


def _fetch_settings(given: Mapping[type[BaseSettings], BaseSettings]) -> tuple[BaseSettings, ...]:
    """Every built-in or spec'd fetch provider's settings, given or read here (ones that do not
    read are left out: :func:`build_runtime` reports them)."""
    found: list[BaseSettings] = []
    for source, _plugin in _sources("fetch"):
        if isinstance(source, ProviderSpec) and source.settings not in {type(f) for f in found}:
            own = given.get(source.settings)
            if own is None:
                try:
                    own = _provider_settings(source.settings)
                except ValidationError:
                    continue
            found.append(own)
    return tuple(found)


def _register(runtime: WebRuntime, kind: ProviderKind, provider: Any) -> None:
    if kind == "search":
        runtime.register_search_provider(provider)
    elif kind == "fetch":
        runtime.register_fetch_provider(provider)
    else:
        runtime.register_image_search_provider(provider)


def _selection(settings: Settings) -> dict[str, Any]:
    """Which providers each capability may use, as :class:`WebRuntime` takes it; ``auto`` for
    search follows :data:`webreach.providers.search.AUTO_ORDER`."""
    return {
        "search_provider": settings.search_provider,
        "search_order": AUTO_ORDER,
        "search_exclude": settings.search_exclude,
        "fetch_provider": settings.fetch_provider,
        "image_search_provider": settings.image_search_provider,
    }


_Builder = Callable[[ProviderContext], Any]
"""A provider whose settings are read, waiting for the context: returns it, or ``None``."""


def _builders(
    kind: ProviderKind,
    settings: Settings,
    given: Mapping[type[BaseSettings], BaseSettings],
    problems: list[str],
    paces: dict[str, float] | None = None,
) -> list[_Builder]:
    """The built-in providers of ``kind``, then the installed plugins of its entry-point group.

    A plugin's entry point names either a :class:`ProviderSpec`, built like the built-ins (its
    own settings and the context), or, as before specs existed, a callable that receives the
    shared settings with every secret removed and returns a provider or ``None``.
    Invalid settings are added to ``problems``, so one error can name them all. A spec whose
    settings set ``<id>_requests_per_second`` adds that pace to ``paces``.
    """
    return [
        _spec_builder(source, given, problems, paces)
        if isinstance(source, ProviderSpec)
        else _legacy_builder(source, _without_secrets(settings))
        for source, _plugin in _sources(kind)
    ]


def _spec_builder(
    spec: ProviderSpec[Any, Any],
    given: Mapping[type[BaseSettings], BaseSettings],
    problems: list[str],
    paces: dict[str, float] | None = None,
) -> _Builder:
    own = given.get(spec.settings)
    if own is None:
        try:
            own = _provider_settings(spec.settings)
        except ValidationError as error:
            problems += describe(error, spec.settings, read_settings_file(), provider=spec.id)
    if paces is not None:
        _pace(own, spec.id, paces)

    def build(context: ProviderContext) -> Any:
        return spec.create(own, context)

    return build


def _pace(own: BaseSettings | None, pid: str, paces: dict[str, float]) -> None:
    """Add the pace ``own`` sets for provider ``pid`` (``<id>_requests_per_second``)."""
    pace = getattr(own, f"{pid}_requests_per_second", None)
    if isinstance(pace, float):
        paces[pid] = pace


def _legacy_builder(plugin: Callable[[Settings], Any], shared: Settings) -> _Builder:
    def build(_context: ProviderContext) -> Any:
        return plugin(shared)

    return build


def _without_secrets(settings: Settings) -> Settings:
    """The shared settings as a plugin callable sees them: every ``SecretStr`` left unset."""
    hidden = {
        name: None
        for name in type(settings).model_fields
        if isinstance(getattr(settings, name), SecretStr)
    }
    return settings.model_copy(update=hidden)


def _context(settings: Settings, runtime: WebRuntime, *, draws_pages: bool) -> ProviderContext:
    """What the providers share; the runtime owns and closes its clients, which are made when
    a provider first asks for one (a fetch never does, so it never loads httpx)."""

    def open_clients() -> ClientPair:
        from .net import create_client
        from .net.client import stamp_hops

        client = create_client(timeout=settings.search_timeout, proxy=settings.proxy)
        runtime.own(client)
        # A model writes the answer of these searches, which takes far longer than an index
        # lookup.
        model_client = create_client(
            timeout=max(settings.search_timeout, MODEL_SEARCH_TIMEOUT),
            proxy=settings.proxy,
        )
        runtime.own(model_client)
        for provider_client in (client, model_client):
            provider_client.event_hooks["request"].append(stamp_hops)
        return client, model_client

    return ProviderContext(
        open_clients=open_clients,
        search_timeout=settings.search_timeout,
        proxy=settings.proxy,
        fetch_timeout=settings.fetch_timeout,
        fetch_max_bytes=settings.fetch_max_bytes,
        fetch_max_body_chars=settings.fetch_max_body_chars,
        fetch_allow=settings.fetch_allow,
        fetch_user_agent=settings.fetch_user_agent,
        fetch_proxy=settings.fetch_proxy,
        draws_pages=draws_pages,
    )


def _own_if_closeable(runtime: WebRuntime, provider: object) -> None:
    if callable(getattr(provider, "aclose", None)):
        runtime.own(provider)  # type: ignore[arg-type]


def configured_secrets(settings: Settings) -> tuple[str, ...]:
    """Every key the settings hold, the shared ones and each built-in or spec'd provider's:
    what the server keeps out of any text an upstream sends back. Providers whose settings do
    not read are skipped (``build_runtime`` reports them)."""
    found = [settings]
    for kind in PACKAGES:
        for source, _plugin in _sources(kind):
            if isinstance(source, ProviderSpec):
                try:
                    found.append(read_provider_settings(source.settings))
                except ConfigError:
                    continue
    values = (getattr(item, name) for item in found for name in type(item).model_fields)
    return tuple(
        value.get_secret_value()
        for value in values
        if isinstance(value, SecretStr) and value.get_secret_value()
    )
