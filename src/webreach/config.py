"""Settings from the environment and ``webreach.toml``, and a ready :class:`WebRuntime`.

This module and ``cli.py`` are the only places that wire concrete providers into a runtime. The
providers themselves are found, not listed: every module of ``webreach.providers.search`` and
``webreach.providers.fetch`` with a ``PROVIDER`` spec (see :mod:`webreach.providers.spec`), plus
the installed plugins. :class:`Settings` holds only what is shared; each provider declares and
reads its own settings (``EXA_API_KEY``, ``PERPLEXITY_MODEL`` …) and receives only those.
"""

from __future__ import annotations

import importlib
import logging
import os
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from .providers.spec import ProviderContext, ProviderSpec, config_file
from .seam import CacheStore, WebreachError, WebRuntime

if TYPE_CHECKING:
    from .tools import ToolOptions

__all__ = [
    "ConfigError",
    "Settings",
    "build_runtime",
    "discover_providers",
    "load_settings",
    "open_response_store",
]

ENV_PREFIX = "WEBREACH_"
MODEL_SEARCH_TIMEOUT = 120.0
"""Seconds allowed to the model-backed search providers (perplexity, deepseek)."""

PositiveInt = Annotated[int, Field(gt=0)]
ProviderKind = Literal["search", "fetch", "image_search"]
_PACKAGES: Mapping[ProviderKind, str] = {
    "search": "webreach.providers.search",
    "fetch": "webreach.providers.fetch",
    "image_search": "webreach.providers.image_search",
}
_ENTRY_POINT_GROUPS: Mapping[ProviderKind, str] = {
    "search": "webreach.search_providers",
    "fetch": "webreach.fetch_providers",
    "image_search": "webreach.image_search_providers",
}
S = TypeVar("S", bound=BaseSettings)


class ConfigError(WebreachError, ValueError):
    """An invalid setting; the message names the variable and what was wrong."""


class Settings(BaseSettings):
    """The shared settings of webreach, with their defaults. Secrets are ``SecretStr``.

    A provider's own settings (its key, endpoint, model …) are not here: each provider module
    declares them (see :mod:`webreach.providers.spec`) and :func:`build_runtime` reads them.
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        extra="ignore",
        validate_default=True,
    )

    search_provider: str | None = None
    fetch_provider: str | None = None
    search_enabled: bool = True
    fetch_enabled: bool = True
    search_max_queries: PositiveInt = 4
    search_max_results: PositiveInt = 8
    search_timeout: Annotated[float, Field(gt=0)] = 30.0
    fetch_max_chars: PositiveInt = 40_000
    fetch_timeout: Annotated[float, Field(gt=0)] = 30.0
    fetch_max_bytes: PositiveInt = 10 * 1024 * 1024
    image_search_provider: str | None = None
    image_search_timeout: Annotated[float, Field(gt=0)] = 60.0
    fetch_allow: str | None = None
    cache: str | None = None
    cache_ttl: Annotated[float, Field(ge=0)] = 600.0
    proxy: str | None = None

    upstream_base_url: str | None = None
    upstream_api_key: SecretStr | None = None
    upstream_model: str | None = None
    upstream_timeout: Annotated[float, Field(gt=0)] = 600.0
    upstream_connect_timeout: Annotated[float, Field(gt=0)] = 10.0
    upstream_dialect: Literal["openai", "deepseek"] = "openai"
    server_api_keys: SecretStr | None = None
    server_max_body_bytes: PositiveInt = 32 * 1024 * 1024
    store_ttl: Annotated[float, Field(ge=0)] = 3600.0
    citations: Literal["annotations", "markdown"] = "annotations"
    upstream_continue: Literal["auto", "prefix", "continue_final_message", "prefill", "off"] = (
        "auto"
    )
    moderation_base_url: str | None = None
    moderation_api_key: SecretStr | None = None
    moderation_model: str = "omni-moderation-latest"
    signing_key: SecretStr | None = None

    @field_validator("upstream_base_url")
    @classmethod
    def _no_credentials_in_url(cls, value: str | None) -> str | None:
        """A password in the URL would end up in logs and error texts; keys have their own
        setting."""
        if value and "@" in urlsplit(value).netloc:
            raise ValueError(
                "must not contain credentials (user:password@); "
                "put the upstream's key in WEBREACH_UPSTREAM_API_KEY"
            )
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, config_file()))

    def tool_options(self) -> ToolOptions:
        from .tools import ToolOptions

        return ToolOptions(
            search_enabled=self.search_enabled,
            fetch_enabled=self.fetch_enabled,
            search_max_queries=self.search_max_queries,
            search_max_results=self.search_max_results,
            fetch_max_chars=self.fetch_max_chars,
        )


def _variable_name(settings_cls: type[BaseSettings], field: str) -> str:
    """The variable that sets ``field`` of ``settings_cls``: its alias, else prefix and name."""
    info = settings_cls.model_fields.get(field)
    if info is None:
        return field.upper()
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0]).upper()
    if isinstance(alias, str):
        return alias.upper()
    return f"{settings_cls.model_config.get('env_prefix') or ''}{field}".upper()


def _problems(settings_cls: type[BaseSettings], error: ValidationError) -> list[str]:
    """``VARIABLE: what is wrong`` for each invalid value, never the value: it may be a key."""
    problems = []
    for item in error.errors(include_url=False, include_input=False):
        field = str(item["loc"][0]) if item["loc"] else "?"
        problems.append(f"{_variable_name(settings_cls, field)}: {item['msg']}")
    return problems


def _invalid(problems: list[str]) -> ConfigError:
    return ConfigError("invalid setting — " + "; ".join(problems))


def _read(settings_cls: type[S], **overrides: Any) -> S:
    """``settings_cls`` from its sources; an invalid value is a :class:`ConfigError` naming the
    variable."""
    try:
        return settings_cls(**overrides)
    except ValidationError as error:
        raise _invalid(_problems(settings_cls, error)) from None


def load_settings(**overrides: Any) -> Settings:
    """Read the shared settings; an invalid value becomes a :class:`ConfigError` naming the
    variable. The providers' own settings are read by :func:`build_runtime`."""
    config_path = os.environ.get("WEBREACH_CONFIG")
    if config_path and not Path(config_path).is_file():
        raise ConfigError(f"WEBREACH_CONFIG: no such file: {config_path}")
    return _read(Settings, **overrides)


