"""The runtime: one registry per capability, and the calls that go through them.

Selection itself (configured, bare and ``auto`` choices, fallback lists) lives in
:mod:`.registry`; this module
adds what each capability does around a provider's call: checks, the cache, the deadline,
the http(s) filter, the cut to ``max_results`` and the provider stamp.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Protocol, Self, TypeVar, assert_never

from .cache import (
    CacheStore,
    GuardedCache,
    decode_image_search,
    decode_search,
    encode,
)
from .errors import InvalidValueError, WebError, WebErrorCode
from .fetching import FetchPolicy, RobotsSetting, checked_page, fetch_keys, store_key
from .filters import apply_after, asked_of_provider, native_filters
from .links import web_matches, web_sources
from .pacing import Pace, attempt_within, shared_pace
from .protocols import (
    CacheScoped,
    CallTimeout,
    DocumentReader,
    FetchPrecheck,
    FetchProvider,
    ImageSearchProvider,
    SearchProvider,
    implements,
)
from .registry import FALLBACK_CODES, Disposer, Registry, parse_provider_ids, scoped_cache_key
from .tasks import await_cleanly
from .types import (
    FetchRequest,
    FetchResult,
    ImageBytes,
    ImageInput,
    ImageSearchRequest,
    ImageSearchResult,
    ImageUrl,
    SearchRequest,
    SearchResult,
    check_image,
)

__all__ = ["AsyncCloseable", "Disposer", "WebRuntime", "parse_provider_ids"]

# An image search also passes on when a provider cannot take the image the way it was given
# (bytes, to a service that takes URLs only): the next one in the list may.
_IMAGE_FALLBACK_CODES = FALLBACK_CODES | {WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE}

R = TypeVar("R")


class AsyncCloseable(Protocol):
    async def aclose(self) -> None: ...


def _image_key(image: ImageInput) -> dict[str, str]:
    """What identifies an image in a cache key: its URL, or its bytes' hash and media type."""
    match image:
        case ImageUrl(url=url):
            return {"url": url}
        case ImageBytes(media_type=media_type):
            return {"sha256": image.sha256, "media_type": media_type.lower()}
        case _:
            assert_never(image)


