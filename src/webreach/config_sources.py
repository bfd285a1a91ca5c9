"""Where each setting comes from (the environment, ``webreach.toml`` or its default), and errors
that point at the one a person wrote.

pydantic-settings reads the values; this module looks at the same sources again, so that an
invalid value is reported under the variable or file key that holds it, with an example of a
valid one, and so that ``webreach config`` can show where every effective value came from. It
only describes settings classes it is given; :mod:`webreach.config` knows which ones exist.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_settings import BaseSettings

from .seam import WebreachError
from .settings_base import (
    FILE_SUFFIX,
    SECRET_FILE_ERROR,
    config_file,
    field_names,
    mentions_secret,
    secret_file_path,
    toml_secret_path,
)

__all__ = [
    "ConfigError",
    "Setting",
    "SettingsFile",
    "Source",
    "accepted_variables",
    "describe",
    "read_settings_file",
    "unknown_keys",
    "unknown_variables",
]

Source = str
"""``environment``, ``file`` (the settings file), ``default``, ``command line``, or
``file /run/secrets/key`` for a secret read from the file a ``*_FILE`` setting names."""


class ConfigError(WebreachError, ValueError):
    """An invalid setting. Each of ``problems`` names the variable or file key that holds the
    value, says what is wrong with it and, where it helps, shows a valid value."""

    def __init__(self, problems: str | Sequence[str]) -> None:
        self.problems = (problems,) if isinstance(problems, str) else tuple(problems)
        super().__init__("; ".join(self.problems))


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting: its variable, its key in the settings file, and the class that reads it."""

    variable: str
    key: str
    field: str
    owner: type[BaseSettings]
    secret: bool
    provider: str | None = None
    """The provider that reads it; None for the shared settings."""

    @classmethod
    def all_of(cls, owner: type[BaseSettings], provider: str | None = None) -> list[Setting]:
        settings = []
        for name, info in owner.model_fields.items():
            variable, key = field_names(owner, name)
            secret = mentions_secret(info.annotation)
            settings.append(cls(variable, key, name, owner, secret, provider))
        return settings

    @property
    def file_variable(self) -> str | None:
        """The variable that may name a file holding this secret (``<NAME>_FILE``)."""
        return self.variable + FILE_SUFFIX if self.secret else None

    @property
    def file_key(self) -> str | None:
        """The settings file's key that may name a file holding this secret."""
        return self.key + FILE_SUFFIX.lower() if self.secret else None

    def variables(self) -> tuple[str, ...]:
        """Every variable that sets it: its own, and ``<NAME>_FILE`` for a secret."""
        file_variable = self.file_variable
        return (self.variable,) if file_variable is None else (self.variable, file_variable)

    def secret_file(self, file: SettingsFile, environ: Mapping[str, str]) -> str | None:
        """The file the secret is read from, when one is named (the variable first, then the
        settings file), as it is read."""
        if not self.secret:
            return None
        if path := secret_file_path(self.variable, environ):
            return path
        if self.key in file.data:
            return None
        found = toml_secret_path(self.key, file.data, file.path)
        return str(found) if found is not None else None

    def environment_value(self, environ: Mapping[str, str]) -> str | None:
        """The value the environment gives it (names are case-insensitive, as pydantic reads
        them); an empty one counts as unset where the class ignores empty variables."""
        for name, value in environ.items():
            if name.upper() == self.variable:
                if not value and self.owner.model_config.get("env_ignore_empty"):
                    return None
                return value
        return None

    def source(
        self, file: SettingsFile, environ: Mapping[str, str], overrides: Iterable[str] = ()
    ) -> Source:
        """Which source set the effective value, in the order the settings classes read them."""
        if self.field in overrides:
            return "command line"
        if self.environment_value(environ):
            return "environment"
        if path := self.secret_file(file, environ):
            return f"file {path}"
        if self.environment_value(environ) is not None:
            return "environment"
        if self.key in file.data:
            return "file"
        return "default"

    def example(self) -> str | None:
        """A valid value, as a person would write it in the environment."""
        info = self.owner.model_fields[self.field]
        if info.examples:
            return str(info.examples[0])
        default = info.default
        if self.secret or default is None or not isinstance(default, str | int | float | bool):
            return None
        if isinstance(default, bool):
            return "false" if default else "true"
        return f"{default:g}" if isinstance(default, float) else str(default)

    def shows_value(self) -> bool:
        """Whether a bad value may be echoed back: never a key, nor a URL that could hold one."""
        lowered = self.field.lower()
        return not self.secret and not lowered.endswith(("_url", "_key", "_keys", "proxy", "cache"))


@dataclass(frozen=True, slots=True)
class SettingsFile:
    """The settings file as read: ``WEBREACH_CONFIG``, else ``./webreach.toml`` when it exists."""

    path: Path
    named_by_variable: bool
    exists: bool
    data: Mapping[str, Any] = field(default_factory=dict)
    text: str = ""

    def where(self, key: str) -> str:
        """``key in /path/webreach.toml (line 3)``: where a person finds the key."""
        line = self.line_of(key)
        return f"{key} in {self.path}" + (f" (line {line})" if line else "")

    def line_of(self, key: str) -> int | None:
        pattern = re.compile(rf"""^\s*["']?{re.escape(key)}["']?\s*=""")
        for number, line in enumerate(self.text.splitlines(), 1):
            if pattern.match(line):
                return number
        return None


_TOML_POSITION = re.compile(r"^(?P<what>.*) \(at line (?P<line>\d+), column (?P<column>\d+)\)$")


