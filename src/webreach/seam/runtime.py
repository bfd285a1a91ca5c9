"""The provider registry and the one place where a provider is chosen for a call."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import Generic, Protocol, Self, TypeVar

from .cache import CacheStore, GuardedCache, cache_key, decode_fetch, decode_search, encode
from .errors import WebError, WebErrorCode
from .tasks import settled
from .types import (
    CacheScoped,
    FetchPrecheck,
    FetchProvider,
    FetchRequest,
    FetchResult,
    SearchProvider,
    SearchRequest,
    SearchResult,
)

__all__ = ["AsyncCloseable", "Disposer", "WebRuntime", "parse_provider_ids"]

Disposer = Callable[[], None]

# Failures after which the next provider of an explicit fallback list is tried.
_FALLBACK_CODES = frozenset({WebErrorCode.WEB_PROVIDER_ERROR, WebErrorCode.WEB_FETCH_TIMEOUT})


class AsyncCloseable(Protocol):
    async def aclose(self) -> None: ...


class _Provider(Protocol):
    @property
    def id(self) -> str: ...

    def available(self) -> bool: ...


P = TypeVar("P", bound=_Provider)
R = TypeVar("R")


def parse_provider_ids(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """Normalise a configured id, a comma list, or a sequence of ids into an ordered tuple."""
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    ids = tuple(item.strip() for item in items if item.strip())
    if len(set(ids)) != len(ids):
        raise ValueError(f"provider list {','.join(ids)!r} names a provider twice")
    return ids


class _Registry(Generic[P]):
    """Providers of one kind, keyed by id; selection never depends on registration order."""

    def __init__(
        self,
        kind: str,
        configured: tuple[str, ...],
        env_var: str,
        timeout_code: WebErrorCode,
    ) -> None:
        self.kind = kind
        self.configured = configured
        self.env_var = env_var
        self.timeout_code = timeout_code
        self._providers: dict[str, P] = {}

    def register(self, provider: P) -> Disposer:
        pid = provider.id
        if pid in self._providers:
            raise WebError(
                WebErrorCode.WEB_DUPLICATE_PROVIDER,
                f"a {self.kind} provider with id {pid!r} is already registered",
                provider=pid,
            )
        self._providers[pid] = provider

        def dispose() -> None:
            if self._providers.get(pid) is provider:
                del self._providers[pid]

        return dispose

    def chain(self) -> list[P]:
        """The providers to try for one call, in order, resolved now."""
        if self.configured:
            return [self._configured(pid) for pid in self.configured]
        available = sorted(
            (p for p in self._providers.values() if p.available()), key=lambda p: p.id
        )
        if not available:
            raise WebError(
                WebErrorCode.WEB_PROVIDER_UNAVAILABLE,
                f"no {self.kind} provider is available; configure one and set {self.env_var}",
            )
        if len(available) > 1:
            ids = ", ".join(p.id for p in available)
            raise WebError(
                WebErrorCode.WEB_PROVIDER_AMBIGUOUS,
                f"several {self.kind} providers are available ({ids}); choose one by setting "
                f"{self.env_var} to one of them (or a comma list for fallback, e.g. "
                f"{self.env_var}={available[0].id},{available[1].id})",
            )
        return available

    def _configured(self, pid: str) -> P:
        provider = self._providers.get(pid)
        if provider is None:
            known = ", ".join(sorted(self._providers)) or "none"
            raise WebError(
                WebErrorCode.WEB_PROVIDER_CONFIGURED_MISSING,
                f"{self.env_var} names {self.kind} provider {pid!r}, which is not registered "
                f"(registered: {known})",
                provider=pid,
            )
        if not provider.available():
            raise WebError(
                WebErrorCode.WEB_PROVIDER_CONFIGURED_UNAVAILABLE,
                f"{self.kind} provider {pid!r} is configured but not available "
                "(is its API key or base URL set?)",
                provider=pid,
            )
        return provider

    async def run(self, call: Callable[[P], Awaitable[R]]) -> R:
        chain = self.chain()
        for index, provider in enumerate(chain):
            try:
                return await call(provider)
            except WebError as error:
                if error.code not in _FALLBACK_CODES or index == len(chain) - 1:
                    raise
            except TimeoutError as error:
                if index == len(chain) - 1:
                    raise WebError(
                        self.timeout_code, f"{provider.id}: timed out", provider=provider.id
                    ) from error
            except Exception as error:
                raise _unexpected(provider.id, error) from error
        raise AssertionError("unreachable: the chain is never empty")


def _cache_key(kind: str, provider: _Provider, *request: object) -> str:
    """The key of one request: by provider id, and by its scope when it declares one.

    A provider without :class:`CacheScoped` keeps the plain ``(kind, id, request)`` key; a scoped
    key can never equal it, so entries written before scopes existed are never read as scoped.
    """
    if isinstance(provider, CacheScoped):
        return cache_key(kind, provider.id, {"scope": str(provider.cache_scope())}, *request)
    return cache_key(kind, provider.id, *request)


def _unexpected(pid: str, error: Exception) -> WebError:
    return WebError(
        WebErrorCode.WEB_PROVIDER_ERROR,
        f"{pid}: unexpected failure ({type(error).__name__})",
        provider=pid,
    )


class WebRuntime:
    """Registry plus execution: ``search()`` and ``fetch()`` pick a provider at every call.

    The runtime never reads the environment; :func:`webreach.config.build_runtime` does.
    """

    def __init__(
        self,
        *,
        search_provider: str | Sequence[str] | None = None,
        fetch_provider: str | Sequence[str] | None = None,
        cache: CacheStore | None = None,
        cache_ttl: float = 600.0,
    ) -> None:
        self._search: _Registry[SearchProvider] = _Registry(
            "search",
            parse_provider_ids(search_provider),
            "WEBREACH_SEARCH_PROVIDER",
            WebErrorCode.WEB_PROVIDER_ERROR,
        )
        self._fetch: _Registry[FetchProvider] = _Registry(
            "fetch",
            parse_provider_ids(fetch_provider),
            "WEBREACH_FETCH_PROVIDER",
            WebErrorCode.WEB_FETCH_TIMEOUT,
        )
        self._owned: list[AsyncCloseable] = []
        self._closed = False
        self._cache = GuardedCache(cache, cache_ttl) if cache is not None else None
        if self._cache is not None:
            self._owned.append(self._cache)

    def register_search_provider(self, provider: SearchProvider) -> Disposer:
        return self._search.register(provider)

    def register_fetch_provider(self, provider: FetchProvider) -> Disposer:
        return self._fetch.register(provider)

    def own(self, resource: AsyncCloseable) -> None:
        """Close ``resource`` (an HTTP client, say) when the runtime closes."""
        self._owned.append(resource)

    async def search(self, request: SearchRequest) -> SearchResult:
        """Search with the selected provider; more sources than ``max_results`` are cut here.

        Cached results are keyed by the provider's ``cache_scope`` when it has one (its base
        URL, say), so they never cross to a provider pointed at another endpoint.
        """

        async def call(provider: SearchProvider) -> SearchResult:
            key = _cache_key("search", provider, request.query, request.max_results)
            result = await self._cached(key, decode_search)
            if result is None:
                result = await provider.search(request)
                await self._store(key, result)
            limit = request.max_results
            if limit is not None and len(result.sources) > limit:
                result = dataclasses.replace(result, sources=result.sources[:limit], truncated=True)
            return dataclasses.replace(result, provider=provider.id)

        self._refuse_if_closed()
        return await settled(self._search.run(call))

    async def fetch(self, request: FetchRequest) -> FetchResult:
        """Fetch with the selected provider, from the cache when the same policy fetched it.

        A provider's policy is applied before its cache is consulted: a provider that has
        ``precheck`` (:class:`FetchPrecheck`) refuses an invalid URL or a refused address or
        name first, and a provider that has ``cache_scope`` (:class:`CacheScoped`) reads and
        writes only the entries of its own scope. So a page fetched with ``WEBREACH_FETCH_ALLOW``
        opening a private host never reaches a runtime whose guard is closed, even through a
        SQLite or redis cache shared across runs. A hit makes no connection, so a host name's
        DNS answer is not checked again on a hit; it needs no check, because the entry was
        stored by a fetch that vetted it under the same policy, within the TTL.
        """

        async def call(provider: FetchProvider) -> FetchResult:
            if isinstance(provider, FetchPrecheck):
                provider.precheck(request)
            key = _cache_key("fetch", provider, request.url)
            result = await self._cached(key, decode_fetch)
            if result is None:
                result = await provider.fetch(request)
                await self._store(key, result)
            return dataclasses.replace(result, provider=provider.id)

        self._refuse_if_closed()
        return await settled(self._fetch.run(call))

    async def _cached(self, key: str, decode: Callable[[bytes], R]) -> R | None:
        """A cached result, or None; an entry that no longer decodes counts as a miss."""
        raw = await self._cache.get(key) if self._cache is not None else None
        if raw is None:
            return None
        try:
            return decode(raw)
        except (ValueError, KeyError, TypeError):
            return None

    async def _store(self, key: str, result: SearchResult | FetchResult) -> None:
        if self._cache is not None and self._cache.active:
            await self._cache.set(key, encode(result))

    def _refuse_if_closed(self) -> None:
        """A closed runtime has closed its clients: a late call is aborted, not a provider
        failure (a server shutting down while requests still arrive, say)."""
        if self._closed:
            raise WebError(WebErrorCode.WEB_ABORTED, "the web runtime has been closed")

    async def aclose(self) -> None:
        self._closed = True
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