class WebRuntime:
    """Registry plus execution: ``search()``, ``fetch()`` and ``image_search()`` pick a provider
    at every call.

    The runtime never reads the environment; :func:`webreach.config.build_runtime` does.
    ``search_provider`` may be ``"auto"``: every available search provider, in ``search_order``
    (ids; ``"*"`` marks where the registered providers it does not name go, by id, else they go
    last). ``search_exclude`` names search providers no chain uses (``auto``, a list, or the
    choice of the one available provider). In a chain of several, a search with nothing to show
    moves on as an error does.
    ``search_timeout`` and ``image_search_timeout`` bound each provider's whole attempt, its
    body's last byte included (seconds; None: only the provider's own request timeouts apply,
    and a per-read timeout never ends a body sent a byte at a time). A provider with
    :class:`~webreach.seam.CallTimeout` sets its own.
    ``robots`` decides robots.txt for every fetch: ``obey``, ``ignore``, or None (a fetch obeys
    when its request says a model asked for it, ``FetchRequest.obey_robots``); ``user_agent``
    gives the token its groups are matched against.
    ``search_pace`` maps a search provider's id to the requests a second it may be sent: its
    searches start that far apart across every caller in the process (see :mod:`.pacing`).
    A rate-limited answer (HTTP 429) whose ``Retry-After`` falls within the attempt's deadline
    is tried once more after that wait.
    """

    def __init__(
        self,
        *,
        search_provider: str | Sequence[str] | None = None,
        search_order: Sequence[str] = (),
        search_exclude: str | Sequence[str] | None = None,
        fetch_provider: str | Sequence[str] | None = None,
        image_search_provider: str | Sequence[str] | None = None,
        cache: CacheStore | None = None,
        cache_ttl: float = 600.0,
        search_timeout: float | None = None,
        image_search_timeout: float | None = None,
        search_pace: Mapping[str, float] | None = None,
        robots: RobotsSetting = None,
        user_agent: str = "webreach",
    ) -> None:
        for pid, per_second in (search_pace or {}).items():
            if not per_second > 0:
                raise InvalidValueError(
                    "search_pace",
                    f"WebRuntime.search_pace[{pid!r}] must be positive, not {per_second!r}",
                )
        self._search_pace = dict(search_pace or {})
        for name, value in (
            ("search_timeout", search_timeout),
            ("image_search_timeout", image_search_timeout),
        ):
            if value is not None and value <= 0:
                raise InvalidValueError(name, f"WebRuntime.{name} must be positive, not {value}")
        self._search: Registry[SearchProvider] = Registry(
            "search",
            parse_provider_ids(search_provider, "search_provider"),
            "WEBREACH_SEARCH_PROVIDER",
            WebErrorCode.WEB_PROVIDER_ERROR,
            order=search_order,
            exclude=parse_provider_ids(search_exclude, "search_exclude"),
            exclude_var="WEBREACH_SEARCH_EXCLUDE",
        )
        self._fetch: Registry[FetchProvider] = Registry(
            "fetch",
            parse_provider_ids(fetch_provider, "fetch_provider"),
            "WEBREACH_FETCH_PROVIDER",
            WebErrorCode.WEB_FETCH_TIMEOUT,
        )
        self._image_search: Registry[ImageSearchProvider] = Registry(
            "image search",
            parse_provider_ids(image_search_provider, "image_search_provider"),
            "WEBREACH_IMAGE_SEARCH_PROVIDER",
            WebErrorCode.WEB_PROVIDER_ERROR,
            _IMAGE_FALLBACK_CODES,
        )
        self._search_timeout = search_timeout
        self._image_search_timeout = image_search_timeout
        self._owned: list[AsyncCloseable] = []
        self._attached: dict[str, AsyncCloseable] = {}
        self._closed = False
        self._cache = GuardedCache(cache, cache_ttl) if cache is not None else None
        self._fetching = FetchPolicy(robots, user_agent, cache_ttl)
        if self._cache is not None:
            self._owned.append(self._cache)

    def register_search_provider(self, provider: SearchProvider) -> Disposer:
        """Offer ``provider`` to searches; it stays the caller's to close (:meth:`own` hands it
        over), as one provider may serve several runtimes."""
        return self._search.register(provider)

    def register_fetch_provider(self, provider: FetchProvider) -> Disposer:
        """Offer ``provider`` to fetches; it stays the caller's to close, as a search provider."""
        return self._fetch.register(provider)

    def register_image_search_provider(self, provider: ImageSearchProvider) -> Disposer:
        return self._image_search.register(provider)

    def image_search_ready(self) -> bool:
        """Whether an image search would find a provider to run (one configured or exactly one
        available), so a caller offers the capability only when it can work."""
        try:
            self._image_search.chain()
        except WebError:
            return False
        return True

    def own(self, resource: AsyncCloseable) -> None:
        """Close ``resource`` (an HTTP client, say) when the runtime closes."""
        self._owned.append(resource)

    def attach(self, key: str, resource: AsyncCloseable) -> None:
        """Own ``resource`` and let every caller that holds the runtime find it by ``key`` (the
        tools' pool of render processes, say), so one long-lived helper serves them all."""
        if key in self._attached:
            raise InvalidValueError("key", f"WebRuntime already has a resource named {key!r}")
        self._attached[key] = resource
        self.own(resource)

    def attached(self, key: str) -> AsyncCloseable | None:
        """The resource attached under ``key``, or None (also once the runtime is closed)."""
        return None if self._closed else self._attached.get(key)

    def note_web_call(self, tool: str, provider: str | None, outcome: str, seconds: float) -> None:
        """A call made for this runtime's caller elsewhere (a page read in a reader process,
        by that process's runtime): nothing here; a wrapper that counts calls counts it."""

    async def search(self, request: SearchRequest, *, live: bool = True) -> SearchResult:
        """Search with the selected provider; only http(s) sources come back, and more of them
        than ``max_results`` are cut here. ``live=False`` answers from the cache alone: a miss
        is ``WEB_NOT_CACHED``, and no provider is called.

        Cached results are keyed by the provider's ``cache_scope`` when it has one (its base
        URL, say), so they never cross to a provider pointed at another endpoint. The provider's
        call is bounded by ``search_timeout``: past it the call is cancelled (its connection
        closed) and is a ``WEB_PROVIDER_ERROR``, after which a fallback list tries the next.
        """

        async def call(provider: SearchProvider) -> SearchResult:
            native = native_filters(provider)
            asked = asked_of_provider(request, native)
            key = scoped_cache_key("search", provider, *_search_key(asked))
            result = await self._cached(key, decode_search)
            if result is None:
                if not live:
                    raise _not_cached("search", provider.id)
                result = await self._attempt(
                    provider,
                    self._search_timeout,
                    lambda: provider.search(asked),
                    self._pace_of(provider),
                )
                await self._store(key, result)
            result = apply_after(web_sources(result), request, native)
            limit = request.max_results
            if limit is not None and len(result.sources) > limit:
                result = dataclasses.replace(result, sources=result.sources[:limit], truncated=True)
            return dataclasses.replace(result, provider=provider.id)

        self._refuse_if_closed()
        return await await_cleanly(self._search.run(call, _nothing_to_show))

    async def fetch(self, request: FetchRequest, *, live: bool = True) -> FetchResult:
        """Fetch with the selected provider, from the cache when the same policy fetched it;
        ``live=False`` from the cache alone (a miss, of the page or of the robots.txt it must
        be checked against, is ``WEB_NOT_CACHED``, and nothing is fetched).

        A provider's policy is applied before its cache is consulted: a provider that has
        ``precheck`` (:class:`FetchPrecheck`) refuses an invalid URL or a refused address or
        name first, and a provider that has ``cache_scope`` (:class:`CacheScoped`) reads and
        writes only the entries of its own scope. So a page fetched with ``WEBREACH_FETCH_ALLOW``
        opening a private host never reaches a runtime whose guard is closed, even through a
        SQLite or redis cache shared across runs. A hit makes no connection, so a host name's
        DNS answer is not checked again on a hit; it needs no check, because the entry was
        stored by a fetch that vetted it under the same policy, within the TTL.

        Before the cache, a fetch a model asked for (``obey_robots``, or ``robots="obey"``)
        is checked against the site's robots.txt (``WEB_ROBOTS_DISALLOWED``). A page reached
        by following other origins (``redirects="cross_origin"``) is cached apart from one
        reached under the same-site rule, so a same-site request never gets it; ``max_age``
        refuses an older entry. A bot wall any provider returns is ``WEB_BOT_CHALLENGE``, and
        never cached.
        """

        async def call(provider: FetchProvider) -> FetchResult:
            if implements(provider, FetchPrecheck):
                provider.precheck(request)
            if self._fetching.obeys(request):
                await self._fetching.check_robots(request.url, provider, self._cache, live=live)
            keys = fetch_keys(provider, request)
            result = await self._fetching.cached(keys, request, self._cache)
            if result is None:
                if not live:
                    raise _not_cached("fetch", provider.id)
                result = checked_page(await provider.fetch(request), provider.id)
                if self._cache is not None and self._cache.active:
                    await self._cache.set(store_key(keys, request, result), encode(result))
            return dataclasses.replace(result, provider=provider.id)

        self._refuse_if_closed()
        return await await_cleanly(self._fetch.run(call))

    async def read_document(self, data: bytes, media_type: str | None, name: str) -> FetchResult:
        """A document the caller holds, read by the selected fetch provider as its fetches read
        a body (:class:`DocumentReader`); a provider that cannot is
        ``WEB_UNSUPPORTED_CONTENT_TYPE``. Nothing is cached: the bytes are the caller's."""

        async def call(provider: FetchProvider) -> FetchResult:
            if not implements(provider, DocumentReader):
                raise WebError(
                    WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE,
                    f"the fetch provider {provider.id} cannot read files",
                    provider=provider.id,
                )
            result = await provider.read_document(data, media_type, name)
            return dataclasses.replace(result, provider=provider.id)

        self._refuse_if_closed()
        return await await_cleanly(self._fetch.run(call))

    async def image_search(self, request: ImageSearchRequest) -> ImageSearchResult:
        """Find the pages that show an image, with the selected image search provider.

        The image is checked first (``WEB_INVALID_URL`` for a URL no service could fetch,
        ``WEB_UNSUPPORTED_CONTENT_TYPE`` for bytes that are not an image), before any provider
        or the cache is consulted. Results are cached by provider (and its ``cache_scope``), by
        the image's URL or the SHA-256 of its bytes, and by ``max_results``. Only matches on
        http(s) pages come back (an image or thumbnail URL that is not http(s) is left out of
        its match), and more of them than ``max_results`` are cut here. Each provider's attempt
        is bounded by ``image_search_timeout``: past it the attempt is cancelled and is a
        ``WEB_PROVIDER_ERROR``, after which an explicit fallback list tries the next provider
        (as it does after a provider error, or after ``WEB_UNSUPPORTED_CONTENT_TYPE`` from a
        provider that cannot take the image the way it was given).
        """
        check_image(request.image)

        async def call(provider: ImageSearchProvider) -> ImageSearchResult:
            key = scoped_cache_key(
                "image_search", provider, _image_key(request.image), request.max_results
            )
            result = await self._cached(key, decode_image_search)
            if result is None:
                result = await self._attempt(
                    provider,
                    self._image_search_timeout,
                    lambda: provider.image_search(request),
                    None,
                )
                await self._store(key, result)
            result = web_matches(result)
            limit = request.max_results
            if limit is not None and len(result.matches) > limit:
                result = dataclasses.replace(result, matches=result.matches[:limit], truncated=True)
            return dataclasses.replace(result, provider=provider.id)

        self._refuse_if_closed()
        return await await_cleanly(self._image_search.run(call))

    def _pace_of(self, provider: SearchProvider) -> Pace | None:
        """The process's pace of ``provider`` at its endpoint, when one is set for its id."""
        per_second = self._search_pace.get(provider.id)
        if per_second is None:
            return None
        scope = str(provider.cache_scope()) if implements(provider, CacheScoped) else ""
        return shared_pace(f"{provider.id}\n{scope}", per_second)

    @staticmethod
    async def _attempt(
        provider: SearchProvider | ImageSearchProvider,
        limit: float | None,
        attempt: Callable[[], Awaitable[R]],
        pace: Pace | None,
    ) -> R:
        """``attempt`` within ``limit``, or the provider's own :class:`CallTimeout`, paced and
        retried as :func:`.pacing.attempt_within` says."""
        if implements(provider, CallTimeout):
            limit = provider.call_timeout()
        return await attempt_within(provider.id, limit, attempt, pace)

    async def _cached(self, key: str, decode: Callable[[bytes], R]) -> R | None:
        """A cached result, or None; an entry that no longer decodes counts as a miss."""
        raw = await self._cache.get(key) if self._cache is not None else None
        if raw is None:
            return None
        try:
            return decode(raw)
        except (ValueError, KeyError, TypeError):
            return None

    async def _store(
        self, key: str, result: SearchResult | FetchResult | ImageSearchResult
    ) -> None:
        if self._cache is not None and self._cache.active:
            await self._cache.set(key, encode(result))

    def _refuse_if_closed(self) -> None:
        """A closed runtime has closed its clients: a late call is aborted, not a provider
        failure (a server shutting down while requests still arrive, say)."""
        if self._closed:
            raise WebError(WebErrorCode.WEB_ABORTED, "the web runtime has been closed")

    async def aclose(self) -> None:
        self._closed = True
        self._attached = {}
        owned, self._owned = self._owned[::-1], []
        for resource in owned:
            await resource.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _nothing_to_show(result: SearchResult) -> bool:
    return not result.has_content()


def _not_cached(kind: str, provider: str) -> WebError:
    return WebError(
        WebErrorCode.WEB_NOT_CACHED,
        f"no cached {kind} result, and this {kind} may not go to the web",
        provider=provider,
    )


def _search_key(request: SearchRequest) -> tuple[object, ...]:
    """What a cached search is keyed by: the query and its limit, then each filter and answer
    setting set (a plain search keeps the key it had before filters existed)."""
    filters = {
        "recency": request.recency,
        "include_domains": list(request.include_domains),
        "exclude_domains": list(request.exclude_domains),
        "country": request.country,
        "language": request.language,
    }
    named: dict[str, object] = {name: value for name, value in filters.items() if value}
    shaping = {
        "num_search_results": request.num_search_results,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    named.update((name, value) for name, value in shaping.items() if value is not None)
    return (
        (request.query, request.max_results, named)
        if named
        else (request.query, request.max_results)
    )
