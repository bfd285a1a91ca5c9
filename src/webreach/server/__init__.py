"""The API server: Chat Completions, Responses and Messages with server-side web tools.

``core/`` is protocol-neutral (the turn, the loop, web calls, citations, the upstream,
page encryption); ``chat/``, ``responses/`` and ``messages/`` each parse their requests into a turn
and render the loop's events back. Imports tools and seam only, never a provider.

The server's settings are declared beneath it, in :mod:`webreach.settings.server`, and named
here too; ``create_app`` is loaded on first use, so reading them needs none of the server's extra
(Starlette, the OpenAI SDK) installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..settings.server import ServerSettings

if TYPE_CHECKING:
    from .app import create_app

__all__ = ["ServerSettings", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
