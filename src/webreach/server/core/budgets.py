"""What a turn may spend on web calls, by budget, what it has spent, and where it is."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["EXTRA_STEPS", "Budgets", "KeyAllowance", "allowed_for_key", "key_allowance"]

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
    """What the request's inbound key has left of its day's searches and fetches (None:
    unlimited); a turn's budgets are capped by it, so the model reads a spent budget."""

    searches: int | None = None
    fetches: int | None = None


UNLIMITED = KeyAllowance()
_allowance: ContextVar[KeyAllowance | None] = ContextVar("webreach_key_allowance", default=None)


@contextmanager
def allowed_for_key(allowance: KeyAllowance) -> Iterator[None]:
    token = _allowance.set(allowance)
    try:
        yield
    finally:
        _allowance.reset(token)


def key_allowance() -> KeyAllowance:
    return _allowance.get() or UNLIMITED