def _open_cache(settings: Settings, default: str | None) -> CacheStore | None:
    """The configured store; one that cannot be opened means no cache and one warning."""
    url = settings.cache or default
    if not url or url == "none" or settings.cache_ttl <= 0:
        return None
    return _open_store(url, "a cache")


def _open_store(url: str, purpose: str) -> CacheStore | None:
    from .cache import open_store

    try:
        return open_store(url)
    except Exception as error:
        logging.getLogger("webreach.cache").warning(
            "WEBREACH_CACHE: cannot open %r (%s); continuing without %s", url, error, purpose
        )
        return None


def discover_providers(kind: ProviderKind) -> list[ProviderSpec[Any, Any]]:
    """The built-in providers of ``kind``: the ``PROVIDER`` of every public module of
    ``webreach.providers.search`` (or ``.fetch``, ``.image_search``), in module-name order.

    A new module with a ``PROVIDER`` is found with no other change. This imports the provider
    modules, so it runs when a runtime is built, never when the command line starts.
    """
    package = importlib.import_module(_PACKAGES[kind])
    specs: list[ProviderSpec[Any, Any]] = []
    for module in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if module.name.startswith("_"):
            continue
        spec = getattr(
            importlib.import_module(f"{package.__name__}.{module.name}"), "PROVIDER", None
        )
        if isinstance(spec, ProviderSpec):
            specs.append(spec)
    return specs


def open_response_store(settings: Settings) -> CacheStore | None:
    """Where ``webreach serve`` keeps responses and read pages: the configured cache store (so
    replicas sharing Redis share them), in memory when the cache is off; None when
    ``WEBREACH_STORE_TTL`` is 0."""
    if settings.store_ttl <= 0:
        return None
    url = settings.cache if settings.cache and settings.cache != "none" else "memory"
    return _open_store(url, "a response store")


