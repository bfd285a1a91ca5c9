"""The one rule that chooses a call's providers from the settings and what each provider says of
itself; the runtime's registries run it, and ``webreach config`` reads it to show the choice.

A configured list must name registered, available providers; ``auto`` takes every available one
in the registry's order; a bare configuration runs its one available provider, never one whose
only key other programs share. Excluded ids are left out of each, and must name a provider.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "AUTO",
    "OTHERS",
    "Candidate",
    "Refusal",
    "Selection",
    "auto_order",
    "is_auto",
    "select",
    "settings_refusal",
]

AUTO = "auto"
"""The configured id that asks for every available provider, in the registry's order."""

OTHERS = "*"
"""In an order, where the registered providers it does not name go (by id); without it, last."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A registered provider as the choice sees it."""

    id: str
    available: bool
    shared: bool = False
    """Its only credential is a key other programs share: it runs when named or in ``auto``."""


class Refusal(enum.Enum):
    """Why no provider can be chosen."""

    UNKNOWN_EXCLUDED = "an excluded id names no provider"
    AUTO_NOT_ALONE = "auto stands alone"
    ALL_EXCLUDED = "every configured provider is excluded"
    UNKNOWN = "a configured id names no provider"
    UNAVAILABLE = "a configured provider is not available"
    NONE_AVAILABLE = "no provider is available"
    AMBIGUOUS = "several providers are available"

    @property
    def of_settings(self) -> bool:
        """Whether the settings themselves are wrong, as opposed to no provider being ready
        for a configuration that names none (or ``auto``)."""
        return self not in (Refusal.NONE_AVAILABLE, Refusal.AMBIGUOUS)


@dataclass(frozen=True, slots=True)
class Selection:
    uses: tuple[str, ...]
    """The providers a call tries, in order; empty when refused."""
    refusal: Refusal | None = None
    about: tuple[str, ...] = ()
    """The ids the refusal is about: the unknown or unavailable one, or the several available."""


def auto_order(ids: Iterable[str], order: Sequence[str]) -> list[str]:
    """``ids`` in ``order``: the ids it names where it names them, the others by id where it has
    :data:`OTHERS` (at the end without it). Ids of ``order`` not in ``ids`` are skipped."""
    present = set(ids)
    others = sorted(present - set(order))
    placed: list[str] = []
    for pid in order:
        if pid == OTHERS:
            placed += others
        elif pid in present:
            placed.append(pid)
    return placed if OTHERS in order else placed + others


def is_auto(configured: Sequence[str], order: Sequence[str] | None) -> bool:
    """Whether the configuration asks for ``auto`` (only a registry with an order has it)."""
    return order is not None and AUTO in configured


def settings_refusal(
    configured: Sequence[str], exclude: Sequence[str], order: Sequence[str] | None
) -> Refusal | None:
    """What is wrong with the lists alone, before any provider is looked at."""
    if is_auto(configured, order):
        return Refusal.AUTO_NOT_ALONE if len(configured) > 1 else None
    if configured and all(pid in exclude for pid in configured):
        return Refusal.ALL_EXCLUDED
    return None


def select(
    configured: Sequence[str],
    exclude: Sequence[str],
    order: Sequence[str] | None,
    candidates: Iterable[Candidate],
) -> Selection:
    """The providers a call would use, or why none: the rule stated once."""
    known = {candidate.id: candidate for candidate in candidates}
    for pid in exclude:
        if pid not in known:
            return Selection((), Refusal.UNKNOWN_EXCLUDED, (pid,))
    wrong = settings_refusal(configured, exclude, order)
    if wrong is not None:
        return Selection((), wrong)
    if is_auto(configured, order):
        ready = [
            pid
            for pid in auto_order(known, order or ())
            if pid not in exclude and known[pid].available
        ]
        return Selection(tuple(ready)) if ready else Selection((), Refusal.NONE_AVAILABLE)
    if configured:
        kept = tuple(pid for pid in configured if pid not in exclude)
        for pid in kept:
            if pid not in known:
                return Selection((), Refusal.UNKNOWN, (pid,))
            if not known[pid].available:
                return Selection((), Refusal.UNAVAILABLE, (pid,))
        return Selection(kept)
    choosable = tuple(
        sorted(
            pid
            for pid, candidate in known.items()
            if pid not in exclude and candidate.available and not candidate.shared
        )
    )
    if not choosable:
        return Selection((), Refusal.NONE_AVAILABLE)
    if len(choosable) > 1:
        return Selection((), Refusal.AMBIGUOUS, choosable)
    return Selection(choosable)
