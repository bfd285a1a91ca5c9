"""The upstream's Chat Completions chunks and completions, as the server reads them.

Validated from the raw event text in one pass (pydantic-core parses and checks together, for
about what ``json.loads`` alone costs). Unknown fields are ignored; the fields the server uses
must have their types, so a wrong-typed chunk is the upstream's fault (a 502), never a crash.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = [
    "ChatChunk",
    "ChunkChoice",
    "ChunkDelta",
    "ChunkUsage",
    "CompletionBody",
    "FunctionPiece",
    "ToolCallPiece",
    "UpstreamErrorBody",
    "invalid",
]


class _Read(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


class UpstreamErrorBody(BaseModel):
    """An error the upstream reports in a 200 body or a stream's event."""

    model_config = ConfigDict(extra="ignore")

    message: str | None = None


class FunctionPiece(_Read):
    name: str | None = None
    arguments: str | None = None


class ToolCallPiece(_Read):
    index: int = 0
    id: str | None = None
    function: FunctionPiece | None = None


class ChunkDelta(_Read):
    content: str | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    """OpenRouter's, vLLM's and Ollama's name for ``reasoning_content``."""
    tool_calls: list[ToolCallPiece] | None = None

    @property
    def reasoning_text(self) -> str | None:
        return self.reasoning_content or self.reasoning or None


class ChunkChoice(_Read):
    delta: ChunkDelta | None = None
    finish_reason: str | None = None


class _Cached(_Read):
    cached_tokens: int | None = None


class _Reasoned(_Read):
    reasoning_tokens: int | None = None


class ChunkUsage(_Read):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: _Cached | None = None
    completion_tokens_details: _Reasoned | None = None

    @property
    def counts(self) -> tuple[int, int, int, int]:
        """Prompt, completion, cached and reasoning tokens (0 where the upstream said none)."""
        cached = self.prompt_tokens_details
        reasoned = self.completion_tokens_details
        return (
            self.prompt_tokens or 0,
            self.completion_tokens or 0,
            (cached.cached_tokens or 0) if cached else 0,
            (reasoned.reasoning_tokens or 0) if reasoned else 0,
        )


class ChatChunk(_Read):
    choices: list[ChunkChoice] | None = None
    usage: ChunkUsage | None = None
    error: UpstreamErrorBody | str | None = None

    @property
    def first(self) -> ChunkChoice | None:
        """The choice the server reads (it asks for one)."""
        return self.choices[0] if self.choices else None


class _Message(_Read):
    content: str | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolCallPiece] | None = None


class _CompletionChoice(_Read):
    message: _Message | None = None
    finish_reason: str | None = None


class CompletionBody(_Read):
    """A whole (not streamed) completion: what an upstream that ignores ``stream`` answers."""

    choices: list[_CompletionChoice] | None = None
    usage: ChunkUsage | None = None
    error: UpstreamErrorBody | str | None = None

    def as_chunk(self) -> ChatChunk:
        """The completion as the one chunk that would have streamed it."""
        choice = self.choices[0] if self.choices else None
        message = choice.message if choice is not None else None
        delta = ChunkDelta()
        if message is not None:
            calls = [
                call.model_copy(update={"index": number})
                for number, call in enumerate(message.tool_calls or ())
            ]
            delta = ChunkDelta(
                content=message.content,
                reasoning_content=message.reasoning_content,
                reasoning=message.reasoning,
                tool_calls=calls or None,
            )
        finish = choice.finish_reason if choice is not None else None
        return ChatChunk(
            choices=[ChunkChoice(delta=delta, finish_reason=finish or "stop")],
            usage=self.usage,
            error=self.error,
        )


def invalid(error: ValidationError) -> str:
    """Where a chunk was wrong and how, without the value (which may hold anything)."""
    first = error.errors(include_input=False, include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "the chunk"
    return f"{where}: {first['msg']}"
