"""Small in-process providers that implement the seam's protocols, for tests and benchmarks."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from webreach.seam import (
    FetchRequest,
    FetchResult,
    SearchRequest,
    SearchResult,
    SearchSource,
    WebError,
)


def sources(*urls: str) -> tuple[SearchSource, ...]:
    return tuple(SearchSource(url=url, title=f"title of {url}") for url in urls)


@dataclass
class ScriptedSearch:
    """Answers each query from ``answers`` (or a callable); records calls and what is in flight."""

    id: str = "scripted"
    is_available: bool = True
    answers: dict[str, SearchResult] = field(default_factory=dict)
    behaviour: Callable[[SearchRequest], Awaitable[SearchResult]] | None = None
    calls: list[SearchRequest] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    cancelled: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)

    def available(self) -> bool:
        return self.is_available

    async def search(self, request: SearchRequest) -> SearchResult:
        self.calls.append(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.behaviour is not None:
                result = await self.behaviour(request)
            else:
                await asyncio.sleep(0)
                result = self.answers.get(request.query, SearchResult(sources=()))
            self.finished.append(request.query)
            return result
        except asyncio.CancelledError:
            self.cancelled.append(request.query)
            raise
        finally:
            self.in_flight -= 1


@dataclass
class ScriptedFetch:
    """Serves fixed pages (or raises fixed errors) by URL; records every URL asked for."""

    id: str = "http"
    pages: dict[str, FetchResult | WebError] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def available(self) -> bool:
        return True

    async def fetch(self, request: FetchRequest) -> FetchResult:
        self.calls.append(request.url)
        page = self.pages[request.url]
        if isinstance(page, WebError):
            raise page
        return page
