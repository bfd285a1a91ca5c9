"""The web as a turn sees it when the client turned live access off (``external_web_access:
false`` on OpenAI's web search tool): the cache's results and pages, and nothing fetched.

A query the cache does not hold finds no sources (the model is told why); a page it does not
hold is a failed read naming ``WEB_NOT_CACHED``. Neither reaches a provider.
"""

from __future__ import annotations

from typing import Any, cast

from ....seam import FetchRequest, FetchResult, SearchRequest, SearchResult, WebError, WebRuntime
from ....seam.errors import WebErrorCode
from ....tools import ToolOptions
from ..state.page_cipher import PageCipher
from .base import ToolContext

__all__ = ["NOT_CACHED_NOTE", "CachedOnly", "cached_only"]

NOT_CACHED_NOTE = (
    "Live web search is off for this request (external_web_access is false): only results "
    "already cached can be used, and this query had none."
)
"""What the model reads for a query the cache did not hold."""


class _CachedRuntime:
    """``search`` and ``fetch`` from the cache alone; anything else is the real runtime's."""

    def __init__(self, runtime: WebRuntime) -> None:
        self._runtime = runtime

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)

    async def search(self, request: SearchRequest) -> SearchResult:
        try:
            return await self._runtime.search(request, live=False)
        except WebError as error:
            if error.code != WebErrorCode.WEB_NOT_CACHED:
                raise
            return SearchResult(sources=(), content=NOT_CACHED_NOTE)

    async def fetch(self, request: FetchRequest) -> FetchResult:
        return await self._runtime.fetch(request, live=False)


class CachedOnly:
    """A :class:`ToolContext` whose runtime answers from the cache only."""

    def __init__(self, context: ToolContext) -> None:
        self._context = context
        self._runtime = cast(WebRuntime, _CachedRuntime(context.runtime))

    @property
    def runtime(self) -> WebRuntime:
        return self._runtime

    @property
    def options(self) -> ToolOptions:
        return self._context.options

    @property
    def cipher(self) -> PageCipher:
        return self._context.cipher


def cached_only(context: ToolContext, live: bool) -> ToolContext:
    """``context`` itself when the turn may go to the web, else its cache-only view."""
    return context if live else CachedOnly(context)
