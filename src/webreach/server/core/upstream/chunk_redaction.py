"""The texts of a stream of Chat chunks with no secret in them, one split across chunks included.

The loop reads every upstream chunk through it, and the relay every frame that may hold part of
a secret: a tail that could begin one waits for the next chunk, or goes out with the chunk that
finishes the answer.
"""

from __future__ import annotations

from .chunks import ChatChunk, ChunkDelta, FunctionPiece, ToolCallPiece
from .secrets import Redactor, TextRedaction

__all__ = ["ChunkRedaction"]


class ChunkRedaction:
    """One stream's texts as the server may use them: each redacted across chunk boundaries,
    what was held back released with the chunk that finishes the answer."""

    __slots__ = ("_calls", "_content", "_reasoning", "_reasoning_field", "_redactor")

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._content = TextRedaction(redactor)
        self._reasoning = TextRedaction(redactor)
        self._reasoning_field = "reasoning_content"
        self._calls: dict[int, TextRedaction] = {}

    @property
    def holding(self) -> bool:
        """Whether a tail waits for the next chunk (which must then be read too)."""
        texts = (self._content, self._reasoning, *self._calls.values())
        return any(text.holding for text in texts)

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
