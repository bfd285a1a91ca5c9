"""``webreach config``: every setting's effective value and where it came from, the providers,
and which one each capability would use. Secrets show only whether they are set."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .app import command
from .common import check_providers, print_json, startup

if TYPE_CHECKING:
    from ..config_sources import Setting, SettingsFile
    from ..settings import Settings
    from .report import Capability

SERVERS_CACHE = "memory"
"""What ``serve`` and ``mcp`` cache in when ``WEBREACH_CACHE`` is unset (``cli/servers.py``)."""


@command("config", short_help="Show the settings, where each came from, and the providers.")
def show_config(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print it as JSON, for programs.")
    ] = False,
) -> None:
    """Show every setting's effective value and its source (environment, settings file or
    default), the providers, and which ones search and fetch would use, in order (for
    ``WEBREACH_SEARCH_PROVIDER=auto`` the available providers it resolves to now, excluded
    ids left out).

    Secrets show only whether they are set. An invalid setting stops it as it stops every
    command (exit 2), naming the variable or file key.
    """
    from ..config import all_settings
    from ..config_sources import read_settings_file

    settings = startup(as_json)
    found = check_providers(settings, need=None, as_json=as_json)
    file = read_settings_file()
    owners: dict[type[Any], Any] = {type(settings): settings}
    rows = [_row(setting, owners, file) for setting in all_settings()]
    cache = _cache(settings, rows)
    if as_json:
        data = {**_as_json(file, rows, found), "cache": cache}
        print_json(data)
        return
    lines = _as_text(file, rows, found)
    lines.insert(1, _cache_line(cache))
    print("\n".join(lines))


def _cache(settings: Settings, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Where each command caches: the commands in a SQLite file and the servers in memory
    when ``WEBREACH_CACHE`` is unset, else the store it names (None: no cache)."""
    from ..cache import default_sqlite_url

    row = next(r for r in rows if r["variable"] == "WEBREACH_CACHE")
    if settings.cache_ttl <= 0:
        commands = servers = None
        why = "WEBREACH_CACHE_TTL is 0"
    elif settings.cache == "none":
        commands = servers = None
        why = "WEBREACH_CACHE is none"
    elif settings.cache:
        commands = servers = row["value"]
        why = None
    else:
        commands, servers, why = default_sqlite_url(), SERVERS_CACHE, None
    return {"commands": commands, "servers": servers, "source": row["source"], "off": why}


def _cache_line(cache: dict[str, Any]) -> str:
    if cache["off"] is not None:
        return f"Cache: off ({cache['off']})"
    if cache["commands"] == cache["servers"]:
        return f"Cache: {cache['commands']} (WEBREACH_CACHE, {cache['source']})"
    return (
        f"Cache: commands: {cache['commands']}; serve/mcp: {cache['servers']} "
        "(WEBREACH_CACHE is not set)"
    )


def _row(setting: Setting, owners: dict[type[Any], Any], file: SettingsFile) -> dict[str, Any]:
    """One setting as shown; ``owners`` holds each settings class read once."""
    if setting.owner not in owners:
        owners[setting.owner] = setting.owner()
    value = getattr(owners[setting.owner], setting.field)
    if setting.variable == "WEBREACH_CACHE" and isinstance(value, str):
        from ..cache.urls import shown_store_url

        value = shown_store_url(value)  # a Redis URL's password
    return {
        "variable": setting.variable,
        "key": setting.key,
        "provider": setting.provider,
        "secret": setting.secret,
        "set": value is not None,
        "value": None if setting.secret else value,
        "source": setting.source(file, os.environ),
    }


def _shown(row: dict[str, Any]) -> str:
    if row["secret"]:
        return "set" if row["set"] else "not set"
    value = row["value"]
    if value is None:
        return "(not set)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _file_line(file: SettingsFile) -> str:
    if file.exists:
        how = "named by WEBREACH_CONFIG" if file.named_by_variable else "in the current directory"
        return f"Settings file: {file.path} ({how})"
    where = f"no {file.path.name} in {file.path.parent}"
    return f"Settings file: none ({where}; WEBREACH_CONFIG names one)"


def _as_text(file: SettingsFile, rows: list[dict[str, Any]], found: list[Capability]) -> list[str]:
    lines = [_file_line(file), "", "Capabilities"]
    width = max(len(c.label) for c in found) + 2
    id_width = max((len(p.id) + 9 * p.plugin for c in found for p in c.providers), default=0) + 2
    for capability in found:
        uses = " → ".join(capability.uses())
        if capability.configured:
            row = next(r for r in rows if r["variable"] == capability.variable)
            key = f"{row['key']} in the settings file"
            why = "chosen by " + (key if row["source"] == "file" else capability.variable)
            if row["source"] == "default":
                why = f"the default of {capability.variable}"
            if capability.auto:
                why = f"every available provider in order, {why}"
        else:
            why = "automatic: the only available provider" if uses else ""
        if capability.exclude and uses:
            why += f"; excluded: {', '.join(capability.exclude)}"
        problem = capability.problem()
        detail = f"{uses:<{id_width - 2}}  {why}" if uses else f"none: {problem}"
        lines.append(f"  {capability.label:<{width}}{detail}".rstrip())
    lines += ["", "Providers"]
    for capability in found:
        for index, state in enumerate(capability.providers):
            label = capability.label if index == 0 else ""
            if state.available and state.shared:
                status = "available when named or in auto (its key is shared with other programs)"
            elif state.available:
                status = "available"
            elif state.reason:
                status = f"not available: {state.reason}"
            elif state.needs:
                status = f"needs {' or '.join(state.needs)}"
            else:
                status = "not available"
            plugin = " (plugin)" if state.plugin else ""
            lines.append(f"  {label:<{width}}{state.id + plugin:<{id_width}}{status}")
    name_width = max(len(row["variable"]) for row in rows) + 2
    value_width = max(min(len(_shown(row)), 40) for row in rows) + 2
    lines += ["", f"{'Settings':<{name_width + 2}}{'value':<{value_width}}source"]
    for index, row in enumerate(rows):
        if index and row["provider"] != rows[index - 1]["provider"]:
            lines.append("")  # each provider's settings apart from the shared ones
        lines.append(
            f"  {row['variable']:<{name_width}}{_shown(row):<{value_width}}{row['source']}"
        )
    return lines


def _as_json(
    file: SettingsFile, rows: list[dict[str, Any]], found: list[Capability]
) -> dict[str, Any]:
    return {
        "file": {
            "path": str(file.path),
            "exists": file.exists,
            "named_by": "WEBREACH_CONFIG" if file.named_by_variable else None,
        },
        "capabilities": {
            c.kind: {
                "variable": c.variable,
                "configured": list(c.configured),
                "exclude": list(c.exclude),
                "uses": list(c.uses()),
                "problem": c.problem(),
            }
            for c in found
        },
        "providers": {
            c.kind: [
                {
                    "id": s.id,
                    "available": s.available,
                    "needs": list(s.needs),
                    "reason": s.reason,
                    "plugin": s.plugin,
                    "shared_credential": s.shared,
                }
                for s in c.providers
            ]
            for c in found
        },
        "settings": rows,
    }
