"""Inbound keys as tenants: each key's limits (requests a minute, searches and fetches a day)
and its usage, counted in fixed windows.

Counters live in this process, or in the server's store when it is shared
(:class:`~webreach.seam.CounterStore`, Redis), so replicas count a key's use once and refuse it
together.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Iterable, Mapping
from dataclasses import dataclass, field

from ..seam import CacheStore, CounterStore
from ..settings.server import KeyLimits
from .core.turn.budgets import NO_QUOTA, KeyQuota, QuotaKind

__all__ = ["USAGE_FIELDS", "Admission", "DayQuota", "Refusal", "Tenants"]

logger = logging.getLogger("webreach.server")

MINUTE = 60
DAY = 86_400
USAGE_FIELDS = ("requests", "searches", "fetches", "input_tokens", "output_tokens")
_PREFIX = "webreach:tenant:"


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a key's request is refused, and in how many seconds its window turns over."""

    message: str
    retry_after: int


@dataclass(frozen=True, slots=True)
class Admission:
    """A request let in, and its key's day quota, which its web calls reserve from."""

    quota: KeyQuota = NO_QUOTA


class _LocalCounters:
    """Counters of this process alone, each dropped once its window is over."""

    def __init__(self) -> None:
        self._values: dict[str, tuple[int, float | None]] = {}

    async def count(self, key: str, amount: int, ttl: float | None) -> int:
        now = time.monotonic()
        value, until = self._values.get(key, (0, None))
        if until is not None and until <= now:
            value = 0
        if len(self._values) > 10_000:
            self._values = {k: v for k, v in self._values.items() if v[1] is None or v[1] > now}
        value += amount
        self._values[key] = (value, now + ttl if ttl is not None else None)
        return value

    async def counted(self, key: str) -> int:
        value, until = self._values.get(key, (0, None))
        return 0 if until is not None and until <= time.monotonic() else value


