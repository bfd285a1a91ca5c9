"""Turning the model's web calls into announced calls and the work that answers them."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TypeVar

from ...tools import ToolError
from .calls.images import parse_image_arguments, run_image_call
from .calls.links import parse_read_arguments, run_read_call
from .calls.pages import OpenedPages, parse_page_arguments, run_find_call, run_open_call
from .calls.search import SourceRegistry, parse_search_arguments, run_search_call
from .calls.tool import call_id
from .context import ServerContext
from .events import (
    Action,
    CallFailed,
    CallKind,
    FindInPageAction,
    OpenPageAction,
    Outcome,
    ReadLinkAction,
    SearchAction,
    WebCall,
)
from .review import ReviewText
from .steps import PendingCall
from .turn import ReadUrlSpec, SearchSpec, Turn

__all__ = ["EXTRA_STEPS", "Done", "Planned", "Planner", "Spend", "StepCalls"]

T = TypeVar("T")

Done = tuple[Outcome, str, int]
"""A finished call: the client-facing outcome, the text for the model, billed units."""


EXTRA_STEPS = 3
"""Model steps allowed beyond the search budget before an answer is forced."""


@dataclass
class Spend:
    """What a turn may spend on web calls, what it has spent, and where it is."""

    budget: int
    read_budget: int
    searches: int = 0
    reads: int = 0
    pages: int = 0
    step: int = 0
    forced: bool = False
    retried: bool = False

    def advance(self, *, searching: bool) -> None:
        """One model step done: force an answer once the budget is spent or steps run long."""
        self.step += 1
        if searching:
            spent = self.searches + self.pages >= self.budget
        else:
            spent = self.reads >= self.read_budget
        if spent or self.step > max(self.budget, 1) + EXTRA_STEPS:
            self.forced = True


@dataclass
class StepCalls:
    """One model step's calls, by who answers them."""

    web: list[PendingCall]
    images: list[PendingCall]
    links: list[PendingCall]
    opened: list[PendingCall]
    client: list[PendingCall]
    unknown: list[PendingCall] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Planned:
    call: WebCall
    model_id: str
    work: Awaitable[Done]


