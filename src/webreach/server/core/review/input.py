"""The user's input under ``safety_check``: reviewed before anything is generated.

DeepSeek's API refuses an unsafe input with ``400 Content Exists Risk``, and so does this one.
The review runs before the first upstream call (and before the title is asked for), so a
refused input costs no generation and no search. What is reviewed is what the user wrote for
this round: the user messages after the last assistant message, and a partial reply the client
asks to continue. Earlier rounds were reviewed when they were sent, and every answer is reviewed
anyway, so the cost stays one review per request however long the conversation. Only text is
reviewed.
"""

from __future__ import annotations

from ..turn.errors import ServerFailure, UpstreamError
from ..turn.shape import JSON
from .answer import REVIEW_FAILED
from .reviewers import ReviewText, ReviewUnavailable

__all__ = ["CONTENT_RISK", "InputRefused", "review_input", "round_input"]

CONTENT_RISK = "Content Exists Risk"
"""DeepSeek's message for an input the content review refused."""


class InputRefused(ServerFailure):
    """The user's input did not pass the content review: DeepSeek's 400."""

    def __init__(self) -> None:
        super().__init__(400, CONTENT_RISK)


def round_input(messages: list[JSON], *, continued: bool) -> str:
    """The text the user wrote for this round (system messages and the client's tool results
    are not the user's words: the answer they lead to is reviewed)."""
    end = len(messages)
    if continued and messages and messages[-1].get("role") == "assistant":
        end -= 1
    start = end
    while start > 0 and messages[start - 1].get("role") != "assistant":
        start -= 1
    said = [m for m in messages[start:end] if m.get("role") == "user"]
    said += messages[end:]
    return "\n\n".join(text for m in said if (text := _text_of(m)).strip())


def _text_of(message: JSON) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    texts = (part.get("text") for part in parts if isinstance(part, dict))
    return "\n".join(text for text in texts if isinstance(text, str))


async def review_input(text: str, review: ReviewText) -> None:
    """Raise :class:`InputRefused` for an input that fails; one that cannot be reviewed fails
    the request as an answer that cannot be reviewed does (a 502, never a silent pass)."""
    if not text.strip():
        return
    try:
        passed = await review(text)
    except ReviewUnavailable as error:
        raise UpstreamError(502, f"{REVIEW_FAILED} ({error})") from None
    if not passed:
        raise InputRefused()
