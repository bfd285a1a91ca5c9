"""What a turn may spend on web calls, by budget, what it has spent, and where it is."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["EXTRA_STEPS", "Budgets"]

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
