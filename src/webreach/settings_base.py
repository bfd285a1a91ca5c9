"""The base every settings class of webreach shares: where settings are read from.

The environment first, then the TOML file ``WEBREACH_CONFIG`` names (else ``./webreach.toml``).
It imports nothing of webreach, so the shared settings, the providers' own and the code that
reports where a value came from all build on it without importing each other.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

__all__ = ["FileSettings", "config_file"]


def config_file() -> Path:
    """The TOML file every settings class reads: ``WEBREACH_CONFIG``, else ``./webreach.toml``."""
    return Path(os.environ.get("WEBREACH_CONFIG") or "webreach.toml")


class FileSettings(BaseSettings):
    """Settings read from the arguments given, then the environment, then the settings file.

    Keys no field reads are ignored here: :mod:`webreach.config` reports them once, for every
    settings class together.
    """

    model_config = SettingsConfigDict(extra="ignore", validate_default=True)

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
