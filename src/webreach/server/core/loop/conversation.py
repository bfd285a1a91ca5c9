"""The conversation the upstream reads, apart from the loop that drives it: earlier rounds'
pages put back, today's date and the user's location told, each step's calls and results
appended."""

from __future__ import annotations

from datetime import UTC, date, datetime

from ..turn.shape import JSON, PageRef, SearchSpec
from ..upstream.step import PendingCall, StepState
from ..web_tools.links import page_text
from .context import ServerContext

__all__ = ["ends_with_reply", "restore_pages", "step_messages", "with_web_note"]


async def restore_pages(
    messages: list[JSON], pages: list[PageRef], context: ServerContext
) -> list[JSON]:
    """Pages read in earlier rounds, back at the end of the user message of their round: from
    their encrypted signature, or, when the client dropped it, from the store by the call id. An
    altered signature restores nothing."""
    messages = list(messages)
    store = context.store
    for ref in pages:
        page = context.cipher.decrypt(ref.signature) if ref.signature else None
        if ref.signature is None and ref.call_id and store is not None:
            kept = await store.page(ref.call_id)
            page = context.cipher.decrypt(kept) if kept else None
        if page is None or not 0 <= ref.round < len(messages):
            continue
        message = dict(messages[ref.round])
        restored = page_text(page)
        content = message.get("content")
        if isinstance(content, list):
            message["content"] = [*content, {"type": "text", "text": restored}]
        else:
            message["content"] = f"{content or ''}\n\n{restored}".lstrip()
        messages[ref.round] = message
    return messages


def with_web_note(
    messages: list[JSON], search: SearchSpec | None, today: date | None = None
) -> list[JSON]:
    """Today's date (UTC) and the user's rough location, as the client gave it, told to the
    model after the leading system messages when it may search: "the latest" means nothing to
    a model that does not know when now is, and the weather or news near the user needs where."""
    if search is None:
        return messages
    day = today or datetime.now(UTC).date()
    text = (
        f"Today is {day.isoformat()} (UTC). Search results and pages show their publication "
        "dates where known."
    )
    if search.location:
        text += (
            f" The user's approximate location: {search.location}. Use it when a search "
            "depends on where the user is."
        )
    note: JSON = {"role": "system", "content": text}
    lead = next((i for i, m in enumerate(messages) if m.get("role") != "system"), len(messages))
    return [*messages[:lead], note, *messages[lead:]]


def ends_with_reply(messages: list[JSON]) -> bool:
    """The partial reply to continue is still the last message (no call came after it)."""
    last = messages[-1] if messages else {}
    return last.get("role") == "assistant" and not last.get("tool_calls")


def step_messages(
    state: StepState, calls: list[PendingCall], results: dict[str, str]
) -> list[JSON]:
    """A step's assistant message and its tool results, for the next model step."""
    message: JSON = {
        "role": "assistant",
        "content": state.text or None,
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments or "{}"},
            }
            for call in calls
        ],
    }
    if state.reasoning:
        message["reasoning_content"] = state.reasoning
    tools: list[JSON] = [
        {"role": "tool", "tool_call_id": call.id, "content": results[call.id]} for call in calls
    ]
    return [message, *tools]
