"""The agent loop: call the model, run the web calls it makes, feed results back, repeat.

The first upstream call happens in :meth:`TurnRunner.start`, before the client is answered,
so its failure is still an HTTP error. Everything after that is reported as events.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, TypeVar

from openai import AsyncStream

from ....seam import await_cleanly, cancel_and_wait
from ..review.answer import reviewed, turn_review
from ..review.input import review_input, round_input
from ..turn.budgets import Budgets
from ..turn.citations import CitationStream
from ..turn.errors import ServerFailure, UpstreamError
from ..turn.events import (
    Event,
    Failed,
    Finished,
    Outcome,
    PageOutcome,
    SearchOutcome,
    StepReasoningDone,
    StopReason,
    Usage,
    WebCallCompleted,
    WebCallStarted,
)
from ..turn.limits import TurnLimits, TurnTimedOut, Waits, within
from ..turn.shape import JSON, Turn
from ..upstream.step import PendingCall, StepState, UpstreamClock, read_step
from ..web_tools.base import ServerTool, SourceRegistry, ToolSetup
from ..web_tools.cache_only import cached_only
from ..web_tools.registry import give_back_unused, reserved_budgets
from ..web_tools.tool import ModelTool
from ..wire.files import read_files
from .body import step_body
from .context import ServerContext
from .conversation import restore_pages, step_messages, with_web_note
from .debug import StopKind, TurnDebug
from .plans import Done, Planned, StepCalls, plan_calls
from .title import TitleTask

__all__ = ["FORCED_ANSWER", "RETRY_ANSWER", "ServerContext", "TurnRunner"]

logger = logging.getLogger("webreach.server")

T = TypeVar("T")

FORCED_ANSWER = (
    "Answer the user's question now from the web search results collected above. Base the "
    "answer on what the results actually say and cite the sources you use with their 【n】 "
    "markers. Do not claim that information is missing when the results contain it, and do "
    "not invent sources that were not returned."
)
RETRY_ANSWER = (
    "Your previous reply was empty. Answer the user now in plain text from the information "
    "above, or say briefly what is missing."
)
_NUDGES = {FORCED_ANSWER: "answer_now", RETRY_ANSWER: "answer_again"}
"""The names debug lines give the instructions that ask for an answer."""
_INTERNAL = "webreach failed while answering; please retry"

_STOP_REASONS: dict[str | None, StopReason] = {
    "length": "max_tokens",
    "content_filter": "refusal",
}


class TurnRunner:
    """Runs one request's rounds of model steps and web calls."""

    def __init__(
        self, turn: Turn, context: ServerContext, limits: TurnLimits | None = None
    ) -> None:
        self.turn = turn
        self.context = context
        self.limits = limits or TurnLimits()
        self._steps = 0
        """Upstream calls of the loop so far (the title and reviews are asks of their own)."""
        self.usage = Usage()
        self._clock = UpstreamClock()
        self.web_seconds = 0.0
        self._sources = SourceRegistry()
        self._citations = CitationStream(
            self._sources.lookup, markdown=turn.citations == "markdown"
        )
        self._messages = list(turn.messages)
        self._client_tools = {tool.name: tool for tool in turn.client_tools}
        self._review = turn_review(turn, context.reviewer, context.upstream, self.usage)
        self._streamed = {
            name: tool
            for name, tool in self._client_tools.items()
            if tool.kind == "function" and self._review is None
        }
        """The client functions whose arguments the client sees as they arrive: not under a
        content review, which reads a call's arguments whole before they go out."""
        client_names = frozenset(self._client_tools)
        lent = cached_only(context, turn.web.live)
        setup = ToolSetup(turn, lent, self._sources, self._review, client_names)
        self._tools: list[ServerTool] = []
        if not turn.tools_off:
            self._tools = [tool for offer in context.tools if (tool := offer(setup)) is not None]
        self._first: AsyncStream[Any] | None = None
        self._real_searches = 0
        web = [model.name for tool in self._tools for model in tool.models]
        self._debug = TurnDebug.of(turn, web, self.limits.max_steps)
        self._title: TitleTask | None = None
        self._withheld = False
        """The step being made offers web tools and so not the answer's format."""

    def _body(self, *, tools: bool, nudge: str | None = None, first: bool = False) -> JSON:
        own = [model for tool in self._tools for model in tool.models]
        forced = self._forced() if first and tools else None
        self._withheld = self.turn.answer_format is not None and tools and bool(own)
        upstream = self.context.upstream
        return step_body(
            self.turn,
            upstream,
            self._messages,
            own,
            tools=tools,
            nudge=nudge,
            forced=forced,
            first=first,
        )

    @property
    def upstream_seconds(self) -> float:
        return self._clock.seconds

    async def start(self) -> None:
        """Review the user's input (under ``safety_check``), then make the first upstream call;
        a refused input, an ``UpstreamError`` (or the turn's deadline) here becomes an HTTP
        error."""
        try:
            async with within(self.limits):
                await self._start()
        except ServerFailure as failure:
            timed_out = isinstance(failure, TurnTimedOut)
            self._stopped("deadline" if timed_out else "error", failure.message)
            raise

    async def _start(self) -> None:
        self._messages = await read_files(self._messages, self.context.runtime)
        if self._review is not None:
            said = round_input(self._messages, continued=self.turn.continued)
            await review_input(said, self._review)
        self._messages = await restore_pages(self._messages, self.turn.pages, self.context)
        self._messages = with_web_note(self._messages, self.turn.web.search)
        if self.turn.extensions.title:
            self._title = TitleTask(self.context.upstream, self.turn)
        self._steps += 1
        body = self._body(tools=True, first=True)
        if self._debug is not None:
            self._debug.step(self._steps, body, None, None)
        self._first = await self._clock.timed(self.context.upstream.stream_chat(body))

    def _forced(self) -> ModelTool | None:
        """The tool the first step must call: the search (deep search included) or the link
        reader the client forced, when it is offered at all."""
        forced = self.turn.forced_web
        if forced is None:
            return None
        return next((tool.models[0] for tool in self._tools if tool.forced_as == forced), None)

    async def aclose(self) -> None:
        """Close the first upstream stream if the loop never took it (a client that left)."""
        stream, self._first = self._first, None
        if stream is not None:
            await await_cleanly(stream.close())
        title, self._title = self._title, None
        if title is not None:
            await title.aclose()

    async def events(self) -> AsyncIterator[Event]:
        """The turn's events. A failure becomes a ``Failed`` event when streaming (the status
        line is already sent); without streaming nothing was sent yet, so it is raised as a
        :class:`ServerFailure` and answered with an HTTP error. The turn's deadline bounds each
        wait for the next event, never the client's reading of one."""
        rounds = self._rounds()
        shown = rounds if self._review is None else reviewed(rounds, self._review, self.usage)
        titled = self._with_title(shown)
        waits = Waits(self.limits)
        try:
            while (event := await waits.next(titled)) is not None:
                yield event
        except TurnTimedOut as timed_out:
            self._stopped("deadline", timed_out.message)
            if not self.turn.stream:
                raise
            yield Failed(timed_out.message, self.usage, timed_out.status)
        except UpstreamError as error:
            self._stopped("error", error.message)
            if not self.turn.stream:
                raise
            yield Failed(error.message, self.usage)
        except Exception as error:
            self._stopped("error", f"webreach failed ({type(error).__name__})")
            logger.exception("the request failed inside the loop")
            if not self.turn.stream:
                raise ServerFailure(500, _INTERNAL) from None
            yield Failed(_INTERNAL, self.usage)
        finally:
            self._stopped("client_left", "the client left before the end")
            waits.close()
            await titled.aclose()
            close = getattr(shown, "aclose", None)
            if close is not None:
                await close()
            title, self._title = self._title, None
            if title is not None:
                await title.aclose()

    def _stopped(self, kind: StopKind, detail: str) -> None:
        if self._debug is not None:
            self._debug.stop(kind, self._steps, detail)

    async def _with_title(self, shown: AsyncIterator[Event]) -> AsyncGenerator[Event]:
        async for event in shown:
            if isinstance(event, Finished) and self._title is not None:
                event = await self._titled(event)
            yield event

    async def _titled(self, finished: Finished) -> Finished:
        """The ending with the conversation title, once written (or given up on)."""
        task, self._title = self._title, None
        if task is None:
            return finished
        title = await task.result()
        self.usage.add(task.usage)
        return Finished(finished.stop_reason, self.usage, title)

    def _nudge(self, budgets: Budgets) -> str | None:
        if budgets.forced and budgets.retried:
            return RETRY_ANSWER
        if budgets.forced and self._real_searches:
            return FORCED_ANSWER
        return None

    async def _rounds(self) -> AsyncGenerator[Event]:
        """Model steps until an answer. Withdrawing the tools does not stop a model writing
        calls, so the step cap does: the last step allowed is made without tools, and calls
        the server would have to answer after it end the turn with an error.

        The key's day quota is reserved first and what the turn did not use given back at its
        end, whatever the end (an answer, a failure, a client that left)."""
        drawn = {tool.budget for tool in self._tools}
        budgets = await reserved_budgets(self.turn, drawn)
        steps = self._steps_within(budgets)
        try:
            async for event in steps:
                yield event
        finally:
            try:
                await give_back_unused(budgets, drawn)
            finally:
                await steps.aclose()

    async def _steps_within(self, budgets: Budgets) -> AsyncGenerator[Event]:
        stream, self._first = self._first, None
        first = True
        while True:
            if stream is None:
                stream = await self._next_step(budgets)
            state = StepState()
            withheld = self._withheld
            step_events = read_step(
                stream,
                state,
                self._citations,
                self.usage,
                self._clock,
                first=first,
                shown=not withheld,
                streamed=self._streamed,
            )
            async for event in step_events:
                yield event
            stream, first = None, False
            calls = [state.calls[i] for i in sorted(state.calls)]
            for call in calls:
                call.id = call.id or f"call_{uuid.uuid4().hex}"
            capped = self._steps >= self.limits.max_steps
            if not calls:
                finished = self._answered(state, budgets, withheld=withheld, capped=capped)
                if finished is None:
                    continue
                yield finished
                return
            kinds = self._sort(calls)
            if capped and len(kinds.client) < len(calls):
                spent = self.limits.steps_spent(self._steps)
                if self._debug is not None:
                    self._debug.calls(self._steps, kinds, budgets)
                    self._debug.stop("step_cap", self._steps, spent)
                raise UpstreamError(502, spent)
            results = {c.id: f"ERROR: there is no tool named {c.name!r}." for c in kinds.unknown}
            async for event in self._web_step(kinds, budgets, results):
                yield event
            if self._debug is not None:
                self._debug.calls(self._steps, kinds, budgets)
                if kinds.client:
                    names = ", ".join(call.name for call in kinds.client)
                    self._debug.stop("client_tool", self._steps, f"the client's tool: {names}")
            if kinds.client:
                for call in kinds.client:
                    yield call.for_client(self._client_tools[call.name])
                yield Finished("tool_use", self.usage)
                return
            self._messages += step_messages(state, calls, results)
            budgets.advance()

    async def _next_step(self, budgets: Budgets) -> AsyncStream[Any]:
        """The next step's request sent: tools withheld once the steps run out or a budget
        forced an answer, with the nudge its budgets call for."""
        if self._steps + 1 >= self.limits.max_steps:
            budgets.forced = True
        nudge = self._nudge(budgets)
        body = self._body(tools=not budgets.forced, nudge=nudge)
        self._steps += 1
        if self._debug is not None:
            told = _NUDGES.get(nudge or "")
            self._debug.step(self._steps, body, budgets, told)
        return await self._clock.timed(self.context.upstream.stream_chat(body))

    def _answered(
        self, state: StepState, budgets: Budgets, *, withheld: bool, capped: bool
    ) -> Finished | None:
        """How a step without calls ends the turn, or ``None`` to ask once more: an answer
        written without the format, or an empty forced answer, while steps remain."""
        if withheld and not capped:
            # An answer written without the format: asked again, with it and no tools.
            budgets.forced = True
            return None
        if budgets.forced and not state.text.strip() and not budgets.retried and not capped:
            budgets.retried = True
            return None
        finish = _STOP_REASONS.get(state.finish_reason, "end_turn")
        if self._debug is not None:
            self._debug.answered(self._steps, finish, budgets)
        return Finished(finish, self.usage)

    def _sort(self, calls: list[PendingCall]) -> StepCalls:
        kinds = StepCalls(
            by_tool=[(tool, _named(calls, tool)) for tool in self._tools],
            client=[c for c in calls if c.name in self._client_tools],
        )
        known = {id(c) for _, named in kinds.by_tool for c in named}
        known.update(id(c) for c in kinds.client)
        kinds.unknown = [c for c in calls if id(c) not in known]
        return kinds

    async def _web_step(
        self, kinds: StepCalls, budgets: Budgets, results: dict[str, str]
    ) -> AsyncIterator[Event]:
        """The step's web calls, each tool's planned against what the tools before it left of
        its budget, then run."""
        if not kinds.web:
            return
        yield StepReasoningDone(budgets.step)
        taken: Counter[str] = Counter()
        planned: list[Planned] = []
        for tool, calls in kinds.by_tool:
            if calls:
                allowed = budgets.left(tool.budget) - taken[tool.budget]
                items = plan_calls(tool, calls, budgets.step, allowed)
                if self._debug is not None:
                    self._debug.plan(items, allowed)
                planned += items
                taken[tool.budget] += len(calls)
        # Spent once started: a client leaving mid-call does not give the call back to the quota.
        budgets.spend(taken)
        async for event in self._run_web(planned, results):
            yield event

    async def _run_web(
        self, planned: list[Planned], results: dict[str, str]
    ) -> AsyncIterator[Event]:
        """Announce every call, then run them concurrently and report each as it ends."""
        for item in planned:
            yield WebCallStarted(item.call)
        started = time.perf_counter()
        tasks = [asyncio.ensure_future(_labelled(item)) for item in planned]
        try:
            for next_done in asyncio.as_completed(tasks):
                item, (outcome, text, billed) = await next_done
                results[item.model_id] = text
                self.usage.bill(item.billing, billed)
                if isinstance(outcome, SearchOutcome):
                    self._real_searches += 1
                await self._keep_page(item.call.id, outcome)
                yield WebCallCompleted(item.call, outcome)
        finally:
            await cancel_and_wait(tasks)
            self.web_seconds += time.perf_counter() - started

    async def _keep_page(self, call_id: str, outcome: Outcome) -> None:
        """A read page, kept by its call id for clients that send the call back without its
        encrypted page."""
        store = self.context.store
        if not (store is not None and self.turn.store and isinstance(outcome, PageOutcome)):
            return
        if outcome.signature:
            await store.save_page(call_id, outcome.signature)


def _named(calls: list[PendingCall], tool: ServerTool) -> list[PendingCall]:
    names = {model.name for model in tool.models}
    return [call for call in calls if call.name in names]


async def _labelled(item: Planned) -> tuple[Planned, Done]:
    return item, await item.work
