"""The shared settings of webreach: one typed object read from the environment and
``webreach.toml``, each value checked when read so a typo stops a command before it starts.

Loading them with every provider's own settings, and reporting problems, is :mod:`webreach.config`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from .providers.spec import config_file

if TYPE_CHECKING:
    from .tools import ToolOptions

__all__ = ["ENV_PREFIX", "Settings"]

ENV_PREFIX = "WEBREACH_"
PositiveInt = Annotated[int, Field(gt=0)]


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

    search_provider: str | None = Field(None, examples=["exa,duckduckgo"])
    fetch_provider: str | None = Field(None, examples=["http"])
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
    fetch_allow: str | None = Field(None, examples=["127.0.0.1,localhost:8080,10.0.0.0/8"])
    cache: str | None = Field(None, examples=["sqlite:///tmp/webreach-cache.db"])
    cache_ttl: Annotated[float, Field(ge=0)] = 600.0
    proxy: str | None = Field(None, examples=["http://proxy.example:3128"])

    upstream_base_url: str | None = Field(None, examples=["http://localhost:11434/v1"])
    upstream_api_key: SecretStr | None = None
    upstream_model: str | None = None
    upstream_timeout: Annotated[float, Field(gt=0)] = 600.0
    upstream_connect_timeout: Annotated[float, Field(gt=0)] = 10.0
    upstream_dialect: Literal["openai", "deepseek"] = "openai"
    server_api_keys: SecretStr | None = None
    server_max_body_bytes: PositiveInt = 32 * 1024 * 1024
    store_ttl: Annotated[float, Field(ge=0)] = 3600.0
    store_max_mb: PositiveInt = 256
    max_steps: PositiveInt = 24
    turn_timeout: Annotated[float, Field(gt=0)] = 900.0
    server_max_connections: PositiveInt | None = None
    server_header_timeout: Annotated[float, Field(gt=0)] = 10.0
    server_body_timeout: Annotated[float, Field(gt=0)] = 60.0
    citations: Literal["annotations", "markdown"] = "annotations"
    upstream_system: Literal["anywhere", "first"] = "anywhere"
    upstream_continue: Literal["auto", "prefix", "continue_final_message", "prefill", "off"] = (
        "auto"
    )
    moderation_base_url: str | None = None
    moderation_api_key: SecretStr | None = None
    moderation_model: str = "omni-moderation-latest"
    signing_key: SecretStr | None = None
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_format: Literal["text", "json"] = "text"

    @field_validator("log_level", "log_format", mode="before")
    @classmethod
    def _any_case(cls, value: object) -> object:
        """``INFO`` means ``info``: operators write levels as their other tools do."""
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("fetch_allow")
    @classmethod
    def _allow_list(cls, value: str | None) -> str | None:
        """Checked when read, so a typo stops every command at once instead of leaving a
        destination silently closed (or a URL silently ignored)."""
        from .net.allow import AllowList

        if value is not None:
            AllowList.parse(value)
        return value

    @field_validator("upstream_base_url", "moderation_base_url")
    @classmethod
    def _no_credentials_in_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        """A password in the URL would end up in logs and error texts; keys have their own
        setting. The URL must be http(s), as the SDK that calls it needs."""
        if not value:
            return value
        parts = urlsplit(value)
        key = "WEBREACH_UPSTREAM_API_KEY"
        if info.field_name == "moderation_base_url":
            key = "WEBREACH_MODERATION_API_KEY"
        if "@" in parts.netloc:
            raise ValueError(f"must not contain credentials (user:password@); put the key in {key}")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http(s) URL with a host, e.g. https://api.openai.com/v1")
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
