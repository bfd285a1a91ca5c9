"""The API server: Chat Completions, Responses and Messages with server-side web tools.

``core/`` is protocol-neutral (the turn, the loop, web calls, citations, the upstream,
sealing); ``chat/``, ``responses/`` and ``messages/`` each parse their requests into a turn
and render the loop's events back. Imports tools and seam only, never a provider.
"""

from .app import create_app
from .config import ServerConfig

__all__ = ["ServerConfig", "create_app"]
