"""A conversation title, asked of the upstream beside the turn so the answer is not delayed.

The title is a small completion of its own, started with the turn; it is awaited only when the
answer is done, for at most :data:`TITLE_GRACE` seconds more. A failed or late title is simply
absent: the answer never suffers for it.
"""

from __future__ import annotations

import asyncio
import logging

from ....seam import cancel_and_wait
from ..turn.events import Usage
from ..turn.shape import JSON, Turn
from ..upstream.client import Upstream, thinking_params

__all__ = ["TITLE_ASK", "TITLE_GRACE", "TitleTask"]

logger = logging.getLogger("webreach.server")

TITLE_GRACE = 5.0
"""Seconds a finished answer waits for a title still being written."""
_MAX_TITLE = 80
_MAX_QUOTED = 2000
TITLE_ASK = (
    "Write a short title, at most eight words, for the conversation below, in its language. "
    "Answer with the title only: no quotes, no trailing punctuation."
)
"""The system message of the title's completion (scripted upstreams in tests tell it apart)."""


def _text_of(message: JSON) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(
        str(part.get("text", "")) for part in parts if isinstance(part, dict) and "text" in part
    )


def title_request(turn: Turn, dialect: str) -> JSON:
    """The completion that writes the title: the first and the latest user message."""
    said = [_text_of(m) for m in turn.messages if m.get("role") == "user"]
    said = [text.strip()[:_MAX_QUOTED] for text in said if text.strip()]
    quoted = said[:1] + said[-1:] if len(said) > 1 else said
    body: JSON = {
        "model": turn.model,
        "messages": [
            {"role": "system", "content": TITLE_ASK},
            {"role": "user", "content": "\n\n---\n\n".join(quoted) or "(empty)"},
        ],
        "max_tokens": 100,
    }
    body.update(thinking_params(dialect, thinking=False, effort=None, off=True))
    return body


def clean_title(content: str | None) -> str | None:
    """The first line of the model's answer, without quotes; None when there is none."""
    if content is None:
        return None
    line = next((line for line in content.strip().splitlines() if line.strip()), "")
    title = line.strip().strip("\"'“”‘’「」*#").strip().rstrip(".。")
    return title[:_MAX_TITLE] or None


class TitleTask:
    """The title being written; :meth:`result` is its text or None, never an exception."""

    def __init__(self, upstream: Upstream, turn: Turn) -> None:
        self.usage = Usage()
        self._task = asyncio.ensure_future(
            self._write(upstream, title_request(turn, upstream.dialect))
        )

    async def _write(self, upstream: Upstream, body: JSON) -> str | None:
        answer = await upstream.complete_chat(body)
        self.usage = answer.usage
        return clean_title(answer.text)

    async def result(self, grace: float = TITLE_GRACE) -> str | None:
        done, _ = await asyncio.wait({self._task}, timeout=grace)
        if not done:
            logger.warning("the conversation title took longer than %.0f s; sent without it", grace)
            await self.aclose()
            return None
        try:
            return self._task.result()
        except Exception as error:
            logger.warning("the conversation title failed: %s", error)
            return None

    async def aclose(self) -> None:
        await cancel_and_wait([self._task])
