"""Loop events → Anthropic Messages content blocks, as SSE frames or as one message body.

One assembler serves both outputs so a stream and a body of the same events always agree. The
shapes follow the hosted web tools documentation with the Anthropic SDK's own types in mind:
a strict client validates every frame, so required fields are never left out.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from ..core.codec import sse_frame
from ..core.events import (
    CallFailed,
    ClientToolCall,
    Event,
    Failed,
    FindInPageAction,
    Finished,
    PageOutcome,
    ReadLinkAction,
    ReasoningDelta,
    SearchAction,
    SearchOutcome,
    StepReasoningDone,
    TextCitation,
    TextDelta,
    Usage,
    WebCall,
    WebCallCompleted,
    WebCallStarted,
)
from ..core.turn import Turn

__all__ = ["MessageAssembler", "render_body", "render_stream"]

_SEARCH_ERROR_CODES = frozenset({"invalid_tool_input", "unavailable", "max_uses_exceeded"})
_UNFINISHED = "The response ended before the model finished. Please retry."
_INTERNAL = "The server failed while generating the response. Please retry."


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _opaque(url: str) -> str:
    """A non-empty ``encrypted_content``: strict clients require one, nothing reads it back."""
    return base64.urlsafe_b64encode(url.encode()).decode().rstrip("=") or "AA"


def _call_input(call: WebCall) -> dict[str, Any]:
    action = call.action
    if isinstance(action, SearchAction):
        queries = list(action.queries)
        if queries:
            return {"action": "search", "queries": queries, "query": queries[0]}
        return {"action": "search", "queries": queries}
    if isinstance(action, FindInPageAction):
        return {"action": "find_in_page", "url": action.url, "pattern": action.pattern}
    kind = "read_link" if isinstance(action, ReadLinkAction) else "open_page"
    return {"action": kind, "url": action.url}


def _search_content(outcome: SearchOutcome | PageOutcome | CallFailed) -> Any:
    if isinstance(outcome, SearchOutcome):
        return [
            {
                "type": "web_search_result",
                "title": source.title or "",
                "url": source.url,
                "encrypted_content": _opaque(source.url),
                "page_age": source.published_at,
                "snippet": source.snippet,
                "site_name": source.site_name,
            }
            for source in outcome.sources
        ]
    code = outcome.error_code if isinstance(outcome, CallFailed) else "unavailable"
    if code not in _SEARCH_ERROR_CODES:
        code = "unavailable"
    return {"type": "web_search_tool_result_error", "error_code": code}


def _result_block(
    call: WebCall, outcome: SearchOutcome | PageOutcome | CallFailed
) -> dict[str, Any]:
    if isinstance(call.action, SearchAction):
        return {
            "type": "web_search_tool_result",
            "tool_use_id": call.id,
            "content": _search_content(outcome),
            "kind": call.kind,
        }
    block: dict[str, Any] = {"type": "web_fetch_tool_result", "tool_use_id": call.id}
    if isinstance(outcome, PageOutcome):
        block["content"] = {
            "type": "web_fetch_result",
            "url": outcome.url,
            "content": {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": ""},
                "title": outcome.title,
            },
            "published_at": outcome.published_at,
        }
    else:
        code = outcome.error_code if isinstance(outcome, CallFailed) else "unavailable"
        block["content"] = {"type": "web_fetch_tool_result_error", "error_code": code}
    block["kind"] = call.kind
    if isinstance(outcome, PageOutcome) and outcome.signature:
        block["signature"] = outcome.signature
    return block


def _tool_input(arguments: str) -> tuple[dict[str, Any], str]:
    """The call's input and the JSON to stream; arguments that are not an object become ``{}``."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value, arguments if value else ""
    return {}, ""


