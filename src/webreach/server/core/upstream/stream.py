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
from pydantic import ValidationError

from ....seam.causes import network_cause
from ..turn.errors import UpstreamError
from .chunk_redaction import ChunkRedaction
from .chunks import ChatChunk, UpstreamErrorBody, invalid
from .failures import broken, translate
from .openai_stream import drain_response_async
from .secrets import Redactor

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
        hidden = ChunkRedaction(self.redactor) if self.redactor.active else None
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
