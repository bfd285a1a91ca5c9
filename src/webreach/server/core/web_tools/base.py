"""What a server tool is to the loop: one object per turn behind :class:`ServerTool`.

The registry (``ServerContext.tools``, from ``create_app(tools=...)``) holds a factory per
tool; each turn the loop asks every factory, in order, whether it offers its tool, and from then
on only talks to the protocol: the definitions to give the model, how a call becomes an
:class:`~..turn.events.Action` and the work that answers it, which budget it draws on, which usage
counters it bills. Renderers see only the neutral action and outcome, so a new tool needs no
change outside its own module.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol, TypeVar

from ....seam import WebRuntime
from ....tools import ToolError, ToolOptions
from ..review.reviewers import ReviewText
from ..turn.events import Action, Billing, CallFailed, CallKind, Outcome, WebSource
from ..turn.shape import JSON, ForcedWeb, Turn
from ..upstream.step import PendingCall
from .tool import ModelTool
from .turn_searches import TurnSearches

if TYPE_CHECKING:
    from ..state.page_cipher import PageCipher

__all__ = [
    "FETCH_BILLING",
    "READ_BUDGET",
    "SEARCH_BILLING",
    "SEARCH_BUDGET",
    "Declared",
    "Done",
    "Plan",
    "ServerTool",
    "Slot",
    "SourceRegistry",
    "ToolContext",
    "ToolFactory",
    "ToolSetup",
    "argument_url",
    "deep_search",
    "invalid_input",
    "over_budget",
    "ready",
]

T = TypeVar("T")

Done = tuple[Outcome, str, int]
"""A finished call: the client-facing outcome, the text for the model, billed units."""
Plan = tuple[Action, Awaitable[Done]]
"""A call as the client will see it, and the (not yet started) work that answers it."""

SEARCH_BUDGET = "search"
"""Searches, image searches and deep search's page calls share it (``max_uses``)."""
READ_BUDGET = "read"
"""Links of the user's message read (the URL tool's ``max_uses``)."""
SEARCH_BILLING = Billing("web_search_requests", "tool_search")
FETCH_BILLING = Billing("web_fetch_requests", "tool_fetch")


@dataclass
class SourceRegistry:
    """Numbers every source of a round once, by URL, so 【n】 means the same thing throughout."""

    by_url: dict[str, WebSource] = field(default_factory=dict)
    by_number: dict[int, WebSource] = field(default_factory=dict)

    def add(self, source: WebSource) -> WebSource:
        known = self.by_url.get(source.url)
        if known is not None:
            return known
        numbered = replace(source, number=len(self.by_number) + 1)
        self.by_url[source.url] = numbered
        self.by_number[numbered.number] = numbered
        return numbered

    def lookup(self, number: int) -> WebSource | None:
        return self.by_number.get(number)


def deep_search(turn: Turn) -> bool:
    """Web search declared with thinking on: the model also opens and searches pages."""
    return turn.web.search is not None and not turn.tools_off and turn.thinking


class ToolContext(Protocol):
    """What the running server lends its tools (the server's ``ServerContext`` is one): the
    tools see it through this, so the context that holds the registry is not imported here."""

    @property
    def runtime(self) -> WebRuntime: ...

    @property
    def options(self) -> ToolOptions: ...

    @property
    def cipher(self) -> PageCipher: ...


@dataclass(frozen=True, slots=True)
class ToolSetup:
    """What a tool's factory may look at to decide whether this turn offers it, and what the
    turn's tools share: the numbered sources and the content review."""

    turn: Turn
    context: ToolContext
    sources: SourceRegistry
    review: ReviewText | None = None
    """Set under ``safety_check``: a read page must pass it before anyone sees it."""
    client_names: frozenset[str] = frozenset()
    searches: TurnSearches = field(default_factory=TurnSearches)
    """The turn's searches, so a query the model repeats is answered from its results."""

    @property
    def deep(self) -> bool:
        return deep_search(self.turn)

    @property
    def last_user(self) -> JSON | None:
        """The user's last message, whose links and images the tools may act on."""
        return next((m for m in reversed(self.turn.messages) if m.get("role") == "user"), None)

    def name(self, preferred: str, fallback: str) -> str:
        """The tool's name for the model, unless the client has a tool of that name."""
        return preferred if preferred not in self.client_names else fallback


@dataclass(frozen=True, slots=True)
class Slot:
    """Where a call stands in its step: ``count`` calls of this tool, ``index`` this one's."""

    step: int
    index: int
    count: int
    within_budget: bool


class Declared(Protocol):
    """The web tool the client declared, whose name and type its calls are shown under."""

    @property
    def name(self) -> str: ...

    @property
    def declared_type(self) -> str: ...


class ServerTool(Protocol):
    """A web tool the server runs itself, as offered in one turn (it may keep turn state)."""

    @property
    def models(self) -> Sequence[ModelTool]:
        """The functions the upstream model is given (their names route its calls here)."""

    @property
    def declared(self) -> Declared:
        """The client's declaration its calls are shown under (``tool_name``/``tool_type``)."""

    @property
    def kind(self) -> CallKind:
        """The calls' ``kind`` as clients see it."""

    @property
    def id_prefix(self) -> str:
        """Short tag in the call ids (``srvtoolu_<prefix>_<step>_…``)."""

    @property
    def budget(self) -> str:
        """The budget its calls draw on (``SEARCH_BUDGET``, ``READ_BUDGET``, or one of its
        own, which only the step cap bounds)."""

    @property
    def billing(self) -> Billing:
        """The usage counters a finished call adds to."""

    @property
    def forced_as(self) -> ForcedWeb:
        """The native tool a client's ``tool_choice`` forces that this tool answers, if any."""

    def plan(self, call: PendingCall, slot: Slot) -> Plan:
        """The call's action and its work: an error result for bad arguments, ``over_budget``
        outside the budget. The work must not start before it is awaited."""
        ...


ToolFactory = Callable[[ToolSetup], ServerTool | None]
"""What the registry holds: given the turn, the tool it offers, or None."""


async def ready(value: T) -> T:
    return value


def over_budget(what: str) -> Awaitable[Done]:
    return ready(
        (
            CallFailed("max_uses_exceeded"),
            f"ERROR: the {what} budget of this answer is spent; answer now.",
            0,
        )
    )


def invalid_input(error: ToolError) -> Awaitable[Done]:
    """Arguments the model got wrong: it reads why; nothing is billed."""
    return ready((CallFailed("invalid_tool_input"), f"ERROR: {error}", 0))


def argument_url(raw: str) -> str:
    """The ``url`` a malformed call named, if any, for display."""
    try:
        value = json.loads(raw or "{}").get("url")
    except (ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""
