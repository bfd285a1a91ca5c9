"""Scripted search, fetch and image search providers for your tests, as ``httpx`` ships
``MockTransport``.

They implement :class:`~webreach.seam.SearchProvider`, :class:`~webreach.seam.FetchProvider`
and :class:`~webreach.seam.ImageSearchProvider` in memory: no network, no keys, no settings.
Register them on a :class:`~webreach.seam.WebRuntime` and everything above the seam (the tools,
:class:`~webreach.tools.WebToolkit`, your agent loop) runs for real, while the providers record
what they were asked::

    from webreach import FetchResult, HtmlBody, SearchResult, WebRuntime, web_search_tool
    from webreach.testing import ScriptedFetch, ScriptedSearch, sources

    async def test_my_agent_searches() -> None:
        search = ScriptedSearch(answers={"python 3.13": SearchResult(sources("https://a.example/"))})
        fetch = ScriptedFetch(pages={"https://a.example/": FetchResult(
            "https://a.example/", 200, HtmlBody("<h1>What is new</h1>"))})
        async with WebRuntime() as runtime:
            runtime.register_search_provider(search)
            runtime.register_fetch_provider(fetch)
            result = await web_search_tool(runtime).execute({"queries": ["python 3.13"]})
        assert "https://a.example/" in result.text
        assert [request.query for request in search.calls] == ["python 3.13"]

This module imports only :mod:`webreach.seam`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .seam import (
    FetchRequest,
    FetchResult,
    ImageBytes,
    ImageInput,
    ImageSearchRequest,
    ImageSearchResult,
    ImageUrl,
    SearchRequest,
    SearchResult,
    SearchSource,
    TextBody,
    WebError,
    WebErrorCode,
)

__all__ = ["ScriptedFetch", "ScriptedImageSearch", "ScriptedSearch", "sources"]


def sources(*urls: str) -> tuple[SearchSource, ...]:
    """One :class:`~webreach.seam.SearchSource` per URL, titled ``"title of <url>"``.

    ``SearchResult(sources("https://a.example/", "https://b.example/"))`` is a two-source result.
    """
    return tuple(SearchSource(url=url, title=f"title of {url}") for url in urls)


@dataclass
class ScriptedSearch:
    """A search provider that answers each query from ``answers``, or from ``behaviour``.

    - ``answers`` maps a query to its :class:`~webreach.seam.SearchResult`; a query it does not
      name gets an empty result (no sources).
    - ``behaviour``, when given, is awaited instead, with the request: raise a
      :class:`~webreach.seam.WebError` from it to script a failure, or sleep to script a slow
      provider (cancellation is recorded, then propagated).
    - ``is_available=False`` makes :meth:`available` false, as an unconfigured provider is.

    It records every request in ``calls``, the queries that finished and those cancelled, and
    how many searches ran at once (``in_flight`` now, ``max_in_flight`` at most), so a test can
    check that queries ran concurrently or were cancelled.
    """

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
    """A fetch provider that serves fixed pages by URL, or raises fixed errors.

    ``pages`` maps a URL to the :class:`~webreach.seam.FetchResult` to return, or to the
    :class:`~webreach.seam.WebError` to raise (``WEB_BLOCKED_URL``, ``WEB_REDIRECT_BLOCKED`` …).
    A URL it does not name raises ``WEB_PROVIDER_ERROR``, except a site's ``/robots.txt``,
    which is a 404 (no rules) unless scripted. Every URL asked for is recorded in ``calls``,
    robots.txt apart in ``robots_calls`` (the tools read it before a page a model asked for);
    its id is ``"http"``, the built-in fetcher's, unless given another.
    """

    id: str = "http"
    pages: dict[str, FetchResult | WebError] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    robots_calls: list[str] = field(default_factory=list)
    is_available: bool = True

    def available(self) -> bool:
        return self.is_available

    async def fetch(self, request: FetchRequest) -> FetchResult:
        page = self.pages.get(request.url)
        if urlsplit(request.url).path == "/robots.txt":
            self.robots_calls.append(request.url)
            if page is None:
                return FetchResult(request.url, 404, TextBody("not found"))
        else:
            self.calls.append(request.url)
        if page is None:
            raise WebError(
                WebErrorCode.WEB_PROVIDER_ERROR,
                f"{self.id}: no scripted page for {request.url}",
                provider=self.id,
            )
        if isinstance(page, WebError):
            raise page
        return page


@dataclass
class ScriptedImageSearch:
    """An image search provider that answers from ``answers``, or from ``behaviour``.

    - ``answers`` maps an image to its :class:`~webreach.seam.ImageSearchResult` (or to the
      :class:`~webreach.seam.WebError` to raise): a key is an image URL (a ``str``) or an
      :class:`~webreach.seam.ImageUrl` / :class:`~webreach.seam.ImageBytes`. An image it does
      not name gets an empty result (no matches).
    - ``behaviour``, when given, is awaited instead, with the request.
    - ``accepts_bytes=False`` makes it refuse an image given by bytes with
      ``WEB_UNSUPPORTED_CONTENT_TYPE``, as a service that takes URLs only does.
    - ``is_available=False`` makes :meth:`available` false, as an unconfigured provider is.

    Every request is recorded in ``calls``; the requests cancelled in ``cancelled``.
    """

    id: str = "scripted"
    is_available: bool = True
    accepts_bytes: bool = True
    answers: dict[str | ImageInput, ImageSearchResult | WebError] = field(default_factory=dict)
    behaviour: Callable[[ImageSearchRequest], Awaitable[ImageSearchResult]] | None = None
    calls: list[ImageSearchRequest] = field(default_factory=list)
    cancelled: list[ImageSearchRequest] = field(default_factory=list)

    def available(self) -> bool:
        return self.is_available

    async def image_search(self, request: ImageSearchRequest) -> ImageSearchResult:
        self.calls.append(request)
        image = request.image
        if isinstance(image, ImageBytes) and not self.accepts_bytes:
            raise WebError(
                WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE,
                f"{self.id}: takes an image URL only, not bytes",
                provider=self.id,
            )
        try:
            if self.behaviour is not None:
                return await self.behaviour(request)
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            self.cancelled.append(request)
            raise
        answer = self.answers.get(image)
        if answer is None and isinstance(image, ImageUrl):
            answer = self.answers.get(image.url)
        if isinstance(answer, WebError):
            raise answer
        return answer if answer is not None else ImageSearchResult(matches=())
