"""Inbound keys as tenants: each key's limits (requests a minute, searches and fetches a day)
and its usage, counted in fixed windows.

Counters live in this process, or in the server's store when it is shared
(:class:`~webreach.seam.CounterStore`, Redis), so replicas count a key's use once and refuse it
together.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..seam import CacheStore, CounterStore
from .config import KeyLimits
from .core.budgets import UNLIMITED, KeyAllowance

__all__ = ["USAGE_FIELDS", "Admission", "Refusal", "Tenants"]

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
    """A request let in, and what its key has left of today's searches and fetches."""

    allowance: KeyAllowance = UNLIMITED


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
                checked = await self._check(name, limits, now)
                if isinstance(checked, Refusal):
                    return checked
                admission = Admission(checked)
            await self._counters.count(f"{_PREFIX}{name}:usage:requests", 1, None)
        except Exception as error:  # a lost Redis must not take every request down with it
            logger.warning("key limits not checked: %s", type(error).__name__)
        return admission

    async def _check(self, name: str, limits: KeyLimits, now: float) -> Refusal | KeyAllowance:
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
        left: dict[str, int | None] = {}
        for tool, most in (
            ("searches", limits.searches_per_day),
            ("fetches", limits.fetches_per_day),
        ):
            left[tool] = None
            if most is not None:
                spent = await self._counters.counted(f"{_PREFIX}{name}:{tool}:{day}")
                if spent >= most:
                    return Refusal(
                        f"quota: key {name!r} has made its {most} {tool} for today (UTC)",
                        _until(now, DAY),
                    )
                left[tool] = most - spent
        return KeyAllowance(left["searches"], left["fetches"])

    async def spent(
        self, name: str, searches: int, fetches: int, input_tokens: int, output_tokens: int
    ) -> None:
        """Adds a finished request's web calls and upstream tokens to the key's usage."""
        day = int(time.time() // DAY)
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
            for tool in ("searches", "fetches"):
                if used[tool]:
                    key = f"{_PREFIX}{name}:{tool}:{day}"
                    await self._counters.count(key, used[tool], 2 * DAY)
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


def _until(now: float, window: int) -> int:
    """Whole seconds until the fixed window that holds ``now`` ends (at least 1)."""
    return max(1, int(window - now % window + 0.999))