def usage_json(usage: Usage, turn: Turn) -> dict[str, Any]:
    """Anthropic usage: ``input_tokens`` excludes what the upstream served from its cache."""
    out: dict[str, Any] = {
        "input_tokens": max(usage.input_tokens - usage.cached_tokens, 0),
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cached_tokens,
        "cache_creation_input_tokens": 0,
    }
    if turn.thinking:
        out["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
    if turn.web.any or usage.has_server_tools:
        out["server_tool_use"] = {
            "web_search_requests": usage.web_search_requests,
            "web_fetch_requests": usage.web_fetch_requests,
            "tool_search": usage.tool_search,
            "tool_fetch": usage.tool_fetch,
            "tool_image_search": usage.tool_image_search,
        }
    return out


class MessageAssembler:
    """Assigns block indexes, keeps the blocks, and (when streaming) queues their SSE frames.

    Text and thinking blocks stay open while their deltas arrive; anything else closes them. A
    text block that has a citation is closed for text: the next text opens a new block.
    """

    def __init__(self, turn: Turn, *, streaming: bool) -> None:
        self.turn = turn
        self.streaming = streaming
        self.id = f"msg_{uuid.uuid4().hex}"
        self.blocks: list[dict[str, Any]] = []
        self.finished: Finished | None = None
        self.failed: Failed | None = None
        self._frames: list[str] = []
        self._open: dict[str, Any] | None = None
        self._parts: list[str] = []
        self._cited = False
        self._cited_urls: set[str] = set()
        self._step_spoke = False

    @property
    def done(self) -> bool:
        return self.finished is not None or self.failed is not None

    def take(self) -> str:
        """The frames queued since the last call, joined."""
        out = "".join(self._frames)
        self._frames.clear()
        return out

    def start_frame(self) -> str:
        message: dict[str, Any] = {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.turn.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 0,
                "output_tokens": 0,
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            },
        }
        return sse_frame(_dumps({"type": "message_start", "message": message}), "message_start")

    def feed(self, event: Event) -> None:
        if self.done:
            return
        if isinstance(event, TextDelta):
            self._text(event.text)
        elif isinstance(event, ReasoningDelta):
            self._reasoning(event.text)
        elif isinstance(event, TextCitation):
            self._citation(event)
        elif isinstance(event, StepReasoningDone):
            self._step_done()
        elif isinstance(event, WebCallStarted):
            block = {
                "type": "server_tool_use",
                "id": event.call.id,
                "name": event.call.tool_name,
                "input": _call_input(event.call),
                "caller": {"type": "direct"},
                "kind": event.call.kind,
            }
            self._whole(block)
        elif isinstance(event, WebCallCompleted):
            self._whole(_result_block(event.call, event.outcome))
        elif isinstance(event, ClientToolCall):
            self._tool_use(event)
        elif isinstance(event, Finished):
            self._close()
            self.finished = event
            self._emit("message_delta", self.delta_payload(event))
            self._emit("message_stop", {"type": "message_stop"})
        else:
            self.fail(event)

    def fail(self, event: Failed) -> None:
        self._close()
        self.failed = event
        self._emit("error", self.error_payload(event))

    def delta_payload(self, event: Finished) -> dict[str, Any]:
        return {
            "type": "message_delta",
            "delta": {"stop_reason": event.stop_reason, "stop_sequence": None},
            "usage": usage_json(event.usage, self.turn),
        }

    def error_payload(self, event: Failed) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {"type": "api_error", "message": event.message},
            "usage": usage_json(event.usage, self.turn),
        }

    def message(self) -> dict[str, Any]:
        """The final message body (after ``Finished``)."""
        assert self.finished is not None
        return {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.turn.model,
            "content": self.blocks,
            "stop_reason": self.finished.stop_reason,
            "stop_sequence": None,
            "usage": usage_json(self.finished.usage, self.turn),
        }

    # --- blocks ------------------------------------------------------------------------------

    def _emit(self, name: str, payload: dict[str, Any]) -> None:
        if self.streaming:
            self._frames.append(sse_frame(_dumps(payload), name))

    def _begin(self, block: dict[str, Any]) -> int:
        index = len(self.blocks)
        self.blocks.append(block)
        self._emit(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": block},
        )
        return index

    def _stop(self, index: int) -> None:
        self._emit("content_block_stop", {"type": "content_block_stop", "index": index})

    def _whole(self, block: dict[str, Any]) -> None:
        """A block whose content arrives all at once in ``content_block_start``."""
        self._close()
        self._stop(self._begin(block))

    def _delta(self, kind: str, field: str, text: str) -> None:
        if self.streaming:
            self._frames.append(
                'event: content_block_delta\ndata: {"type":"content_block_delta","index":'
                f'{len(self.blocks) - 1},"delta":{{"type":"{kind}","{field}":{_dumps(text)}}}}}\n\n'
            )

    def _text(self, text: str) -> None:
        if not text:
            return
        if self._open is None or self._open["type"] != "text" or self._cited:
            self._close()
            self._open = {"type": "text", "text": ""}
            self._begin(self._open)
        self._step_spoke = True
        self._parts.append(text)
        self._delta("text_delta", "text", text)

    def _reasoning(self, text: str) -> None:
        if not text:
            return
        if self._open is None or self._open["type"] != "thinking":
            self._close()
            self._open = {"type": "thinking", "thinking": "", "signature": ""}
            self._begin(self._open)
        self._step_spoke = True
        self._parts.append(text)
        self._delta("thinking_delta", "thinking", text)

    def _citation(self, event: TextCitation) -> None:
        block = self._open
        if block is None or block["type"] != "text" or event.url in self._cited_urls:
            return
        self._cited = True
        self._cited_urls.add(event.url)
        citation = {
            "type": "web_search_result_location",
            "url": event.url,
            "title": event.title,
            "cited_text": "".join(self._parts),
            "encrypted_index": "",
        }
        block.setdefault("citations", []).append(citation)
        delta = {"type": "citations_delta", "citation": citation}
        self._emit(
            "content_block_delta",
            {"type": "content_block_delta", "index": len(self.blocks) - 1, "delta": delta},
        )

    def _step_done(self) -> None:
        if self._open is not None and self._open["type"] == "thinking":
            self._close()
        elif self.turn.thinking and not self._step_spoke:
            self._close()
            self._open = {"type": "thinking", "thinking": "", "signature": ""}
            self._begin(self._open)
            self._close()
        self._step_spoke = False

    def _tool_use(self, event: ClientToolCall) -> None:
        self._close()
        arguments, partial = _tool_input(event.arguments)
        index = self._begin({"type": "tool_use", "id": event.id, "name": event.name, "input": {}})
        if partial:
            delta = {"type": "input_json_delta", "partial_json": partial}
            self._emit(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        self.blocks[index] = {
            "type": "tool_use",
            "id": event.id,
            "name": event.name,
            "input": arguments,
        }
        self._stop(index)

    def _close(self) -> None:
        block = self._open
        if block is None:
            return
        index = len(self.blocks) - 1
        if block["type"] == "thinking":
            block["thinking"] = "".join(self._parts)
            self._emit(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": ""},
                },
            )
        else:
            block["text"] = "".join(self._parts)
        self._stop(index)
        self._open = None
        self._parts = []
        self._cited = False
        self._cited_urls = set()


async def render_stream(turn: Turn, events: AsyncIterator[Event]) -> AsyncIterator[str]:
    """SSE frames: ``message_start`` at once, then each event's frames as it arrives."""
    assembler = MessageAssembler(turn, streaming=True)
    yield assembler.start_frame()
    try:
        async for event in events:
            assembler.feed(event)
            frames = assembler.take()
            if frames:
                yield frames
    except Exception:
        # A cut stream would look finished to the SDK's helper; say it failed, then let it raise.
        if not assembler.done:
            assembler.fail(Failed(_INTERNAL))
            yield assembler.take()
        raise
    if not assembler.done:
        assembler.fail(Failed(_UNFINISHED))
        yield assembler.take()


async def render_body(turn: Turn, events: AsyncIterator[Event]) -> dict[str, Any]:
    """One message JSON, or the error body (with usage) when the loop failed midway."""
    assembler = MessageAssembler(turn, streaming=False)
    async for event in events:
        assembler.feed(event)
    if assembler.failed is not None:
        return assembler.error_payload(assembler.failed)
    if assembler.finished is None:
        return assembler.error_payload(Failed(_UNFINISHED))
    return assembler.message()
