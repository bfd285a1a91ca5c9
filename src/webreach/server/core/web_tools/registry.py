"""The server's own web tools, in the order the loop offers, plans and runs their calls, and the
budgets a turn's declarations give them."""

from __future__ import annotations

import asyncio
from collections.abc import Collection

from ..turn.budgets import UNLIMITED, Budgets, KeyAllowance, QuotaKind, key_quota
from ..turn.shape import Turn
from .base import READ_BUDGET, SEARCH_BUDGET, ToolFactory, deep_search
from .images import ImageSearch
from .links import READ_LINKS_LIMIT, ReadLink
from .pages import DEEP_SEARCH_BUDGET, PageTools
from .search import WebSearch

__all__ = ["BUILT_IN_TOOLS", "give_back_unused", "reserved_budgets", "turn_budgets"]

BUILT_IN_TOOLS: tuple[ToolFactory, ...] = (
    WebSearch.offer,
    ImageSearch.offer,
    PageTools.offer,
    ReadLink.offer,
)
"""Search, image search, a deep search's page tools, then reading the user's links: a step's
calls are announced in this order, and each draws on what the ones before it left."""


_QUOTA_KINDS: dict[str, QuotaKind] = {SEARCH_BUDGET: "searches", READ_BUDGET: "fetches"}
"""The key's day quota each budget draws on (a deep search's page reads are search budget)."""


def turn_budgets(turn: Turn, granted: KeyAllowance = UNLIMITED) -> Budgets:
    """``max_uses`` of the declared search (5 searches, or 20 calls of a deep search) and of
    URL reading (10 links), each at most what the inbound key ``granted`` the turn. The search
    budget paces the turn when a search is declared."""
    search, read = turn.web.search, turn.web.read_url
    searches = search.budget if search is not None else 0
    if search is not None and deep_search(turn):
        searches = search.max_uses if search.max_uses else DEEP_SEARCH_BUDGET
    reads = read.max_uses if read is not None and read.max_uses is not None else READ_LINKS_LIMIT
    left = granted
    limits = {
        SEARCH_BUDGET: searches if left.searches is None else min(searches, left.searches),
        READ_BUDGET: reads if left.fetches is None else min(reads, left.fetches),
    }
    return Budgets(
        limits,
        paced_by=SEARCH_BUDGET if search is not None else READ_BUDGET,
        steps=searches,
    )


async def reserved_budgets(turn: Turn, drawn: Collection[str]) -> Budgets:
    """The turn's budgets, each one a tool of the turn ``drawn`` on taken now from the key's
    day quota and capped by what was granted; the rest is given back by
    :func:`give_back_unused` when the turn ends."""
    wanted = turn_budgets(turn)
    quota = key_quota()
    taken: dict[QuotaKind, int] = {}
    try:
        for budget, kind in _QUOTA_KINDS.items():
            if budget in drawn:
                taken[kind] = await quota.take(kind, wanted.limits[budget])
    except BaseException:
        for kind, units in taken.items():
            await quota.give_back(kind, units)
        raise
    return turn_budgets(turn, KeyAllowance(taken.get("searches"), taken.get("fetches")))


async def give_back_unused(budgets: Budgets, drawn: Collection[str]) -> None:
    """Returns to the key's day quota what the turn reserved and did not spend."""
    quota = key_quota()
    cancelled: asyncio.CancelledError | None = None
    for budget, kind in _QUOTA_KINDS.items():
        unused = budgets.left(budget)
        if budget in drawn and unused > 0:
            try:
                await quota.give_back(kind, unused)
            except asyncio.CancelledError as error:  # each kind is still given back
                cancelled = error
    if cancelled is not None:
        raise cancelled
