"""Turning the model's web calls into announced calls and the work that answers them."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass, field

from ..turn.events import Billing, WebCall
from ..upstream.step import PendingCall
from ..web_tools.base import Done, ServerTool, Slot
from ..web_tools.tool import call_id

__all__ = ["Done", "Planned", "StepCalls", "plan_calls"]


@dataclass
class StepCalls:
    """One model step's calls, by who answers them: each offered tool (in the registry's
    order), the client, or nobody."""

    by_tool: list[tuple[ServerTool, list[PendingCall]]]
    client: list[PendingCall]
    unknown: list[PendingCall] = field(default_factory=list)

    @property
    def web(self) -> bool:
        return any(calls for _, calls in self.by_tool)


@dataclass(frozen=True, slots=True)
class Planned:
    call: WebCall
    model_id: str
    work: Awaitable[Done]
    billing: Billing


def plan_calls(
    tool: ServerTool, calls: list[PendingCall], step: int, allowed: int
) -> list[Planned]:
    """One tool's calls of a step, the first ``allowed`` of them within its budget, each shown
    under the web tool the client declared."""
    planned = []
    for index, pending in enumerate(calls):
        action, work = tool.plan(pending, Slot(step, index, len(calls), index < allowed))
        call = WebCall(
            id=call_id(tool.id_prefix, step),
            step=step,
            index=index,
            kind=tool.kind,
            tool_name=tool.declared.name,
            tool_type=tool.declared.declared_type,
            action=action,
        )
        planned.append(Planned(call, pending.id, work, tool.billing))
    return planned
