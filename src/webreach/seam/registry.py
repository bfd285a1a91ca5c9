"""Providers of one kind by id, and the one place where a call's providers are chosen.

:class:`~webreach.seam.WebRuntime` keeps one :class:`Registry` per capability (search, fetch,
image search); they share the selection table of SPEC §2 and the explicit fallback lists.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, Protocol, TypeVar

from .cache import cache_key
from .errors import InvalidValueError, WebError, WebErrorCode
from .types import CacheScoped

logger = logging.getLogger("webreach.seam")

__all__ = ["FALLBACK_CODES", "Disposer", "Registry", "parse_provider_ids", "scoped_cache_key"]

Disposer = Callable[[], None]

FALLBACK_CODES = frozenset({WebErrorCode.WEB_PROVIDER_ERROR, WebErrorCode.WEB_FETCH_TIMEOUT})
"""Failures after which the next provider of an explicit fallback list is tried."""


class _Provider(Protocol):
    @property
    def id(self) -> str: ...

    def available(self) -> bool: ...


P = TypeVar("P", bound=_Provider)
R = TypeVar("R")


def parse_provider_ids(
    value: str | Sequence[str] | None, field: str = "provider list"
) -> tuple[str, ...]:
    """Normalise a configured id, a comma list, or a sequence of ids into an ordered tuple;
    ``field`` names the list when it names a provider twice."""
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    ids = tuple(item.strip() for item in items if item.strip())
    if len(set(ids)) != len(ids):
        raise InvalidValueError(field, f"{field} {','.join(ids)!r} names a provider twice")
    return ids


class Registry(Generic[P]):
    """Providers of one kind, keyed by id; selection never depends on registration order.

    ``kind`` and ``env_var`` only word the errors; ``timeout_code`` is what a raw
    ``TimeoutError`` from the last provider becomes; ``fallback_codes`` are the failures after
    which a fallback list moves on.
    """

    def __init__(
        self,
        kind: str,
        configured: tuple[str, ...],
        env_var: str,
        timeout_code: WebErrorCode,
        fallback_codes: frozenset[WebErrorCode] = FALLBACK_CODES,
    ) -> None:
        self.kind = kind
        self.configured = configured
        self.env_var = env_var
        self.timeout_code = timeout_code
        self.fallback_codes = fallback_codes
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
            # Naming the idle ones tells a user which key to set (no image search provider
            # works without one, so this is the usual first error there).
            idle = ", ".join(sorted(self._providers))
            known = f" (registered, but not configured: {idle})" if idle else ""
            raise WebError(
                WebErrorCode.WEB_PROVIDER_UNAVAILABLE,
                f"no {self.kind} provider is available{known}; configure one and set "
                f"{self.env_var}",
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

    def _passing_on(self, why: object, following: P) -> None:
        """A failure the next provider of the list makes up for: not the caller's error, but
        an operator wants to know (a key expiring shows up here first)."""
        logger.info("%s failed (%s); trying %s", self.kind, why, following.id)

    async def run(self, call: Callable[[P], Awaitable[R]]) -> R:
        chain = self.chain()
        for index, provider in enumerate(chain):
            try:
                return await call(provider)
            except WebError as error:
                if error.code not in self.fallback_codes or index == len(chain) - 1:
                    raise
                self._passing_on(error, chain[index + 1])
            except TimeoutError as error:
                if index == len(chain) - 1:
                    raise WebError(
                        self.timeout_code, f"{provider.id}: timed out", provider=provider.id
                    ) from error
                self._passing_on(f"{provider.id}: timed out", chain[index + 1])
            except Exception as error:
                raise _unexpected(provider.id, error) from error
        raise AssertionError("unreachable: the chain is never empty")


def scoped_cache_key(kind: str, provider: _Provider, *request: object) -> str:
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