class Tenants:
    """Admits each key's requests under its limits and adds up its usage."""

    def __init__(
        self,
        names: Iterable[str],
        limits: Mapping[str, KeyLimits],
        store: CacheStore | None = None,
    ) -> None:
        self.names = tuple(names)
        self._limits = dict(limits)
        self._counters: CounterStore = (
            store if isinstance(store, CounterStore) else _LocalCounters()
        )

    async def admit(self, name: str) -> Refusal | Admission:
        """Counts one request of ``name``; a refusal when a limit of the key is spent."""
        limits = self._limits.get(name)
        now = time.time()
        admission = Admission()
        try:
            if limits is not None:
                refused = await self._check(name, limits, now)
                if refused is not None:
                    return refused
                admission = Admission(DayQuota(self._counters, name, limits))
            await self._counters.count(f"{_PREFIX}{name}:usage:requests", 1, None)
        except Exception as error:  # a lost Redis must not take every request down with it
            logger.warning("key limits not checked: %s", type(error).__name__)
        return admission

    async def _check(self, name: str, limits: KeyLimits, now: float) -> Refusal | None:
        if limits.requests_per_minute is not None:
            window = int(now // MINUTE)
            made = await self._counters.count(f"{_PREFIX}{name}:rpm:{window}", 1, 2 * MINUTE)
            if made > limits.requests_per_minute:
                return Refusal(
                    f"rate limit: key {name!r} may make {limits.requests_per_minute} "
                    "requests a minute",
                    _until(now, MINUTE),
                )
        day = int(now // DAY)
        for tool, most in (
            ("searches", limits.searches_per_day),
            ("fetches", limits.fetches_per_day),
        ):
            if most is not None:
                spent = await self._counters.counted(f"{_PREFIX}{name}:{tool}:{day}")
                if spent >= most:
                    return Refusal(_spent_message(name, most, tool), _until(now, DAY))
        return None

    async def spent(
        self, name: str, searches: int, fetches: int, input_tokens: int, output_tokens: int
    ) -> None:
        """Adds a finished request's web calls and upstream tokens to the key's usage (the
        day's quota was reserved before the calls ran, by :class:`DayQuota`)."""
        used = {
            "searches": searches,
            "fetches": fetches,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
        }
        try:
            for field, amount in used.items():
                if amount:
                    await self._counters.count(f"{_PREFIX}{name}:usage:{field}", amount, None)
        except Exception as error:
            logger.warning("key usage not counted: %s", type(error).__name__)

    async def usage(self) -> dict[str, dict[str, int]]:
        """Every key's usage since the counters began (the process's start, or Redis's)."""
        return {
            name: {
                field: await self._counters.counted(f"{_PREFIX}{name}:usage:{field}")
                for field in USAGE_FIELDS
            }
            for name in self.names
        }


@dataclass(eq=False)
class DayQuota:
    """One request's reservations from its key's day counters. A reservation is one atomic
    increment; what it took past the limit is given back at once, so the counter never stays
    above the limit and concurrent requests (and replicas) together get at most the day's
    units. A lost store lets the request through, as the admission does."""

    counters: CounterStore
    name: str
    limits: KeyLimits
    held: dict[str, int] = field(default_factory=dict)
    """Units taken and not yet given back, by counter key (the day they were taken in)."""

    def _most(self, kind: QuotaKind) -> int | None:
        return self.limits.searches_per_day if kind == "searches" else self.limits.fetches_per_day

    async def take(self, kind: QuotaKind, units: int) -> int:
        most = self._most(kind)
        if most is None or units <= 0:
            return max(units, 0)
        key = f"{_PREFIX}{self.name}:{kind}:{int(time.time() // DAY)}"
        reserving = asyncio.ensure_future(self._reserve(key, most, units))
        try:
            return await asyncio.shield(reserving)
        except asyncio.CancelledError:
            # The caller left mid-reservation: what it was granted goes straight back.
            reserving.add_done_callback(lambda done: self._return_granted(done, kind))
            raise

    async def _reserve(self, key: str, most: int, units: int) -> int:
        try:
            value = await self.counters.count(key, units, 2 * DAY)
            excess = min(units, max(0, value - most))
            if excess:
                await self.counters.count(key, -excess, 2 * DAY)
        except Exception as error:
            logger.warning("key quota not reserved: %s", type(error).__name__)
            return units
        granted = units - excess
        self.held[key] = self.held.get(key, 0) + granted
        return granted

    def _return_granted(self, done: asyncio.Future[int], kind: QuotaKind) -> None:
        if not done.cancelled() and done.exception() is None and done.result():
            _in_background(self.give_back(kind, done.result()))

    async def give_back(self, kind: QuotaKind, units: int) -> None:
        for key in [k for k in self.held if k.startswith(f"{_PREFIX}{self.name}:{kind}:")]:
            back = min(units, self.held[key])
            if back <= 0:
                continue
            self.held[key] -= back
            units -= back
            # Shielded: a request being cancelled (a client that left) still returns its units.
            await asyncio.shield(_in_background(self._decrease(key, back)))

    async def _decrease(self, key: str, units: int) -> None:
        try:
            await self.counters.count(key, -units, 2 * DAY)
        except Exception as error:
            logger.warning("key quota not given back: %s", type(error).__name__)

    def refusal(self, kind: QuotaKind) -> tuple[str, int]:
        most = self._most(kind) or 0
        return _spent_message(self.name, most, kind), _until(time.time(), DAY)


_running: set[asyncio.Task[None]] = set()


def _in_background(work: Awaitable[None]) -> asyncio.Task[None]:
    """A task kept referenced until it ends, so a give-back outlives a cancelled request."""

    async def run() -> None:
        await work

    task = asyncio.ensure_future(run())
    _running.add(task)
    task.add_done_callback(_running.discard)
    return task


def _spent_message(name: str, most: int, tool: str) -> str:
    return f"quota: key {name!r} has made its {most} {tool} for today (UTC)"


def _until(now: float, window: int) -> int:
    """Whole seconds until the fixed window that holds ``now`` ends (at least 1)."""
    return max(1, int(window - now % window + 0.999))
