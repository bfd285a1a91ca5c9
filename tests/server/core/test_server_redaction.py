"""The server's secrets in what it sends: hidden in every body, a secret split across a
stream's pieces included, with a declared ``Content-Length`` kept true."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from webreach.server.core.upstream.frame_redaction import RelayedSecrets
from webreach.server.core.upstream.secrets import Redactor, TextRedaction
from webreach.server.redaction import RedactedResponses

KEY = "sk-live-canary-5190"


def app_with(redactor: Redactor) -> Starlette:
    async def whole(request: Request) -> Response:
        return JSONResponse({"said": f"my key is {KEY}"})

    async def parts(request: Request) -> Response:
        async def body() -> AsyncIterator[bytes]:
            yield f"data: {KEY}\n\n".encode()
            yield b"data: done\n\n"

        return StreamingResponse(body(), media_type="text/event-stream")

    async def sized_parts(request: Request) -> Response:
        async def body() -> AsyncIterator[bytes]:
            yield f"start {KEY} ".encode()
            yield b"end"

        length = str(len(f"start {KEY} end"))
        return StreamingResponse(body(), headers={"content-length": length})

    routes = [Route("/whole", whole), Route("/parts", parts), Route("/sized", sized_parts)]
    app = Starlette(routes=routes)
    app.add_middleware(RedactedResponses, redactor=redactor)
    return app


async def get(app: Starlette, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await client.get(path)


async def test_a_whole_body_is_redacted_and_its_length_set_anew() -> None:
    response = await get(app_with(Redactor([KEY])), "/whole")
    assert response.json() == {"said": "my key is ***"}
    assert response.headers["content-length"] == str(len(response.content))


async def test_a_streamed_body_is_redacted_in_every_part() -> None:
    response = await get(app_with(Redactor([KEY])), "/parts")
    assert response.text == "data: ***\n\ndata: done\n\n"


async def test_a_body_of_declared_length_sent_in_parts_keeps_its_length() -> None:
    response = await get(app_with(Redactor([KEY])), "/sized")
    assert KEY not in response.text
    assert response.text == f"start {'*' * len(KEY)} end"
    assert response.headers["content-length"] == str(len(response.content))


async def test_without_secrets_nothing_changes() -> None:
    response = await get(app_with(Redactor([])), "/whole")
    assert response.json() == {"said": f"my key is {KEY}"}


@pytest.mark.parametrize(
    "pieces",
    [
        ["the key: sk-", "live-can", "ary-5190 ok"],
        ["s", "k", "-", "live-canary-519", "0"],
        [f"two: {KEY[:4]}", f"{KEY[4:]} and {KEY}"],
        ["sk-live-canary-519"],  # a prefix that never finishes is only text
    ],
)
def test_a_secret_split_across_pieces_is_hidden_whole(pieces: list[str]) -> None:
    stream = TextRedaction(Redactor([KEY]))
    sent = [stream.feed(piece) for piece in pieces]
    sent.append(stream.flush())
    joined = "".join(sent)
    assert joined == Redactor([KEY])("".join(pieces))
    assert KEY not in joined


def test_text_that_cannot_begin_a_secret_is_never_held() -> None:
    stream = TextRedaction(Redactor([KEY]))
    assert stream.feed("plain words, nothing more.") == "plain words, nothing more."
    assert stream.feed(" a tail of s") == " a tail of "
    assert stream.flush() == "s"


def relayed_frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
    chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


def relayed(frames: list[bytes]) -> list[dict[str, Any]]:
    secrets = RelayedSecrets(Redactor([KEY]))
    out = b"".join(secrets.passed(frame) for frame in frames)
    return [json.loads(event[6:]) for event in out.split(b"\n\n") if event]


def test_a_relayed_frame_without_part_of_a_secret_goes_out_byte_for_byte() -> None:
    frame = relayed_frame({"content": "plain text", "x_vendor": [1, 2]})
    assert RelayedSecrets(Redactor([KEY])).passed(frame) == frame


def test_relayed_texts_spread_over_frames_are_hidden_whole_and_the_rest_kept() -> None:
    arguments = json.dumps({"q": f"find {KEY}"})
    frames = [
        *(relayed_frame({"content": c}) for c in f"key {KEY}!"),
        *(relayed_frame({"reasoning_content": c}) for c in f"think {KEY}"),
        *(
            relayed_frame(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "t" if n == 0 else None,
                            "function": {"arguments": arguments[n : n + 3]},
                        }
                    ]
                }
            )
            for n in range(0, len(arguments), 3)
        ),
        relayed_frame({}, "stop"),
    ]
    chunks = relayed(frames)
    deltas = [chunk["choices"][0]["delta"] for chunk in chunks]
    assert "".join(d.get("content") or "" for d in deltas) == "key ***!"
    assert "".join(d.get("reasoning_content") or "" for d in deltas) == "think ***"
    said = "".join(
        call["function"]["arguments"] for d in deltas for call in d.get("tool_calls") or ()
    )
    assert json.loads(said) == {"q": "find ***"}
    assert all(chunk["model"] == "m" and chunk["id"] == "c1" for chunk in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
