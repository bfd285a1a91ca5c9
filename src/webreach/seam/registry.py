"""Providers of one kind by id, and the chain a call runs through them.

:class:`~webreach.seam.WebRuntime` keeps one :class:`Registry` per capability (search, fetch,
image search); each chooses its providers by :func:`~webreach.seam.selection.select` and words
its refusals as errors. A registry given an ``order`` also understands ``auto``: every available
provider in that order. The registry never names a provider itself: the order comes from
whoever builds the runtime.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from .cache import cache_key
from .errors import InvalidValueError, WebError, WebErrorCode
from .protocols import CacheScoped, Explained, SharedCredential, implements
from .selection import AUTO, Candidate, Refusal, select, settings_refusal

logger = logging.getLogger("webreach.seam")

__all__ = [
    "FALLBACK_CODES",
    "Disposer",
    "Registry",
    "did_you_mean",
    "parse_provider_ids",
    "scoped_cache_key",
]

Disposer = Callable[[], None]

FALLBACK_CODES = frozenset(
    {WebErrorCode.WEB_PROVIDER_ERROR, WebErrorCode.WEB_FETCH_TIMEOUT, WebErrorCode.WEB_NOT_CACHED}
)
"""Failures after which the next provider of an explicit fallback list is tried (a cache-only
call looks in each provider's cache)."""


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


@dataclass(frozen=True, slots=True)
class _Failure:
    provider: str
    error: WebError

    def reason(self) -> str:
        """The error's message, led by the provider's id (most messages already are), its own
        semicolons made commas: they separate the providers in the chain's error."""
        message = self.error.message.replace("; ", ", ")
        if message.startswith((f"{self.provider}:", f"{self.provider} ")):
            return message
        return f"{self.provider}: {message}"


class Registry(Generic[P]):
    """Providers of one kind, keyed by id; selection never depends on registration order.

    ``kind`` and ``env_var`` only word the errors; ``timeout_code`` is what a raw
    ``TimeoutError`` from the last provider becomes; ``fallback_codes`` are the failures after
    which a chain moves on. ``order`` makes ``auto`` a valid configured id (every available
    provider, in that order; see :func:`~webreach.seam.selection.auto_order`); ``exclude``
    names ids no chain ever uses, set by ``exclude_var``.
    """

    def __init__(
        self,
        kind: str,
        configured: tuple[str, ...],
        env_var: str,
        timeout_code: WebErrorCode,
        fallback_codes: frozenset[WebErrorCode] = FALLBACK_CODES,
        *,
        order: Sequence[str] | None = None,
        exclude: tuple[str, ...] = (),
        exclude_var: str = "",
    ) -> None:
        self.kind = kind
        self.env_var = env_var
        self.timeout_code = timeout_code
        self.fallback_codes = fallback_codes
        self.order = tuple(order) if order is not None else None
        self.exclude = exclude
        self.exclude_var = exclude_var
        self.auto = self.order is not None and AUTO in configured
        field = env_var.removeprefix("WEBREACH_").lower()
        wrong = settings_refusal(configured, exclude, self.order)
        if wrong is Refusal.AUTO_NOT_ALONE:
            raise InvalidValueError(
                field,
                f"{env_var}={','.join(configured)}: {AUTO!r} stands alone (every available "
                f"provider in order); to leave providers out of it, set {exclude_var}",
            )
        if wrong is Refusal.ALL_EXCLUDED:
            raise InvalidValueError(
                field,
                f"{exclude_var}={','.join(exclude)} excludes every provider of "
                f"{env_var}={','.join(configured)}; remove one from {exclude_var}",
            )
        self.configured = configured
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
        candidates = [Candidate(p.id, p.available(), _shared(p)) for p in self._providers.values()]
        chosen = select(self.configured, self.exclude, self.order, candidates)
        if chosen.refusal is not None:
            raise self._refused(chosen.refusal, chosen.about)
        return [self._providers[pid] for pid in chosen.uses]

    def _refused(self, refusal: Refusal, about: tuple[str, ...]) -> WebError:
        if refusal is Refusal.UNKNOWN_EXCLUDED:
            (pid,) = about
            return WebError(
                WebErrorCode.WEB_PROVIDER_CONFIGURED_MISSING,
                f"{self.exclude_var} names {self.kind} provider {pid!r}, which is not "
                f"registered{did_you_mean(pid, self._providers)} (registered: "
                f"{', '.join(sorted(self._providers)) or 'none'})",
                provider=pid,
            )
        if refusal is Refusal.UNKNOWN:
            (pid,) = about
            known = ", ".join(sorted(self._providers)) or "none"
            return WebError(
                WebErrorCode.WEB_PROVIDER_CONFIGURED_MISSING,
                f"{self.env_var} names {self.kind} provider {pid!r}, which is not registered "
                f"(registered: {known})",
                provider=pid,
            )
        if refusal is Refusal.UNAVAILABLE:
            (pid,) = about
            provider = self._providers[pid]
            why = provider.unavailable_reason() if implements(provider, Explained) else None
            return WebError(
                WebErrorCode.WEB_PROVIDER_CONFIGURED_UNAVAILABLE,
                f"{self.kind} provider {pid!r} is configured but not available "
                + (f"({why})" if why else "(is its API key or base URL set?)"),
                provider=pid,
            )
        if refusal is Refusal.AMBIGUOUS:
            every = (
                f", or {self.env_var}={AUTO} for every available one in order"
                if self.order is not None
                else ""
            )
            return WebError(
                WebErrorCode.WEB_PROVIDER_AMBIGUOUS,
                f"several {self.kind} providers are available ({', '.join(about)}); choose one "
                f"by setting {self.env_var} to one of them (or a comma list for fallback, e.g. "
                f"{self.env_var}={about[0]},{about[1]}{every})",
            )
        how = f" for {self.env_var}={AUTO}" if self.auto else ""
        return WebError(WebErrorCode.WEB_PROVIDER_UNAVAILABLE, self._none_available(how))

    def _none_available(self, how: str = "") -> str:
        """Why nothing can run: naming the idle ones tells a user which key to set (no image
        search provider works without one, so this is the usual first error there)."""
        ready = [p for p in self._providers.values() if p.id not in self.exclude and p.available()]
        shared = sorted(p.id for p in ready if _shared(p))
        idle = sorted(pid for pid in self._providers if pid not in self.exclude)
        idle = [pid for pid in idle if pid not in shared]
        notes = [f"registered, but not configured: {', '.join(idle)}"] if idle else []
        if shared:
            notes.append(
                f"{', '.join(shared)} only with a key other programs share, so only when named"
            )
        excluded = [pid for pid in self.exclude if pid in self._providers]
        if excluded:
            notes.append(f"excluded by {self.exclude_var}: {', '.join(excluded)}")
        known = f" ({'; '.join(notes)})" if notes else ""
        return (
            f"no {self.kind} provider is available{how}{known}; configure one and set "
            f"{self.env_var}"
        )

    def _passing_on(self, why: object, following: P) -> None:
        """A failure the next provider of the list makes up for: not the caller's error, but
        an operator wants to know (a key expiring shows up here first)."""
        logger.info("%s failed (%s); trying %s", self.kind, why, following.id)

    async def run(
        self, call: Callable[[P], Awaitable[R]], empty: Callable[[R], bool] | None = None
    ) -> R:
        """``call`` with each provider of the chain until one answers.

        A provider error or timeout moves on; so does an answer ``empty`` calls empty, except
        the last provider's, which is a real "no results". When every provider failed and one
        of them answered empty, that answer is returned; otherwise the error names each
        provider's reason, in order (one provider alone keeps its own error).
        """
        chain = self.chain()
        failures: list[_Failure] = []
        failure: WebError | None = None
        nothing: list[R] = []
        for index, provider in enumerate(chain):
            following = chain[index + 1] if index + 1 < len(chain) else None
            try:
                result = await call(provider)
            except WebError as error:
                if error.code not in self.fallback_codes:
                    raise
                failure = error
            except TimeoutError as error:
                failure = WebError(
                    self.timeout_code, f"{provider.id}: timed out", provider=provider.id
                )
                failure.__cause__ = error
            except Exception as error:
                raise _unexpected(provider.id, error) from error
            else:
                if following is None or empty is None or not empty(result):
                    return result
                nothing.append(result)
                logger.info("%s: %s found nothing; trying %s", self.kind, provider.id, following.id)
                continue
            failures.append(_Failure(provider.id, failure))
            if following is not None:
                self._passing_on(failure, following)
        if nothing:
            logger.info(
                "%s: no provider found anything and the others failed (%s); "
                "returning the empty answer",
                self.kind,
                "; ".join(f.reason() for f in failures),
            )
            return nothing[0]
        try:
            raise self._all_failed(failures)
        finally:  # the error's traceback holds this frame: its locals must not hold the error
            failures.clear()
            failure = None

    def _all_failed(self, failures: list[_Failure]) -> WebError:
        """One error for the whole chain: each provider's reason in order, and what they share
        (their code when all failed alike, the provider tried last)."""
        if len(failures) == 1:
            return failures[0].error
        errors = [f.error for f in failures]
        codes = {e.code for e in errors}
        statuses = {e.status for e in errors}
        waits = [e.retry_after for e in errors]
        error = WebError(
            codes.pop() if len(codes) == 1 else WebErrorCode.WEB_PROVIDER_ERROR,
            "all providers failed: " + "; ".join(f.reason() for f in failures),
            provider=failures[-1].provider,
            status=statuses.pop() if len(statuses) == 1 else None,
            retry_after=min(w for w in waits if w is not None)
            if all(w is not None for w in waits)
            else None,
        )
        error.__cause__ = errors[-1]
        return error


def did_you_mean(pid: str, known: Iterable[str]) -> str:
    """`` (did you mean 'exa'?)`` when one known id is close to ``pid``; else empty."""
    close = difflib.get_close_matches(pid, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _shared(provider: object) -> bool:
    """Whether the provider's only credential is a key other programs share: it runs when
    named or in ``auto``, never by a bare configuration's choice."""
    return implements(provider, SharedCredential) and provider.shared_credential()


def scoped_cache_key(kind: str, provider: _Provider, *request: object) -> str:
    """The key of one request: by provider id, and by its scope when it declares one.

    A provider without :class:`CacheScoped` keeps the plain ``(kind, id, request)`` key; a scoped
    key can never equal it, so entries written before scopes existed are never read as scoped.
    """
    if implements(provider, CacheScoped):
        return cache_key(kind, provider.id, {"scope": str(provider.cache_scope())}, *request)
    return cache_key(kind, provider.id, *request)


def _unexpected(pid: str, error: Exception) -> WebError:
    return WebError(
        WebErrorCode.WEB_PROVIDER_ERROR,
        f"{pid}: unexpected failure ({type(error).__name__})",
        provider=pid,
    )
