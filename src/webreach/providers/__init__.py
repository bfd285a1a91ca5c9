"""The built-in providers, one package per capability, and how they are found.

A provider is found, not listed: every public module of ``webreach.providers.search`` (or
``.fetch``, ``.image_search``) that defines a ``PROVIDER`` (a :class:`~.spec.ProviderSpec`),
then what the installed plugins' entry points name. A capability's modules are imported when it
is first asked for, and only its own: ``webreach fetch`` never imports a search provider.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .spec import ProviderSpec

__all__ = [
    "ENTRY_POINT_GROUPS",
    "PACKAGES",
    "ProviderKind",
    "discover_providers",
    "provider_sources",
    "specs_reading",
]

ProviderKind = Literal["search", "fetch", "image_search"]
PACKAGES: Mapping[ProviderKind, str] = {
    "search": "webreach.providers.search",
    "fetch": "webreach.providers.fetch",
    "image_search": "webreach.providers.image_search",
}
ENTRY_POINT_GROUPS: Mapping[ProviderKind, str] = {
    "search": "webreach.search_providers",
    "fetch": "webreach.fetch_providers",
    "image_search": "webreach.image_search_providers",
}


def discover_providers(kind: ProviderKind) -> list[ProviderSpec[Any, Any]]:
    """The built-in providers of ``kind``: the ``PROVIDER`` of every public module of
    ``webreach.providers.search`` (or ``.fetch``, ``.image_search``), in module-name order.

    A new module with a ``PROVIDER`` is found with no other change. This imports the provider
    modules of ``kind``, so it runs when a command needs them, never when the command line
    starts.
    """
    return _specs(kind, None)


def specs_reading(kind: ProviderKind, names: Iterable[str]) -> list[ProviderSpec[Any, Any]]:
    """The providers of ``kind`` whose settings may be set by one of ``names`` (variables or
    file keys, any case): built-in modules by their package's ``SETTING_PREFIXES`` (one it does
    not list always counts), and every plugin. Only those modules are imported."""
    upper = [name.upper() for name in names]
    specs = _specs(kind, upper)
    from .spec import ProviderSpec

    plugins = [entry.load() for entry in _entry_points(kind)]
    return specs + [plugin for plugin in plugins if isinstance(plugin, ProviderSpec)]


def _specs(kind: ProviderKind, names: list[str] | None) -> list[ProviderSpec[Any, Any]]:
    """The ``PROVIDER`` of each public module of ``kind``; with ``names``, of those whose
    settings one of them may set."""
    from .spec import ProviderSpec

    package = importlib.import_module(PACKAGES[kind])
    prefixes: Mapping[str, tuple[str, ...]] = getattr(package, "SETTING_PREFIXES", {})
    specs: list[ProviderSpec[Any, Any]] = []
    for module in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if module.name.startswith("_"):
            continue
        begins = prefixes.get(module.name)
        if names is not None and begins is not None and not any(map(_starts(begins), names)):
            continue
        spec = getattr(
            importlib.import_module(f"{package.__name__}.{module.name}"), "PROVIDER", None
        )
        if isinstance(spec, ProviderSpec):
            specs.append(spec)
    return specs


def _starts(prefixes: tuple[str, ...]) -> Any:
    return lambda name: name.startswith(prefixes)


_found: dict[tuple[object, ...], list[tuple[Any, bool]]] = {}
"""What :func:`provider_sources` found, by kind and by where it looked."""


def provider_sources(kind: ProviderKind) -> list[tuple[Any, bool]]:
    """The built-in specs of ``kind``, then what the plugins' entry points name (a
    :class:`~.spec.ProviderSpec`, or a callable of the shared settings), each with whether it
    is a plugin. Looked up once for each package path and import path (a test adds either)."""
    package = importlib.import_module(PACKAGES[kind])
    where = (kind, tuple(package.__path__), tuple(sys.path))
    found = _found.get(where)
    if found is None:
        found = [(spec, False) for spec in discover_providers(kind)]
        found += [(entry.load(), True) for entry in _entry_points(kind)]
        _found[where] = found
    return list(found)


_installed: dict[tuple[str, ...], Any] = {}
"""Every installed entry point, by import path (a test adds a plugin's folder to it)."""


def _entry_points(kind: ProviderKind) -> Any:
    """The plugins' entry points of ``kind``, from one scan of the installed distributions for
    all three groups: each scan reads every distribution's metadata, which in a large
    environment costs a command's start-up more than its own imports."""
    from importlib.metadata import entry_points

    where = tuple(sys.path)
    installed = _installed.get(where)
    if installed is None:
        installed = _installed[where] = entry_points()
    return installed.select(group=ENTRY_POINT_GROUPS[kind])
