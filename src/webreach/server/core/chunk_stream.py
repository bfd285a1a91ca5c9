"""The upstream's streamed answer, read as typed chunks, and every way it can go wrong.

The SDK decodes the server-sent events; each event's text is parsed and validated in one pass
into a :class:`~.chunks.ChatChunk`, whose texts (answer, reasoning, call arguments) are
redacted before anything reads them, a secret split across chunks included. What is not a
chunk (an error event, a malformed or wrong-typed chunk, text that is not UTF-8, a stream that
ends with neither a ``finish_reason`` nor ``[DONE]``) becomes an :class:`UpstreamError` naming
the upstream, redacted and logged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import openai
from openai import AsyncStream
from openai._streaming_cleanup import drain_response_async
from pydantic import ValidationError

from ...seam.causes import network_cause
from .chunks import ChatChunk, ChunkDelta, FunctionPiece, ToolCallPiece, UpstreamErrorBody, invalid
from .errors import UpstreamError
from .secrets import Redactor, TextRedaction
from .upstream_failures import broken, translate

__all__ = ["TRUNCATED", "ChunkStream", "reported_error"]

TRUNCATED = "upstream: the stream ended before the answer was complete"
_MAX_MESSAGE = 1000
"""The most of an upstream's own error text passed on (after redaction, so no key is cut)."""


def reported_error(error: UpstreamErrorBody | str, redactor: Redactor) -> str:
    """The client's text for an error the upstream reported in its answer."""
    said = error if isinstance(error, str) else error.message
    return redactor(f"upstream error: {said or 'no message'}")


class ChunkStream(AsyncStream[ChatChunk]):
    """One streamed completion; the SDK builds it, :meth:`bind` tells it whose it is."""

    redactor = Redactor(())
    where = "?"
    whole: ChatChunk | None = None
    """A completion the upstream answered whole (it ignored ``stream``), as its one chunk."""

    def bind(self, redactor: Redactor, where: str) -> ChunkStream:
        self.redactor, self.where = redactor, where
        return self

    def failed(self, message: str, cause: str) -> UpstreamError:
        return broken(self.redactor(message)[:_MAX_MESSAGE], cause, self.where)

    async def __stream__(self) -> AsyncIterator[ChatChunk]:
        hidden = _Redacting(self.redactor) if self.redactor.active else None
        if self.whole is not None:
            yield hidden.chunk(self.whole) if hidden is not None else self.whole
            return
        finished = False
        try:
            async for sse in self._iter_events():
                data = sse.data
                if data.startswith("[DONE]"):
                    await drain_response_async(self.response)
                    return
                if sse.event == "error":
                    raise self.failed(self._said(data), "stream_error")
                try:
                    chunk = ChatChunk.model_validate_json(data)
                except ValidationError as error:
                    message = f"upstream sent a malformed chunk ({invalid(error)})"
                    raise self.failed(message, "malformed") from None
                if chunk.error:
                    raise self.failed(reported_error(chunk.error, self.redactor), "stream_error")
                if not finished and chunk.choices:
                    finished = bool(chunk.choices[0].finish_reason)
                yield hidden.chunk(chunk) if hidden is not None else chunk
        except openai.APIError as error:
            raise self._cut(error) from None
        except UnicodeDecodeError:
            raise self.failed("upstream sent a stream that is not UTF-8", "malformed") from None
        finally:
            await self.response.aclose()
        if not finished:
            raise self.failed(TRUNCATED, "truncated")

    def _said(self, data: str) -> str:
        """The text of an ``error`` event: its JSON error's message, else the data itself."""
        try:
            error = ChatChunk.model_validate_json(data).error
        except ValidationError:
            error = None
        return reported_error(error or data, self.redactor)

    def _cut(self, error: openai.APIError) -> UpstreamError:
        """A stream the network cut: a timeout is the upstream's silence (504), else 502."""
        cause = network_cause(error)
        if cause is not None and cause.kind == "timeout":
            return translate(error, self.redactor, self.where, answered=True)
        how = cause.describe() if cause is not None else type(error).__name__
        return self.failed(f"upstream: the stream was cut ({how})", cause.kind if cause else "cut")


class _Redacting:
    """One stream's texts as the server may use them: each redacted across chunk boundaries,
    what was held back released with the chunk that finishes the answer."""

    __slots__ = ("_calls", "_content", "_reasoning", "_reasoning_field", "_redactor")

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._content = TextRedaction(redactor)
        self._reasoning = TextRedaction(redactor)
        self._reasoning_field = "reasoning_content"
        self._calls: dict[int, TextRedaction] = {}

    def chunk(self, chunk: ChatChunk) -> ChatChunk:
        choice = chunk.first
        if choice is None:
            return chunk
        delta = choice.delta or ChunkDelta()
        update: dict[str, object] = {}
        if delta.content:
            update["content"] = self._content.feed(delta.content)
        if delta.reasoning_content or delta.reasoning:
            self._reasoning_field = "reasoning_content" if delta.reasoning_content else "reasoning"
            update[self._reasoning_field] = self._reasoning.feed(delta.reasoning_text or "")
        if delta.tool_calls:
            update["tool_calls"] = [self._call(piece) for piece in delta.tool_calls]
        if choice.finish_reason:
            self._finish(delta, update)
        if all(getattr(delta, name) == value for name, value in update.items()):
            return chunk
        changed = choice.model_copy(update={"delta": delta.model_copy(update=update)})
        return chunk.model_copy(update={"choices": [changed, *(chunk.choices or [])[1:]]})

    def _call(self, piece: ToolCallPiece) -> ToolCallPiece:
        function = piece.function
        if function is None or not function.arguments:
            return piece
        text = self._calls.setdefault(piece.index, TextRedaction(self._redactor))
        arguments = text.feed(function.arguments)
        if arguments == function.arguments:
            return piece
        return piece.model_copy(
            update={"function": function.model_copy(update={"arguments": arguments})}
        )

    def _finish(self, delta: ChunkDelta, update: dict[str, object]) -> None:
        """The answer is complete: every held-back tail goes out with this chunk."""
        if held := self._content.flush():
            update["content"] = str(update.get("content", delta.content) or "") + held
        if held := self._reasoning.flush():
            before = update.get(self._reasoning_field, getattr(delta, self._reasoning_field))
            update[self._reasoning_field] = str(before or "") + held
        tails = [
            ToolCallPiece(index=index, function=FunctionPiece(arguments=held))
            for index, text in self._calls.items()
            if (held := text.flush())
        ]
        if tails:
            pieces = update.get("tool_calls", delta.tool_calls)
            update["tool_calls"] = [*(pieces if isinstance(pieces, list) else ()), *tails]
