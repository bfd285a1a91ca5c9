"""The turn's debug lines, which answer "why didn't it search?": what each upstream step was
offered and the ``tool_choice`` sent, the calls the model made and the budget left, and why
the loop stopped.

Made only when the log is at debug (the loop asks once per turn), so a server at ``info`` pays
one ``None`` check per step. Queries and URLs are clipped, URLs lose their query and fragment
(where keys and signatures live); a client tool's arguments and page text are never written.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..turn.budgets import EXTRA_STEPS, Budgets
from ..turn.operator_log import scrub_urls
from ..turn.shape import JSON, Turn
from ..web_tools.base import READ_BUDGET, SEARCH_BUDGET
from .plans import Planned, StepCalls

__all__ = ["StopKind", "TurnDebug", "relayed"]

logger = logging.getLogger("webreach.server")

StopKind = Literal[
    "answer", "budget", "step_cap", "deadline", "client_tool", "error", "client_left"
]
"""Why the loop stopped, as the ``turn_stopped`` line's ``reason``."""

CLIP = 100
"""The most characters of a query, URL or pattern a debug line shows."""
_MAX_SHOWN = 8
"""The most calls (or queries of one call) a line lists; it says how many more there were."""


def clip(text: str) -> str:
    """``text`` on one line, URLs without their query, at most :data:`CLIP` characters."""
    line = " ".join(scrub_urls(text).split())
    return line if len(line) <= CLIP else line[: CLIP - 1] + "…"


def _choice(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"


def _offered(web: Sequence[str], client: Sequence[str]) -> str:
    if not web and not client:
        return "no tools"
    parts = [f"web {_names(web)}"] if web else []
    parts += [f"client's {_names(client)}"] if client else []
    return f"function tools: {'; '.join(parts)}"


def _step_line(step: int, offered: str, why: str | None, choice: str | None) -> str:
    if why is not None:
        offered += f"; no web tool: {why}"
    shown = " not sent" if choice is None else f"={choice}"
    return f"step {step} to the upstream: {offered}; tool_choice{shown}"


def relayed(body: JSON) -> None:
    """The debug line of a Chat request with no web tool, which goes to the upstream as sent
    (no loop, so no step or stop lines follow)."""
    if not logger.isEnabledFor(logging.DEBUG):
        return
    tools = body.get("tools")
    client = [
        clip(str(tool["function"].get("name", "")))
        for tool in (tools if isinstance(tools, list) else [])
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict)
    ]
    why = "no web tool declared"
    choice = _choice(body.get("tool_choice"))
    message = _step_line(1, "relayed as sent, " + _offered([], client), why, choice)
    fields = {
        "step": 1,
        "web_tools": [],
        "client_tools": client,
        "no_web_tools": why,
        "tool_choice": choice,
        "nudge": None,
    }
    logger.debug("%s", message, extra={"event": "turn_step", "fields": fields})


