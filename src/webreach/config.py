"""Settings from the environment and ``webreach.toml``, and a ready :class:`WebRuntime`.

This module and ``cli.py`` are the only places that know the concrete providers.
"""

from __future__ import annotations

import logging
import os
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from .seam import CacheStore, SearchProvider, WebreachError, WebRuntime

if TYPE_CHECKING:
    import httpx

    from .tools import ToolOptions

__all__ = ["ConfigError", "Settings", "build_runtime", "load_settings"]

ENV_PREFIX = "WEBREACH_"
MODEL_SEARCH_TIMEOUT = 120.0
"""Seconds allowed to the model-backed search providers (perplexity, deepseek)."""


def _provider_field(name: str, default: Any = None) -> Any:
    """A provider setting read from its own unprefixed variable, e.g. ``EXA_API_KEY``."""
    return Field(default=default, validation_alias=AliasChoices(name))


PositiveInt = Annotated[int, Field(gt=0)]


class ConfigError(WebreachError, ValueError):
    """An invalid setting; the message names the variable and what was wrong."""


class Settings(BaseSettings):
    """Every setting of webreach, with its default. Secrets are ``SecretStr``."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        extra="ignore",
        populate_by_name=True,
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
    fetch_allow: str | None = None
    cache: str | None = None
    cache_ttl: Annotated[float, Field(ge=0)] = 600.0
    proxy: str | None = None

    upstream_base_url: str | None = None
    upstream_api_key: SecretStr | None = None
    upstream_model: str | None = None
    upstream_timeout: Annotated[float, Field(gt=0)] = 600.0
    upstream_connect_timeout: Annotated[float, Field(gt=0)] = 10.0
    server_api_keys: SecretStr | None = None
    server_max_body_bytes: PositiveInt = 32 * 1024 * 1024
    signing_key: SecretStr | None = None

    duckduckgo_backend: str = _provider_field("duckduckgo_backend", "auto")
    exa_api_key: SecretStr | None = _provider_field("exa_api_key")
    exa_base_url: str | None = _provider_field("exa_base_url")
    perplexity_api_key: SecretStr | None = _provider_field("perplexity_api_key")
    perplexity_base_url: str | None = _provider_field("perplexity_base_url")
    perplexity_model: str = _provider_field("perplexity_model", "sonar")
    deepseek_api_key: SecretStr | None = _provider_field("deepseek_api_key")
    deepseek_base_url: str | None = _provider_field("deepseek_base_url")
    deepseek_search_model: str = _provider_field("deepseek_search_model", "deepseek-flash")
    brave_api_key: SecretStr | None = _provider_field("brave_api_key")
    brave_base_url: str | None = _provider_field("brave_base_url")
    tavily_api_key: SecretStr | None = _provider_field("tavily_api_key")
    tavily_base_url: str | None = _provider_field("tavily_base_url")
    searxng_base_url: str | None = _provider_field("searxng_base_url")
    searxng_api_key: SecretStr | None = _provider_field("searxng_api_key")
    jina_api_key: SecretStr | None = _provider_field("jina_api_key")
    jina_base_url: str | None = _provider_field("jina_base_url")
    kagi_api_key: SecretStr | None = _provider_field("kagi_api_key")
    kagi_base_url: str | None = _provider_field("kagi_base_url")

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
        toml_file = Path(os.environ.get("WEBREACH_CONFIG") or "webreach.toml")
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file))

    def tool_options(self) -> ToolOptions:
        from .tools import ToolOptions

        return ToolOptions(
            search_enabled=self.search_enabled,
            fetch_enabled=self.fetch_enabled,
            search_max_queries=self.search_max_queries,
            search_max_results=self.search_max_results,
            fetch_max_chars=self.fetch_max_chars,
        )


def _variable_name(field: str) -> str:
    info = Settings.model_fields.get(field)
    alias = info.validation_alias if info is not None else None
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0]).upper()
    return f"{ENV_PREFIX}{field.upper()}"


def load_settings(**overrides: Any) -> Settings:
    """Read the settings; an invalid value becomes a :class:`ConfigError` naming the variable."""
    config_path = os.environ.get("WEBREACH_CONFIG")
    if config_path and not Path(config_path).is_file():
        raise ConfigError(f"WEBREACH_CONFIG: no such file: {config_path}")
    try:
        return Settings(**overrides)
    except ValidationError as error:
        problems = []
        for item in error.errors(include_url=False, include_input=False):
            field = str(item["loc"][0]) if item["loc"] else "?"
            problems.append(f"{_variable_name(field)}: {item['msg']}")
        raise ConfigError("invalid setting — " + "; ".join(problems)) from None


def _open_cache(settings: Settings, default: str | None) -> CacheStore | None:
    """The configured store; one that cannot be opened means no cache and one warning."""
    from .cache import open_store

    url = settings.cache or default
    if not url or url == "none" or settings.cache_ttl <= 0:
        return None
    try:
        return open_store(url)
    except Exception as error:
        logging.getLogger("webreach.cache").warning(
            "WEBREACH_CACHE: cannot open %r (%s); continuing without a cache", url, error
        )
        return None


def build_runtime(
    settings: Settings | None = None, *, default_cache: str | None = "memory"
) -> WebRuntime:
    """A runtime with the built-in and plugin providers registered; it owns their HTTP clients.

    ``default_cache`` applies when ``WEBREACH_CACHE`` is unset: ``memory`` suits a server,
    the command line passes a SQLite file so repeated searches are free across runs.
    """
    from .net import create_client
    from .providers.fetch.http import HttpFetchProvider

    settings = settings or load_settings()
    runtime = WebRuntime(
        search_provider=settings.search_provider,
        fetch_provider=settings.fetch_provider,
        cache=_open_cache(settings, default_cache),
        cache_ttl=settings.cache_ttl,
    )
    client = create_client(timeout=settings.search_timeout, proxy=settings.proxy)
    runtime.own(client)
    # A model writes the answer of these searches, which takes far longer than an index lookup.
    model_client = create_client(
        timeout=max(settings.search_timeout, MODEL_SEARCH_TIMEOUT), proxy=settings.proxy
    )
    runtime.own(model_client)
    for provider in _search_providers(settings, client, model_client):
        runtime.register_search_provider(provider)

    fetcher = HttpFetchProvider(
        timeout=settings.fetch_timeout,
        max_bytes=settings.fetch_max_bytes,
        allow=settings.fetch_allow or (),
    )
    runtime.own(fetcher)
    runtime.register_fetch_provider(fetcher)
    _register_plugins(runtime, settings)
    return runtime


def _search_providers(
    s: Settings, client: httpx.AsyncClient, model_client: httpx.AsyncClient
) -> list[SearchProvider]:
    """Every built-in search provider; each is available only when its settings say so."""
    from .providers.search.brave import BraveSearchProvider
    from .providers.search.deepseek import DeepSeekSearchProvider
    from .providers.search.duckduckgo import DuckDuckGoSearchProvider
    from .providers.search.exa import ExaSearchProvider
    from .providers.search.jina import JinaSearchProvider
    from .providers.search.kagi import KagiSearchProvider
    from .providers.search.perplexity import PerplexitySearchProvider
    from .providers.search.searxng import SearxngSearchProvider
    from .providers.search.tavily import TavilySearchProvider

    return [
        DuckDuckGoSearchProvider(
            backend=s.duckduckgo_backend, timeout=s.search_timeout, proxy=s.proxy
        ),
        ExaSearchProvider(api_key=_secret(s.exa_api_key), client=client, base_url=s.exa_base_url),
        PerplexitySearchProvider(
            api_key=_secret(s.perplexity_api_key),
            client=model_client,
            model=s.perplexity_model,
            base_url=s.perplexity_base_url,
        ),
        DeepSeekSearchProvider(
            api_key=_secret(s.deepseek_api_key),
            client=model_client,
            model=s.deepseek_search_model,
            base_url=s.deepseek_base_url,
        ),
        BraveSearchProvider(
            api_key=_secret(s.brave_api_key), client=client, base_url=s.brave_base_url
        ),
        TavilySearchProvider(
            api_key=_secret(s.tavily_api_key), client=client, base_url=s.tavily_base_url
        ),
        SearxngSearchProvider(
            base_url=s.searxng_base_url, token=_secret(s.searxng_api_key), client=client
        ),
        JinaSearchProvider(
            api_key=_secret(s.jina_api_key), client=client, base_url=s.jina_base_url
        ),
        KagiSearchProvider(
            api_key=_secret(s.kagi_api_key), client=client, base_url=s.kagi_base_url
        ),
    ]


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


def _register_plugins(runtime: WebRuntime, settings: Settings) -> None:
    """Providers of installed packages, from the ``webreach.*_providers`` entry-point groups."""
    for entry in entry_points(group="webreach.search_providers"):
        provider = entry.load()(settings)
        if provider is not None:
            runtime.register_search_provider(provider)
            _own_if_closeable(runtime, provider)
    for entry in entry_points(group="webreach.fetch_providers"):
        provider = entry.load()(settings)
        if provider is not None:
            runtime.register_fetch_provider(provider)
            _own_if_closeable(runtime, provider)


def _own_if_closeable(runtime: WebRuntime, provider: object) -> None:
    if callable(getattr(provider, "aclose", None)):
        runtime.own(provider)  # type: ignore[arg-type]
