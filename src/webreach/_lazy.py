"""A package's public names, each loaded from its submodule on first use (PEP 562).

A command imports only what it runs: ``from webreach.tools import web_fetch_tool`` loads the
fetch tool, not the search tool and its ranking. Type checkers see the package's real imports
under ``TYPE_CHECKING``; at run time the package hands its table of homes to :func:`lazy_names`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, homes: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's ``__getattr__`` and ``__dir__``: a name in ``homes`` is imported from
    ``package.<home>`` once and kept in ``namespace`` (the package's globals)."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
