"""The openai SDK's stream reading that it does not export, imported here and nowhere else.

The upstream client is the SDK's, and its streams are read as the SDK reads them: its SSE
decoder (for the frames a relay passes on), its drain of a finished response (so the connection
goes back to the pool), and ``AsyncStream._iter_events``, which :class:`.stream.ChunkStream`
calls as the subclass the SDK builds. None of them is public, so openai is bounded below 4 in
pyproject.toml for them, and tests/server/core/test_server_openai_stream.py checks each is there and
behaves as used.
"""

from __future__ import annotations

from openai._streaming import SSEDecoder
from openai._streaming_cleanup import drain_response_async

__all__ = ["SSEDecoder", "drain_response_async"]