class Planner:
    """Checks each call's arguments and budget, then names the work that runs it."""

    def __init__(
        self,
        turn: Turn,
        context: ServerContext,
        registry: SourceRegistry,
        links: list[str],
        deep: bool,
        review: ReviewText | None = None,
        images: list[str] | None = None,
    ) -> None:
        self.turn = turn
        self.context = context
        self._registry = registry
        self._links = links
        self._deep = deep
        self._review = review
        """Set under ``safety_check``: a read page must pass it before anyone sees it."""
        self._opened = OpenedPages()
        self._images = images or []
        """The images of the user's last message, which ``image_search`` calls name by number."""

    def searches(self, calls: list[PendingCall], step: int, allowed: int) -> list[Planned]:
        spec = self.turn.web.search
        if not calls or spec is None:
            return []
        options = self.context.options
        planned = []
        for index, pending in enumerate(calls):
            queries: tuple[str, ...] = ()
            work: Awaitable[Done]
            try:
                queries = parse_search_arguments(pending.arguments, options)
            except ToolError as error:
                work = ready((CallFailed("invalid_tool_input"), f"ERROR: {error}", 0))
            else:
                if index >= allowed:
                    work = ready(over_budget("search"))
                else:
                    work = run_search_call(
                        queries, spec, self.context.runtime, options, self._registry
                    )
            kind: CallKind = "deep_search" if self._deep else "search"
            call = _call(spec, step, index, kind, SearchAction(queries))
            planned.append(Planned(call, pending.id, work))
        return planned

    def pages(self, calls: list[PendingCall], step: int, allowed: int) -> list[Planned]:
        """``open_page`` / ``find_in_page`` calls of a deep search."""
        spec = self.turn.web.search
        if not calls or spec is None:
            return []
        runtime, max_chars = self.context.runtime, self.context.options.fetch_max_chars
        planned = []
        for index, pending in enumerate(calls):
            finding = pending.name == "find_in_page"
            work: Awaitable[Done]
            url, pattern = argument_url(pending.arguments), ""
            try:
                url, pattern = parse_page_arguments(pending.arguments, pattern=finding)
            except ToolError as error:
                work = ready((CallFailed("invalid_tool_input"), f"ERROR: {error}", 0))
            else:
                if index >= allowed:
                    work = ready(over_budget("search"))
                elif finding:
                    work = run_find_call(url, pattern, self._opened, runtime)
                else:
                    work = run_open_call(url, self._opened, runtime, max_chars)
            action: OpenPageAction | FindInPageAction = (
                FindInPageAction(url, pattern) if finding else OpenPageAction(url)
            )
            call = _call(spec, step, index, "deep_search", action)
            planned.append(Planned(call, pending.id, work))
        return planned

    def images(self, calls: list[PendingCall], step: int, allowed: int) -> list[Planned]:
        spec = self.turn.web.search
        if not calls or spec is None:
            return []
        kind: CallKind = "deep_image_search" if self._deep else "image_search"
        planned = []
        for index, pending in enumerate(calls):
            work: Awaitable[Done]
            try:
                number = parse_image_arguments(pending.arguments, len(self._images))
            except ToolError as error:
                work = ready((CallFailed("invalid_tool_input"), f"ERROR: {error}", 0))
            else:
                if index >= allowed:
                    work = ready(over_budget("search"))
                else:
                    image = self._images[number - 1]
                    runtime, options = self.context.runtime, self.context.options
                    work = run_image_call(image, runtime, options, self._registry)
            call = _call(spec, step, index, kind, SearchAction(()))
            planned.append(Planned(call, pending.id, work))
        return planned

    def reads(self, calls: list[PendingCall], step: int, allowed: int) -> list[Planned]:
        spec = self.turn.web.read_url
        if not calls or spec is None:
            return []
        room = self.context.options.fetch_max_chars // len(calls)
        planned = []
        for index, pending in enumerate(calls):
            url = ""
            work: Awaitable[Done]
            try:
                url = parse_read_arguments(pending.arguments, self._links)
            except ToolError as error:
                failed = CallFailed("invalid_tool_input")
                if error.code == "WEB_BLOCKED_URL":
                    failed = CallFailed("url_not_allowed")
                work = ready((failed, f"ERROR: {error}", 0))
                url = argument_url(pending.arguments)
            else:
                if index >= allowed:
                    work = ready(over_budget("link"))
                else:
                    work = run_read_call(
                        url, spec, self.context.runtime, room, self.context.sealer, self._review
                    )
            call = _call(spec, step, index, "read_link", ReadLinkAction(url))
            planned.append(Planned(call, pending.id, work))
        return planned


_ID_PREFIXES: dict[CallKind, str] = {
    "search": "s",
    "deep_search": "ds",
    "image_search": "is",
    "deep_image_search": "dis",
    "read_link": "rl",
}


def _call(
    spec: SearchSpec | ReadUrlSpec, step: int, index: int, kind: CallKind, action: Action
) -> WebCall:
    """A call as the client sees it: named after the tool it declared."""
    return WebCall(
        id=call_id(_ID_PREFIXES[kind], step),
        step=step,
        index=index,
        kind=kind,
        tool_name=spec.name,
        tool_type=spec.declared_type,
        action=action,
    )


async def ready(value: T) -> T:
    return value


def over_budget(what: str) -> Done:
    return (
        CallFailed("max_uses_exceeded"),
        f"ERROR: the {what} budget of this answer is spent; answer now.",
        0,
    )


def argument_url(raw: str) -> str:
    """The ``url`` a malformed call named, if any, for display."""
    try:
        value = json.loads(raw or "{}").get("url")
    except (ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""
