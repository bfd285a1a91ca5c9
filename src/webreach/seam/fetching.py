"""What the runtime does around a fetch provider's call: robots.txt, the cache keys of a
redirect rule, a caller's ``max_age``, and bot walls kept out of results and the cache."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from .bot_walls import check_bot_wall
from .cache import GuardedCache, decode_fetch_entry
from .errors import WebError, WebErrorCode
from .protocols import FetchProvider
from .registry import scoped_cache_key
from .robots import RobotsRules, robots_token
from .types import FetchRequest, FetchResult, HtmlBody, PdfBody, TextBody

__all__ = ["FetchKeys", "FetchPolicy", "RobotsSetting", "checked_page", "fetch_keys", "store_key"]

RobotsSetting = Literal["obey", "ignore"] | None
"""``obey``: every fetch obeys robots.txt; ``ignore``: none does; None: the request decides."""


class _RobotsNotCached(Exception):
    """A cache-only fetch met a robots.txt it would have to fetch: not a ``WebError``, so the
    rules reader neither reads it as "no rules" nor keeps that."""


@dataclass(frozen=True, slots=True)
class FetchKeys:
    """``plain``: a page reached under the same-site rule (or not redirected at all), good
    for any request of its URL; ``across``: a page reached by following other origins, read
    only by requests that follow them too, so ``web_fetch`` never gets a page it would refuse."""

    plain: str
    across: str | None


def fetch_keys(provider: FetchProvider, request: FetchRequest) -> FetchKeys:
    plain = scoped_cache_key("fetch", provider, request.url)
    if request.redirects == "same_site":
        return FetchKeys(plain, None)
    return FetchKeys(plain, scoped_cache_key("fetch", provider, request.url, "cross_origin"))


def store_key(keys: FetchKeys, request: FetchRequest, result: FetchResult) -> str:
    if keys.across is None or _same_page(request.url, result.url):
        return keys.plain
    return keys.across


def _same_page(asked: str, final: str) -> bool:
    """Whether ``final`` is ``asked`` itself, as a fetcher spells it back (an empty path is
    ``/``, the scheme and host lower-cased): the page was not redirected."""
    a, b = urlsplit(asked), urlsplit(final)
    return (a.scheme.lower(), a.netloc.lower(), a.path or "/", a.query) == (
        b.scheme.lower(),
        b.netloc.lower(),
        b.path or "/",
        b.query,
    )


def checked_page(result: FetchResult, provider: str) -> FetchResult:
    """``result``, unless it is a bot wall: then the ``WEB_BOT_CHALLENGE`` failure, whichever
    provider drew it (a rendered page has no headers left; its status and body still tell)."""
    match result.body:
        case HtmlBody(content=text) | TextBody(content=text):
            check_bot_wall(result.url, result.status_code, {}, text, provider)
        case PdfBody():
            pass
    return result


class FetchPolicy:
    """The runtime's robots.txt rules and its reading of cached pages."""

    def __init__(self, robots: RobotsSetting, user_agent: str, ttl: float) -> None:
        self.robots = robots
        self._rules = RobotsRules(robots_token(user_agent), ttl)

    def obeys(self, request: FetchRequest) -> bool:
        if self.robots is None:
            return request.obey_robots
        return self.robots == "obey"

    async def check_robots(
        self, url: str, provider: FetchProvider, cache: GuardedCache | None, *, live: bool = True
    ) -> None:
        async def load(where: str) -> bytes | None:
            if cache is None:
                return None
            return await cache.get(scoped_cache_key("robots", provider, where))

        async def keep(where: str, value: bytes) -> None:
            if cache is not None and cache.active:
                await cache.set(scoped_cache_key("robots", provider, where), value)

        async def fetch(request: FetchRequest) -> FetchResult:
            if not live:
                raise _RobotsNotCached
            return checked_page(await provider.fetch(request), provider.id)

        try:
            await self._rules.check(url, fetch, load, keep)
        except _RobotsNotCached:
            raise WebError(
                WebErrorCode.WEB_NOT_CACHED,
                f"no cached robots.txt for {urlsplit(url).netloc}, and it may not be fetched",
                provider=provider.id,
            ) from None

    @staticmethod
    async def cached(
        keys: FetchKeys, request: FetchRequest, cache: GuardedCache | None
    ) -> FetchResult | None:
        """A cached page for ``request``: never with ``max_age`` 0, never one fetched longer
        ago than ``max_age`` seconds (or of unknown age while one is given)."""
        if cache is None or request.max_age == 0:
            return None
        for key in (keys.plain, keys.across):
            if key is None:
                continue
            raw = await cache.get(key)
            if raw is None:
                continue
            try:
                result, fetched_at = decode_fetch_entry(raw)
            except (ValueError, KeyError, TypeError):
                continue
            if request.max_age is not None and (
                fetched_at is None or time.time() - fetched_at > request.max_age
            ):
                continue
            return result
        return None
