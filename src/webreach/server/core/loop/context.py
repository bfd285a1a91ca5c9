"""What the loop needs from the running server."""

from __future__ import annotations

from dataclasses import dataclass

from ....seam import WebRuntime
from ....settings.server import ServerSettings
from ....tools import ToolOptions
from ..review.reviewers import Reviewer
from ..state.page_cipher import PageCipher
from ..state.store import ResponseStore
from ..upstream.client import Upstream
from ..web_tools.base import ToolFactory
from ..web_tools.registry import BUILT_IN_TOOLS

__all__ = ["ServerContext"]


@dataclass(frozen=True, slots=True)
class ServerContext:
    upstream: Upstream
    runtime: WebRuntime
    options: ToolOptions
    cipher: PageCipher
    settings: ServerSettings
    """The server's settings, whole, as ``create_app`` received them."""
    store: ResponseStore | None = None
    """Where responses and read pages are kept between requests; None keeps nothing."""
    reviewer: Reviewer | None = None
    """Who reviews under ``safety_check``; None is the upstream model."""
    tools: tuple[ToolFactory, ...] = BUILT_IN_TOOLS
    """The server's own web tools, in the order their calls are planned and announced."""
