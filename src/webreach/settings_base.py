"""The base every settings class of webreach shares: where settings are read from.

The environment first, then the TOML file ``WEBREACH_CONFIG`` names (else ``./webreach.toml``).
Every secret (a ``SecretStr`` field) may instead be read from the file ``<NAME>_FILE`` names,
or ``<key>_file`` in the TOML file, as Docker and Kubernetes mount secrets.
It imports nothing of webreach, so the shared settings, the providers' own and the code that
reports where a value came from all build on it without importing each other.
"""

from __future__ import annotations

import os
import shlex
from abc import abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

from pydantic import AliasChoices, SecretStr, field_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

__all__ = [
    "FILE_SUFFIX",
    "SECRET_FILE_ERROR",
    "FileSettings",
    "SecretFileProblem",
    "SecretFilesFromEnvironment",
    "SecretFilesFromToml",
    "config_file",
    "field_names",
    "mentions_secret",
    "secret_file_path",
    "toml_secret_path",
]

FILE_SUFFIX = "_FILE"
"""``WEBREACH_SIGNING_KEY_FILE`` names the file that holds ``WEBREACH_SIGNING_KEY``."""
SECRET_FILE_ERROR = "secret_file"
"""The validation error type of a secret whose file cannot be used; its message is whole."""
_MAX_SECRET_BYTES = 64 * 1024


def config_file() -> Path:
    """The TOML file every settings class reads: ``WEBREACH_CONFIG``, else ``./webreach.toml``."""
    return Path(os.environ.get("WEBREACH_CONFIG") or "webreach.toml")


def field_names(owner: type[BaseSettings], name: str) -> tuple[str, str]:
    """A field's variable (``WEBREACH_UPSTREAM_API_KEY``) and its key in the settings file."""
    prefix = str(owner.model_config.get("env_prefix") or "")
    alias = owner.model_fields[name].validation_alias
    if isinstance(alias, AliasChoices):
        alias = str(alias.choices[0])
    if isinstance(alias, str):
        return alias.upper(), alias
    return f"{prefix}{name}".upper(), name


def mentions_secret(annotation: Any) -> bool:
    """Whether a field's type is a ``SecretStr`` (alone, optional or annotated)."""
    if annotation is SecretStr:
        return True
    return any(mentions_secret(arg) for arg in get_args(annotation))


def secret_file_path(variable: str, environ: Mapping[str, str]) -> str | None:
    """The path ``<variable>_FILE`` gives, case-insensitively as pydantic reads variables;
    empty counts as unset, as it does in a shell."""
    wanted = variable.upper() + FILE_SUFFIX
    found = next((v for k, v in environ.items() if k.upper() == wanted), None)
    return found or None


class SecretFileProblem:
    """Why a secret could not be read from its file, put in the secret's place so that
    validation reports it under the setting, with every other problem at once."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message

    def __repr__(self) -> str:
        return "SecretFileProblem()"


def _read_secret(path: Path) -> str:
    """The file's text without its one trailing newline; ``ValueError`` says why it cannot be
    used (never what it holds)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_SECRET_BYTES + 1)
    except FileNotFoundError:
        raise ValueError("no such file") from None
    except IsADirectoryError:
        raise ValueError("is a directory, not a file") from None
    except PermissionError:
        raise ValueError("cannot be read (permission denied)") from None
    except OSError as error:
        raise ValueError(f"cannot be read ({error.strerror or type(error).__name__})") from None
    if len(data) > _MAX_SECRET_BYTES:
        raise ValueError(f"is larger than {_MAX_SECRET_BYTES // 1024} KiB, too large for a key")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("is not UTF-8 text") from None
    text = text.removesuffix("\n").removesuffix("\r") if text.endswith("\n") else text
    if not text:
        raise ValueError("is empty")
    return text


def _secret_fields(settings_cls: type[BaseSettings]) -> list[tuple[str, str, str]]:
    """``(field, variable, key)`` of each secret of ``settings_cls``."""
    return [
        (name, *field_names(settings_cls, name))
        for name, info in settings_cls.model_fields.items()
        if mentions_secret(info.annotation)
    ]