@dataclass
class TurnDebug:
    """One turn's debug lines; :meth:`of` gives None when the log is not at debug."""

    turn: Turn
    web: list[str]
    """The function names of the server's web tools this turn offers (empty: none)."""
    max_steps: int
    planned: list[tuple[Planned, bool]] = field(default_factory=list)
    """This step's web calls as planned, and whether each was within its budget."""
    stopped: bool = False

    @classmethod
    def of(cls, turn: Turn, web: list[str], max_steps: int) -> TurnDebug | None:
        if not logger.isEnabledFor(logging.DEBUG):
            return None
        return cls(turn, web, max_steps)

    def _log(self, event: str, message: str, fields: dict[str, Any]) -> None:
        logger.debug("%s", message, extra={"event": event, "fields": fields})

    def step(self, step: int, body: JSON, budgets: Budgets | None, nudge: str | None) -> None:
        """What upstream call ``step`` was given: the function tools (web and the client's),
        or why no web tool, and ``tool_choice`` as sent."""
        sent = "tools" in body
        client = [tool.name for tool in self.turn.client_tools] if sent else []
        web = self.web if sent else []
        forced = budgets if budgets is not None and budgets.forced else None
        why = None if web else self._why_no_web(step, forced)
        choice = _choice(body.get("tool_choice"))
        message = _step_line(step, _offered(web, client), why, choice)
        if nudge is not None:
            message += f"; told to {nudge.replace('_', ' ')}"
        fields = {
            "step": step,
            "web_tools": web,
            "client_tools": client,
            "no_web_tools": why,
            "tool_choice": choice,
            "nudge": nudge,
        }
        self._log("turn_step", message, fields)

    def _why_no_web(self, step: int, forced: Budgets | None) -> str:
        turn = self.turn
        if forced is not None:
            return f"answer-only step ({self._forced_by(step, forced)})"
        if turn.tools_off:
            return "tool_choice none turns the web tools off"
        if not turn.web.any:
            return "no web tool declared"
        if turn.web.search is None:
            return "the declared URL reader has no link in the user's last message to read"
        return "none of the declared web tools applies"

    def _forced_by(self, step: int, budgets: Budgets) -> str:
        if step >= self.max_steps:
            return f"the last of WEBREACH_MAX_STEPS={self.max_steps} upstream calls"
        paced = budgets.paced_by
        if budgets.left(paced) <= 0:
            limit = budgets.limits.get(paced, 0)
            return f"the {paced} budget is spent: {limit} of {limit}"
        limit = max(budgets.steps, 1) + EXTRA_STEPS
        return f"{budgets.step} steps, past the {limit} the search budget allows"

    def plan(self, items: list[Planned], allowed: int) -> None:
        self.planned += [(item, index < allowed) for index, item in enumerate(items)]

    def calls(self, step: int, kinds: StepCalls, budgets: Budgets) -> None:
        """The step's calls (web ones with their queries or URL) and the budget left."""
        shown: list[dict[str, Any]] = []
        for item, within in self.planned:
            action = item.call.action
            call: dict[str, Any] = {"call": item.call.kind}
            if action.queries:
                queries = action.queries[:_MAX_SHOWN]
                call["queries"] = [clip(query) for query in queries]
            if action.url:
                call["url"] = clip(action.url)
            if action.pattern:
                call["pattern"] = clip(action.pattern)
            if not within:
                call["over_budget"] = True
            shown.append(call)
        self.planned = []
        shown += [{"call": clip(c.name), "to": "client"} for c in kinds.client]
        shown += [{"call": clip(c.name), "to": "unknown"} for c in kinds.unknown]
        searches = max(budgets.left(SEARCH_BUDGET), 0)
        reads = max(budgets.left(READ_BUDGET), 0)
        listed = "; ".join(_call_text(call) for call in shown[:_MAX_SHOWN])
        if len(shown) > _MAX_SHOWN:
            listed += f"; and {len(shown) - _MAX_SHOWN} more"
        message = f"step {step} calls: {listed}; left: {searches} searches, {reads} reads"
        fields = {
            "step": step,
            "calls": shown,
            "searches_left": searches,
            "reads_left": reads,
        }
        self._log("turn_calls", message, fields)

    def stop(self, kind: StopKind, steps: int, detail: str) -> None:
        """Why the loop ended; only the first reason given counts."""
        if self.stopped:
            return
        self.stopped = True
        message = f"turn stopped after {steps} step{'s' * (steps != 1)}: {detail}"
        self._log("turn_stopped", message, {"reason": kind, "steps": steps})

    def answered(self, steps: int, finish: str, budgets: Budgets) -> None:
        """The model wrote its answer: freely, or on a step that offered no tools."""
        said = f"answer written ({finish})"
        if not budgets.forced:
            self.stop("answer", steps, said)
        elif steps >= self.max_steps:
            self.stop("step_cap", steps, f"{said} on the last step WEBREACH_MAX_STEPS allows")
        else:
            self.stop("budget", steps, f"{said} once {self._forced_by(steps, budgets)}")


def _call_text(call: dict[str, Any]) -> str:
    text = str(call["call"])
    if "queries" in call:
        text += " " + json.dumps(call["queries"], ensure_ascii=False)
    if "url" in call:
        text += f" {call['url']}"
    if "pattern" in call:
        text += f" find {json.dumps(call['pattern'], ensure_ascii=False)}"
    if call.get("over_budget"):
        text += " (over budget)"
    if call.get("to") == "client":
        text += " (the client's tool)"
    elif call.get("to") == "unknown":
        text += " (no such tool)"
    return text
