"""The answer under ``safety_check``: nothing the model wrote reaches the client unreviewed.

Thinking and text are held back and reviewed whenever something else is about to be sent (a
step's calls, a client tool call with its arguments, the end), then let through in their place,
so the stream keeps its order. A text that fails ends the turn as a refusal: what was already let
through stays, the rest is never sent. A review that cannot be made fails the turn.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing

from ..turn.errors import UpstreamError
from ..turn.events import (
    ClientToolCall,
    Event,
    Failed,
    Finished,
    FirstStepUsage,
    ReasoningDelta,
    TextCitation,
    TextDelta,
    Usage,
)
from ..turn.shape import Turn
from ..upstream.client import Upstream
from .reviewers import ModelReviewer, Reviewer, ReviewText, ReviewUnavailable, TurnReview

__all__ = ["REVIEW_FAILED", "reviewed", "turn_review"]

REVIEW_FAILED = "the content review could not be completed; retry the request"
_HELD = (ReasoningDelta, TextDelta, TextCitation)


async def reviewed(
    events: AsyncGenerator[Event], review: ReviewText, usage: Usage
) -> AsyncIterator[Event]:
    held: list[Event] = []
    async with aclosing(events):
        async for event in events:
            if isinstance(event, _HELD):
                held.append(event)
                continue
            if isinstance(event, FirstStepUsage):
                yield event  # not the model's words: it need not wait for their review
                continue
            written = _written(held, event)
            if written and not isinstance(event, Failed):
                if not await _passes(written, review):
                    yield Finished("refusal", usage)
                    return
                for waiting in held:
                    yield waiting
            held.clear()
            yield event


def turn_review(
    turn: Turn, reviewer: Reviewer | None, upstream: Upstream, usage: Usage
) -> TurnReview | None:
    """The request's reviews when it asked for ``safety_check`` (the upstream model reviews
    when no moderation endpoint is configured)."""
    level = turn.extensions.safety
    if level is None:
        return None
    return TurnReview(reviewer or ModelReviewer(upstream), level, turn.model, usage)


def _written(held: list[Event], event: Event) -> str:
    """What the model wrote that is about to go out: held thinking and text, and the arguments
    of a call of the client's own tools (which the client will act on)."""
    text = "".join(e.text for e in held if isinstance(e, ReasoningDelta | TextDelta))
    if isinstance(event, ClientToolCall):
        text = f"{text}\n{event.arguments}" if text else event.arguments
    return text if text.strip() else ""


async def _passes(text: str, review: ReviewText) -> bool:
    try:
        return await review(text)
    except ReviewUnavailable as error:
        raise UpstreamError(502, f"{REVIEW_FAILED} ({error})") from None