def read_settings_file() -> SettingsFile:
    """The settings file, parsed; a missing named file or a syntax error is a
    :class:`ConfigError` naming the file and the line."""
    named = bool(os.environ.get("WEBREACH_CONFIG"))
    path = config_file().absolute()
    if not path.is_file():
        if named:
            raise ConfigError(f"WEBREACH_CONFIG={shlex.quote(str(path))}: no such file")
        return SettingsFile(path, named_by_variable=False, exists=False)
    try:
        text = path.read_bytes().decode("utf-8")
        data = tomllib.loads(text)
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: is not UTF-8 text, which TOML requires") from None
    except tomllib.TOMLDecodeError as error:
        found = _TOML_POSITION.match(str(error))
        if found is None:
            raise ConfigError(f"{path}: not valid TOML ({error})") from None
        raise ConfigError(
            f"{path}, line {found['line']}, column {found['column']}: not valid TOML "
            f"({found['what'][:1].lower()}{found['what'][1:]}); a setting is written "
            'key = value, e.g. fetch_allow = "127.0.0.1"'
        ) from None
    return SettingsFile(path, named, exists=True, data=data, text=text)


def accepted_variables(settings: Iterable[Setting]) -> frozenset[str]:
    """Every variable name webreach reads for ``settings`` (``config.all_settings()``): each
    setting's own, ``<NAME>_FILE`` for each secret, and ``WEBREACH_CONFIG``. Upper case."""
    names = {name for setting in settings for name in setting.variables()}
    return frozenset(names | {"WEBREACH_CONFIG"})


def unknown_keys(file: SettingsFile, settings: Iterable[Setting]) -> list[str]:
    """A problem for each key of the file no settings class reads, with the closest valid key."""
    settings = list(settings)
    known = sorted({setting.key for setting in settings})
    accepted = set(known) | {s.file_key for s in settings if s.file_key}
    problems = []
    for key in file.data:
        if key in accepted:
            continue
        close = difflib.get_close_matches(key.lower(), known, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}?" if close else "`webreach config` lists the settings"
        problems.append(f"{file.where(key)}: unknown key {key!r}; {hint}")
    return problems


_OPTIONS = {
    "WEBREACH_PORT": "the port is an option: webreach serve --port N (or mcp --http --port N)",
    "WEBREACH_HOST": "the address is an option: webreach serve --host ADDRESS",
}
"""Settings people look for in the environment that are command-line options."""


def unknown_variables(environ: Mapping[str, str], settings: Iterable[Setting]) -> list[str]:
    """A problem for each ``WEBREACH_*`` variable that is not a setting, with the closest one:
    most operators configure through the environment, where a typo is otherwise silent."""
    known = accepted_variables(settings)
    candidates = sorted(name for name in known if name.startswith("WEBREACH_"))
    problems = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith("WEBREACH_") or upper in known:
            continue
        # Judged without the prefix every candidate shares, which would make anything close.
        close = difflib.get_close_matches(upper[9:], [c[9:] for c in candidates], n=1, cutoff=0.6)
        hint = (
            f"did you mean WEBREACH_{close[0]}?"
            if close
            else "`webreach config` lists the settings"
        )
        problems.append(f"{name}: not a setting; {_OPTIONS.get(upper, hint)}")
    return problems


def describe(
    error: ValidationError,
    owner: type[BaseSettings],
    file: SettingsFile,
    environ: Mapping[str, str] | None = None,
    overrides: Iterable[str] = (),
    *,
    provider: str | None = None,
) -> list[str]:
    """One problem per invalid value of ``owner``, named after the source that holds it."""
    environ = os.environ if environ is None else environ
    by_name = {s.field: s for s in Setting.all_of(owner, provider)}
    by_name.update({s.key: s for s in by_name.values()})
    overrides = tuple(overrides)
    problems = []
    for item in error.errors(include_url=False):
        name = str(item["loc"][0]) if item["loc"] else ""
        message = str(item["msg"]).removeprefix("Value error, ")
        if item["type"] == SECRET_FILE_ERROR:
            problems.append(message)  # whole already: the variable, the path and why
            continue
        setting = by_name.get(name)
        if setting is None:
            problems.append(f"{name or owner.__name__}: {message}")
            continue
        problems.append(_problem(setting, message, item.get("input"), file, environ, overrides))
    return problems


def _problem(
    setting: Setting,
    message: str,
    value: object,
    file: SettingsFile,
    environ: Mapping[str, str],
    overrides: Sequence[str],
) -> str:
    source = setting.source(file, environ, overrides)
    example = None if "e.g." in message else setting.example()
    if source == "file":
        shown = f" = {_toml(value)}" if setting.shows_value() else ""
        where = file.where(setting.key).replace(f"{setting.key} in", f"{setting.key}{shown} in", 1)
        hint = f" (e.g. {setting.key} = {_toml(_typed(example))})" if example else ""
        return f"{where}: {message}{hint}"
    if source == "command line":
        return f"{setting.variable} (from the command line): {message}"
    shown = f"={shlex.quote(str(value))}" if setting.shows_value() and value is not None else ""
    hint = f" (e.g. {setting.variable}={example})" if example else ""
    return f"{setting.variable}{shown}: {message}{hint}"


def _typed(example: str | None) -> object:
    """An example as its TOML type: numbers and booleans unquoted."""
    if example in ("true", "false"):
        return example == "true"
    try:
        return json.loads(example or "")
    except ValueError:
        return example


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)
