"""robots.txt for the fetches a model asks for (the official MCP fetch server obeys it too,
but refuses a page whose robots.txt answers 401/403 or cannot be read; here that allows).

The file is fetched through the same provider (so its guard, allow list and pinning), at most
:data:`ROBOTS_MAX_CHARS` of it read and within :data:`ROBOTS_TIMEOUT` seconds; one that is
missing, unreadable, not 2xx or late allows everything. It is kept per origin for the cache's
TTL, in the runtime's cache store (so replicas share it), and its parsed rules for that TTL or
:data:`ROBOTS_KEPT` seconds, whichever is longer, in the process: as every crawler keeps it (RFC
9309 allows a day), so that with the cache off a site is not asked for it before every page.

Parsing is Protego's (Scrapy's parser): RFC 9309's longest match with ``Allow`` winning ties,
``*`` and ``$`` patterns, and merged groups, which ``urllib.robotparser`` gets wrong (it takes
the first matching line and reads wildcards literally).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from .errors import WebError, WebErrorCode
from .types import FetchRequest, FetchResult

if TYPE_CHECKING:
    from protego import Protego

__all__ = ["ROBOTS_KEPT", "ROBOTS_MAX_CHARS", "ROBOTS_TIMEOUT", "RobotsRules", "robots_token"]

ROBOTS_MAX_CHARS = 512_000
"""Characters of a robots.txt read (RFC 9309 asks parsers to read at least 500 KiB)."""
ROBOTS_TIMEOUT = 5.0
"""Seconds a robots.txt may take; past it the site counts as having none."""
ROBOTS_KEPT = 60.0
"""Seconds a process keeps an origin's parsed rules at least, whatever the cache's TTL."""
_PARSED = 1024
"""Origins whose parsed rules one process keeps."""
V = TypeVar("V")
_IN_THREAD_CHARS = 20_000
"""A file this long is parsed and matched in a worker thread."""
_DISALLOW = re.compile(r"^\s*disallow\s*:\s*(\S+)", re.IGNORECASE | re.MULTILINE)
_NAMED_CANDIDATES = 2_000
"""``Disallow`` lines tried when naming the rule that refused a URL."""
_NO_RULES = b"\x00"
"""What the cache keeps for an origin whose robots.txt allows everything (missing, broken)."""

Fetcher = Callable[[FetchRequest], Awaitable[FetchResult]]
CacheRead = Callable[[str], Awaitable[bytes | None]]
CacheWrite = Callable[[str, bytes], Awaitable[None]]


def robots_token(user_agent: str) -> str:
    """The product token robots.txt groups are matched against: ``webreach`` of
    ``webreach/1.4``, ``AcmeBot`` of ``AcmeBot/2.0 (+https://acme.example/bot)``."""
    first = user_agent.strip().split()[0] if user_agent.strip() else "webreach"
    return first.split("/")[0] or "webreach"


def robots_url(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return f"{parts.scheme}://{netloc}/robots.txt"


class RobotsRules:
    """Whether a URL may be fetched for a model, by its site's robots.txt."""

    def __init__(self, token: str, ttl: float, *, kept: float = ROBOTS_KEPT) -> None:
        self.token = token
        self._kept = max(ttl, kept)
        self._parsed: OrderedDict[str, tuple[float, Protego | None, str]] = OrderedDict()
        self._reading: dict[str, _SharedRead] = {}
        """The read in progress per origin: concurrent pages of one site (a search's passages)
        share the first read of its robots.txt instead of each reading it, even with nothing
        kept."""

    async def check(self, url: str, fetch: Fetcher, load: CacheRead, keep: CacheWrite) -> None:
        """Raise ``WEB_ROBOTS_DISALLOWED`` naming robots.txt and the rule when ``url`` is
        disallowed. ``fetch`` reads robots.txt through the provider; ``load`` and ``keep`` read
        and write the runtime's cache by the robots.txt URL."""
        where = robots_url(url)
        if where is None or urlsplit(url).path == "/robots.txt":
            return
        rules, text = await self._rules(where, lambda: self._read_rules(where, fetch, load, keep))
        if rules is None:
            return
        if len(text) >= _IN_THREAD_CHARS:
            allowed = await asyncio.to_thread(rules.can_fetch, url, self.token)
        else:
            allowed = rules.can_fetch(url, self.token)
        if allowed:
            return
        rule = await asyncio.to_thread(_matching_rule, text, url, self.token)
        named = f"the rule `Disallow: {rule}`" if rule else "its rules"
        raise WebError(
            WebErrorCode.WEB_ROBOTS_DISALLOWED,
            f"{where} disallows {url} for {self.token} ({named}); webreach obeys robots.txt "
            "for the pages a model asks for",
        )

    async def _rules(
        self, where: str, read_rules: Callable[[], Awaitable[tuple[Protego | None, str]]]
    ) -> tuple[Protego | None, str]:
        """The rules parsed already, or the read of them in progress, or ``read_rules()``
        started for every page of the origin to share."""
        known = self._known(where)
        if known is not None:
            return known
        shared = self._reading.get(where)
        if shared is None:
            read = asyncio.ensure_future(read_rules())
            shared = self._reading[where] = _SharedRead(read)
            read.add_done_callback(lambda _: self._forget(where, shared))
        return await shared.wait()

    def _forget(self, where: str, shared: _SharedRead) -> None:
        if self._reading.get(where) is shared:
            del self._reading[where]

    def _known(self, where: str) -> tuple[Protego | None, str] | None:
        known = self._parsed.get(where)
        if known is None or known[0] <= time.monotonic():
            return None
        self._parsed.move_to_end(where)
        return known[1], known[2]

    async def _read_rules(
        self, where: str, fetch: Fetcher, load: CacheRead, keep: CacheWrite
    ) -> tuple[Protego | None, str]:
        raw = await load(where)
        if raw is None:
            text = await _read(where, fetch)
            await keep(where, text.encode() if text else _NO_RULES)
        else:
            text = "" if raw == _NO_RULES else raw.decode(errors="replace")
        rules = await _parse(text) if text.strip() else None
        if self._kept > 0:
            _recent(self._parsed, where, (time.monotonic() + self._kept, rules, text))
        return rules, text


class _SharedRead:
    """One robots.txt read awaited by every page of its origin that asked while it ran; the
    read stops when the last of them gives up, so none is left running for nobody."""

    def __init__(self, read: asyncio.Future[tuple[Protego | None, str]]) -> None:
        self._read = read
        self._waiting = 0

    async def wait(self) -> tuple[Protego | None, str]:
        self._waiting += 1
        try:
            return await asyncio.shield(self._read)
        finally:
            self._waiting -= 1
            if self._waiting == 0 and not self._read.done():
                self._read.cancel()


def _recent(table: OrderedDict[str, V], key: str, value: V) -> V:
    """``value`` kept under ``key`` as the newest entry, the oldest dropped past ``_PARSED``."""
    table[key] = value
    table.move_to_end(key)
    while len(table) > _PARSED:
        table.popitem(last=False)
    return value


async def _read(where: str, fetch: Fetcher) -> str:
    """The robots.txt text, or "" when there is none to obey (missing, an error status, a
    failure, late): RFC 9309 reads a 4xx as no rules, and a broken one allows as well."""
    try:
        async with asyncio.timeout(ROBOTS_TIMEOUT):
            result = await fetch(FetchRequest(where, redirects="cross_origin"))
    except (WebError, TimeoutError):
        return ""
    if not 200 <= result.status_code < 300:
        return ""
    return result.body.content[:ROBOTS_MAX_CHARS]


async def _parse(text: str) -> Protego | None:
    from protego import Protego

    if len(text) >= _IN_THREAD_CHARS:
        return await asyncio.to_thread(Protego.parse, text)
    return Protego.parse(text)


def _matching_rule(text: str, url: str, token: str) -> str | None:
    """The longest ``Disallow`` pattern of the file that refuses ``url`` on its own: the rule to
    name in the refusal (the parser decides; this only finds words for its answer)."""
    from protego import Protego

    best: str | None = None
    candidates = list(dict.fromkeys(_DISALLOW.findall(text[:ROBOTS_MAX_CHARS])))
    for pattern in candidates[:_NAMED_CANDIDATES]:
        if best is not None and len(pattern) <= len(best):
            continue
        alone = Protego.parse(f"User-agent: *\nDisallow: {pattern}\n")
        if not alone.can_fetch(url, token):
            best = pattern
    return best
