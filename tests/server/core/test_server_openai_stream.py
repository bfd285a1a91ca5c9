"""The openai SDK internals the upstream stream reads are there and behave as used: an openai
release that moves them fails here, before a relayed stream does."""

from __future__ import annotations

import inspect

from openai import AsyncStream

from webreach.server.core.upstream.openai_stream import SSEDecoder, drain_response_async


def test_the_decoder_reads_a_block_of_frames() -> None:
    block = b'data: {"a": 1}\n\nevent: error\ndata: {"b": 2}\n\ndata: [DONE]\n\n'
    events = list(SSEDecoder().iter_bytes(iter([block])))
    assert [(event.event, event.data) for event in events] == [
        (None, '{"a": 1}'),
        ("error", '{"b": 2}'),
        (None, "[DONE]"),
    ]


def test_the_drain_takes_a_response() -> None:
    assert inspect.iscoroutinefunction(drain_response_async)
    assert list(inspect.signature(drain_response_async).parameters) == ["response"]


def test_a_stream_subclass_can_iterate_the_events() -> None:
    assert inspect.isasyncgenfunction(AsyncStream._iter_events)