def build_runtime(
    settings: Settings | None = None,
    *,
    default_cache: str | None = "memory",
    provider_settings: Iterable[BaseSettings] = (),
) -> WebRuntime:
    """A runtime with the built-in and plugin providers registered; it owns their HTTP clients.

    ``default_cache`` applies when ``WEBREACH_CACHE`` is unset: ``memory`` suits a server,
    the command line passes a SQLite file so repeated searches are free across runs.
    ``provider_settings`` holds settings objects made in code (``ExaSettings(exa_api_key=…)``)
    that replace what those providers would read from the environment and the TOML file.

    Every provider's settings are read before anything is opened; an invalid one raises
    :class:`ConfigError` naming its variable.
    """
    settings = settings or load_settings()
    given = {type(item): item for item in provider_settings}
    problems: list[str] = []
    search = _builders("search", settings, given, problems)
    fetch = _builders("fetch", settings, given, problems)
    image_search = _builders("image_search", settings, given, problems)
    if problems:
        raise _invalid(problems)

    runtime = WebRuntime(
        search_provider=settings.search_provider,
        fetch_provider=settings.fetch_provider,
        image_search_provider=settings.image_search_provider,
        cache=_open_cache(settings, default_cache),
        cache_ttl=settings.cache_ttl,
        image_search_timeout=settings.image_search_timeout,
    )
    context = _context(settings, runtime)
    for build in search:
        if (provider := build(context)) is not None:
            runtime.register_search_provider(provider)
            _own_if_closeable(runtime, provider)
    for build in fetch:
        if (fetcher := build(context)) is not None:
            runtime.register_fetch_provider(fetcher)
            _own_if_closeable(runtime, fetcher)
    for build in image_search:
        if (finder := build(context)) is not None:
            runtime.register_image_search_provider(finder)
            _own_if_closeable(runtime, finder)
    return runtime


_Builder = Callable[[ProviderContext], Any]
"""A provider whose settings are read, waiting for the context: returns it, or ``None``."""


def _builders(
    kind: ProviderKind,
    settings: Settings,
    given: Mapping[type[BaseSettings], BaseSettings],
    problems: list[str],
) -> list[_Builder]:
    """The built-in providers of ``kind``, then the installed plugins of its entry-point group.

    A plugin's entry point names either a :class:`ProviderSpec`, built like the built-ins (its
    own settings and the context), or, as before specs existed, a callable that receives the
    shared settings with every secret removed and returns a provider or ``None``.
    Invalid settings are added to ``problems``, so one error can name them all.
    """
    builders = [_spec_builder(spec, given, problems) for spec in discover_providers(kind)]
    for entry in entry_points(group=_ENTRY_POINT_GROUPS[kind]):
        plugin = entry.load()
        if isinstance(plugin, ProviderSpec):
            builders.append(_spec_builder(plugin, given, problems))
        else:
            builders.append(_legacy_builder(plugin, _without_secrets(settings)))
    return builders


def _spec_builder(
    spec: ProviderSpec[Any, Any],
    given: Mapping[type[BaseSettings], BaseSettings],
    problems: list[str],
) -> _Builder:
    own = given.get(spec.settings)
    if own is None:
        try:
            own = spec.settings()
        except ValidationError as error:
            problems.extend(_problems(spec.settings, error))

    def build(context: ProviderContext) -> Any:
        return spec.create(own, context)

    return build


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


def _context(settings: Settings, runtime: WebRuntime) -> ProviderContext:
    """What the providers share; the runtime owns and closes its clients."""
    from .net import create_client

    client = create_client(timeout=settings.search_timeout, proxy=settings.proxy)
    runtime.own(client)
    # A model writes the answer of these searches, which takes far longer than an index lookup.
    model_client = create_client(
        timeout=max(settings.search_timeout, MODEL_SEARCH_TIMEOUT), proxy=settings.proxy
    )
    runtime.own(model_client)
    return ProviderContext(
        client=client,
        model_client=model_client,
        search_timeout=settings.search_timeout,
        proxy=settings.proxy,
        fetch_timeout=settings.fetch_timeout,
        fetch_max_bytes=settings.fetch_max_bytes,
        fetch_allow=settings.fetch_allow,
    )


def _own_if_closeable(runtime: WebRuntime, provider: object) -> None:
    if callable(getattr(provider, "aclose", None)):
        runtime.own(provider)  # type: ignore[arg-type]
