"""What a turn may spend on web calls, by budget, what it has spent, and where it is."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal, Protocol

__all__ = [
    "EXTRA_STEPS",
    "NO_QUOTA",
    "UNLIMITED",
    "Budgets",
    "KeyAllowance",
    "KeyQuota",
    "QuotaKind",
    "allowed_for_key",
    "key_quota",
]

EXTRA_STEPS = 3
"""Model steps allowed beyond the search budget before an answer is forced."""


@dataclass
class Budgets:
    """Each named budget's limit and use (a tool names the one it draws on); ``paced_by`` is
    the one whose end forces the answer, ``steps`` the budget the step count may exceed by
    :data:`EXTRA_STEPS` before it is forced anyway."""

    limits: dict[str, int]
    paced_by: str
    steps: int
    used: dict[str, int] = field(default_factory=dict)
    step: int = 0
    forced: bool = False
    retried: bool = False

    def left(self, key: str) -> int:
        """What is left of a budget; one no declaration limits is bounded by the steps only."""
        if key not in self.limits:
            return sys.maxsize
        return self.limits[key] - self.used.get(key, 0)

    def spend(self, taken: Mapping[str, int]) -> None:
        for key, count in taken.items():
            self.used[key] = self.used.get(key, 0) + count

    def advance(self) -> None:
        """One model step done: force an answer once the budget is spent or steps run long."""
        self.step += 1
        if self.left(self.paced_by) <= 0 or self.step > max(self.steps, 1) + EXTRA_STEPS:
            self.forced = True


@dataclass(frozen=True, slots=True)
class KeyAllowance:
    """What the request's inbound key granted a turn of its day's searches and fetches (None:
    unlimited); the turn's budgets are capped by it, so the model reads a spent budget."""

    searches: int | None = None
    fetches: int | None = None


UNLIMITED = KeyAllowance()

QuotaKind = Literal["searches", "fetches"]


class KeyQuota(Protocol):
    """The request's key's day quota: units are taken before web calls run and the unused
    given back, so concurrent requests (and replicas) never spend more than the day allows."""

    async def take(self, kind: QuotaKind, units: int) -> int:
        """Reserves up to ``units``; how many were granted (0 when the day is spent)."""
        ...

    async def give_back(self, kind: QuotaKind, units: int) -> None:
        """Returns reserved units that were not used."""
        ...

    def refusal(self, kind: QuotaKind) -> tuple[str, int]:
        """The message of a request refused for ``kind``, and seconds until the day ends."""
        ...


class _Unlimited:
    async def take(self, kind: QuotaKind, units: int) -> int:
        return units

    async def give_back(self, kind: QuotaKind, units: int) -> None:
        return None

    def refusal(self, kind: QuotaKind) -> tuple[str, int]:
        return f"no {kind} left", 1


NO_QUOTA: KeyQuota = _Unlimited()
_quota: ContextVar[KeyQuota | None] = ContextVar("webreach_key_quota", default=None)


@contextmanager
def allowed_for_key(quota: KeyQuota) -> Iterator[None]:
    token = _quota.set(quota)
    try:
        yield
    finally:
        _quota.reset(token)


def key_quota() -> KeyQuota:
    return _quota.get() or NO_QUOTA
