"""Loop events → Anthropic Messages content blocks, as SSE frames or as one message body.

One renderer serves both outputs so a stream and a body of the same events always agree.
"""

from __future__ import annotations

import uuid
from typing import assert_never

from ..core.turn import events
from ..core.turn.shape import JSON, Turn
from ..core.wire.framing import dumps, error_type, sse_frame
from .shapes import call_input, result_block, tool_input, usage_json

__all__ = ["OWN_ERROR_TYPES", "MessageRenderer"]

OWN_ERROR_TYPES = {413: "request_too_large", 504: "timeout_error", 529: "overloaded_error"}
"""Error types Anthropic names itself, beyond the ones the three protocols share."""


class MessageRenderer:
    """Assigns block indexes, keeps the blocks, and (when streaming) queues their SSE frames.

    Text and thinking blocks stay open while their deltas arrive; anything else closes them. A
    text block that has a citation is closed for text: the next text opens a new block.

    ``message_start`` carries the first model step's usage, as DeepSeek's does, so it
    waits (a keep-alive comment goes at once, more follow) for whichever comes first: that
    usage, or the first event that must be sent. Upstreams report usage with their last
    chunk, so a step that starts writing at once opens with zeros, unless the upstream
    reported its input early; the final usage is always ``message_delta``'s.
    """

    def __init__(self, turn: Turn, *, streaming: bool) -> None:
        self.turn = turn
        self.streaming = streaming
        self.id = f"msg_{uuid.uuid4().hex}"
        self.blocks: list[JSON] = []
        self.finished: events.Finished | None = None
        self.failed: events.Failed | None = None
        self._frames: list[str] = []
        self._open: JSON | None = None
        self._told: dict[str, tuple[int, str]] = {}
        """The client's calls whose input is streaming in: block index and JSON sent, by id."""
        self._parts: list[str] = []
        self._cited = False
        self._cited_urls: set[str] = set()
        self._citations: list[JSON] = []
        search = turn.web.search
        self._native = search is not None and search.declared_type.startswith("web_search_20")
        """Anthropic's own web search was declared: its clients show ``cited_text`` as the
        source's words; DeepSeek's answer-text-so-far stays for ``deepseek_web_search``."""
        """The citations of the open text block."""
        self._step_spoke = False
        self._started = not streaming

    @property
    def done(self) -> bool:
        return self.finished is not None or self.failed is not None

    def take(self) -> str:
        """The frames queued since the last call, joined."""
        out = "".join(self._frames)
        self._frames.clear()
        return out

    def start_frame(self, usage: events.Usage | None = None) -> str:
        message: JSON = {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.turn.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage_json(usage or events.Usage(), self.turn),
        }
        return sse_frame(dumps({"type": "message_start", "message": message}), "message_start")

    def start(self) -> str:
        """Nothing yet: ``message_start`` waits for the first step's usage or first event."""
        return ""

    def feed(self, event: events.Event) -> str:
        if self.done:
            return ""
        if not self._started:
            self._started = True
            first = event.usage if isinstance(event, events.FirstStepUsage) else None
            self._frames.append(self.start_frame(first))
        match event:
            case events.TextDelta(text=text, links=True):
                self._close()
                self._text(text)
                self._close()
            case events.TextDelta(text=text):
                self._text(text)
            case events.ReasoningDelta(text=text):
                self._reasoning(text)
            case events.TextCitation():
                self._citation(event)
            case events.StepReasoningDone():
                self._step_done()
            case events.WebCallStarted(call=call):
                arguments = call_input(call)
                block: JSON = {
                    "type": "server_tool_use",
                    "id": call.id,
                    "name": call.tool_name,
                    "input": arguments,
                    "caller": {"type": "direct"},
                    "kind": call.kind,
                }
                self._close()
                self._with_input(block, dumps(arguments))
            case events.WebCallCompleted(call=call, outcome=outcome):
                self._whole(result_block(call, outcome))
            case events.ClientToolArguments():
                self._tool_input(event)
            case events.ClientToolCall():
                self._tool_use(event)
            case events.Finished():
                self._close()
                self.finished = event
                self._emit("message_delta", self.delta_payload(event))
                self._emit("message_stop", {"type": "message_stop"})
            case events.Failed():
                self.fail(event)
            case events.FirstStepUsage():
                pass
            case _:
                assert_never(event)
        return self.take()

    def fail(self, event: events.Failed) -> None:
        self._close()
        for index, _ in self._told.values():
            self._stop(index)
        self._told.clear()
        self.failed = event
        self._emit("error", self.error_payload(event))

    def delta_payload(self, event: events.Finished) -> JSON:
        delta: JSON = {"stop_reason": event.stop_reason, "stop_sequence": None}
        if self.turn.extensions.title:
            delta["title"] = event.title
        return {
            "type": "message_delta",
            "delta": delta,
            "usage": usage_json(event.usage, self.turn),
        }

    def error_payload(self, event: events.Failed) -> JSON:
        return {
            "type": "error",
            "error": {
                "type": error_type(event.status, server="api_error", own=OWN_ERROR_TYPES),
                "message": event.message,
            },
            "usage": usage_json(event.usage, self.turn),
        }

    def body(self) -> JSON:
        """The final message body (after ``Finished``)."""
        assert self.finished is not None
        titled = {"title": self.finished.title} if self.turn.extensions.title else {}
        return {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.turn.model,
            "content": self.blocks,
            "stop_reason": self.finished.stop_reason,
            "stop_sequence": None,
            "usage": usage_json(self.finished.usage, self.turn),
            **titled,
        }

    # --- blocks ------------------------------------------------------------------------------

    def _emit(self, name: str, payload: JSON) -> None:
        if self.streaming:
            self._frames.append(sse_frame(dumps(payload), name))

    def _begin(self, block: JSON) -> int:
        index = len(self.blocks)
        self.blocks.append(block)
        self._emit(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": block},
        )
        return index

    def _stop(self, index: int) -> None:
        self._emit("content_block_stop", {"type": "content_block_stop", "index": index})

    def _whole(self, block: JSON) -> None:
        """A block whose content arrives all at once in ``content_block_start``."""
        self._close()
        self._stop(self._begin(block))

    def _delta(self, kind: str, field: str, text: str) -> None:
        if self.streaming:
            self._frames.append(
                'event: content_block_delta\ndata: {"type":"content_block_delta","index":'
                f'{len(self.blocks) - 1},"delta":{{"type":"{kind}","{field}":{dumps(text)}}}}}\n\n'
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

    def _citation(self, event: events.TextCitation) -> None:
        block = self._open
        if block is None or block["type"] != "text" or event.url in self._cited_urls:
            return
        self._cited = True
        self._cited_urls.add(event.url)
        citation: JSON = {
            "type": "web_search_result_location",
            "url": event.url,
            "title": event.title,
            "cited_text": (event.snippet or "") if self._native else "".join(self._parts),
            "encrypted_index": "",
        }
        self._citations.append(citation)
        block["citations"] = self._citations
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

    def _tool_input(self, told: events.ClientToolArguments) -> None:
        """A ``tool_use`` block opened with the call's name, its input streamed as it arrives."""
        if told.id not in self._told:
            self._close()
            block: JSON = {"type": "tool_use", "id": told.id, "name": told.name, "input": {}}
            self._told[told.id] = (self._begin(block), "")
        index, sent = self._told[told.id]
        if told.delta:
            self._input_delta(index, told.delta)
            self._told[told.id] = (index, sent + told.delta)

    def _input_delta(self, index: int, partial: str) -> None:
        delta = {"type": "input_json_delta", "partial_json": partial}
        self._emit(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        )

    def _tool_use(self, event: events.ClientToolCall) -> None:
        told = self._told.pop(event.id, None)
        if told is not None:
            index, sent = told
            arguments, partial = tool_input(event.arguments)
            if partial.startswith(sent) and len(partial) > len(sent):
                self._input_delta(index, partial[len(sent) :])
            self.blocks[index] = {**self.blocks[index], "input": arguments}
            self._stop(index)
            return
        self._close()
        arguments, partial = tool_input(event.arguments)
        block: JSON = {"type": "tool_use", "id": event.id, "name": event.name, "input": arguments}
        self._with_input(block, partial)

    def _with_input(self, block: JSON, partial: str) -> None:
        """A block that starts with an empty ``input`` and receives it as ``input_json_delta``,
        as Anthropic streams it (Claude Code shows a search's query from the delta); the body
        keeps the whole input."""
        index = self._begin({**block, "input": {}})
        if partial:
            delta = {"type": "input_json_delta", "partial_json": partial}
            self._emit(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        self.blocks[index] = block
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
        self._citations = []