def _input_name(settings_cls: type[BaseSettings], name: str) -> str:
    """The name a source gives a field's value under (its alias when it has one)."""
    info: FieldInfo = settings_cls.model_fields[name]
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    return alias if isinstance(alias, str) else name


class _SecretFiles(PydanticBaseSettingsSource):
    """Each secret of the settings class that a file is named for: the file's text, or the
    problem with it in the secret's place."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        environ = {name.upper(): value for name, value in os.environ.items()}
        found: dict[str, Any] = {}
        for name, variable, key in _secret_fields(self.settings_cls):
            secret = self._secret(variable, key, environ)
            if secret is not None:
                found[_input_name(self.settings_cls, name)] = secret
        return found

    @abstractmethod
    def _secret(
        self, variable: str, key: str, environ: Mapping[str, str]
    ) -> str | SecretFileProblem | None:
        """The secret of ``variable`` (``key`` in the settings file), or None when this source
        names no file for it."""


class SecretFilesFromEnvironment(_SecretFiles):
    """Each secret from the file its ``<NAME>_FILE`` variable names. Read before the
    environment itself, so that naming both is an error instead of one silently winning."""

    def _secret(
        self, variable: str, key: str, environ: Mapping[str, str]
    ) -> str | SecretFileProblem | None:
        path = secret_file_path(variable, environ)
        if path is None:
            return None
        if environ.get(variable):
            return SecretFileProblem(
                f"{variable} and {variable}{FILE_SUFFIX} are both set; keep one of them"
            )
        try:
            return _read_secret(Path(path))
        except ValueError as why:
            return SecretFileProblem(f"{variable}{FILE_SUFFIX}={shlex.quote(path)}: {why}")


class SecretFilesFromToml(_SecretFiles):
    """Each secret from the file its ``<key>_file`` key in the settings file names (a relative
    path from the settings file's directory), unless the environment sets it."""

    def __init__(self, settings_cls: type[BaseSettings], data: Mapping[str, Any], path: Path):
        super().__init__(settings_cls)
        self._data = data
        self._path = path

    def _secret(
        self, variable: str, key: str, environ: Mapping[str, str]
    ) -> str | SecretFileProblem | None:
        given = self._data.get(key + FILE_SUFFIX.lower())
        if given is None or environ.get(variable) or secret_file_path(variable, environ):
            return None
        where = f"{key}{FILE_SUFFIX.lower()} in {self._path.absolute()}"
        if key in self._data:
            return SecretFileProblem(f"{key} and {where} are both set; keep one of them")
        if not isinstance(given, str) or not given:
            return SecretFileProblem(
                f'{where}: must be the path of a file, e.g. "/run/secrets/{key}"'
            )
        path = toml_secret_path(key, self._data, self._path)
        assert path is not None
        try:
            return _read_secret(path)
        except ValueError as why:
            return SecretFileProblem(f"{where} ({path}): {why}")


def toml_secret_path(key: str, data: Mapping[str, Any], settings_path: Path) -> Path | None:
    """The file ``<key>_file`` in the settings file names, resolved as it is read."""
    given = data.get(key + FILE_SUFFIX.lower())
    if not isinstance(given, str) or not given:
        return None
    return settings_path.absolute().parent / Path(given).expanduser()


class FileSettings(BaseSettings):
    """Settings read from the arguments given, then the environment, then the settings file;
    each secret may come from a file instead (``<NAME>_FILE``, ``<key>_file``).

    Keys no field reads are ignored here: :mod:`webreach.config` reports them once, for every
    settings class together.
    """

    model_config = SettingsConfigDict(extra="ignore", validate_default=True)

    @field_validator("*", mode="before")
    @classmethod
    def _secret_file_problem(cls, value: object) -> object:
        """A secret whose file could not be used fails here, with its whole message."""
        if isinstance(value, SecretFileProblem):
            raise PydanticCustomError(SECRET_FILE_ERROR, "{problem}", {"problem": value.message})
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
        path = config_file()
        toml = TomlConfigSettingsSource(settings_cls, path)
        return (
            init_settings,
            SecretFilesFromEnvironment(settings_cls),
            env_settings,
            SecretFilesFromToml(settings_cls, toml.toml_data, path),
            toml,
        )
