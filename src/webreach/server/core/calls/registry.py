"""The server's own web tools, in the order the loop offers, plans and runs their calls, and the
budgets a turn's declarations give them."""

from __future__ import annotations

from ..budgets import Budgets, key_allowance
from ..turn import Turn
from .base import READ_BUDGET, SEARCH_BUDGET, ToolFactory, deep_search
from .images import ImageSearch
from .links import READ_LINKS_LIMIT, ReadLink
from .pages import DEEP_SEARCH_BUDGET, PageTools
from .search import WebSearch

__all__ = ["BUILT_IN_TOOLS", "turn_budgets"]

BUILT_IN_TOOLS: tuple[ToolFactory, ...] = (
    WebSearch.offer,
    ImageSearch.offer,
    PageTools.offer,
    ReadLink.offer,
)
"""Search, image search, a deep search's page tools, then reading the user's links: a step's
calls are announced in this order, and each draws on what the ones before it left."""


def turn_budgets(turn: Turn) -> Budgets:
    """``max_uses`` of the declared search (5 searches, or 20 calls of a deep search) and of
    URL reading (10 links), each at most what the inbound key has left of its day. The search
    budget paces the turn when a search is declared."""
    search, read = turn.web.search, turn.web.read_url
    searches = search.budget if search is not None else 0
    if search is not None and deep_search(turn):
        searches = search.max_uses if search.max_uses else DEEP_SEARCH_BUDGET
    reads = read.max_uses if read is not None and read.max_uses is not None else READ_LINKS_LIMIT
    left = key_allowance()
    limits = {
        SEARCH_BUDGET: searches if left.searches is None else min(searches, left.searches),
        READ_BUDGET: reads if left.fetches is None else min(reads, left.fetches),
    }
    return Budgets(
        limits,
        paced_by=SEARCH_BUDGET if search is not None else READ_BUDGET,
        steps=searches,
    )
