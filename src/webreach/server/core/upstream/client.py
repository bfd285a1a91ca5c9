"""The upstream model: any OpenAI-compatible Chat Completions endpoint, via the official SDK.

The SDK runs on its aiohttp transport, which costs far less CPU per request under
concurrency than an httpx pool (docs/development/dependencies.md has the measurements).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import openai
from openai import AsyncOpenAI, AsyncStream
from pydantic import ValidationError

from ....seam import await_cleanly
from ....seam.causes import network_cause
from ....settings.server import ServerSettings
from ..turn.errors import UpstreamError
from ..turn.events import Usage
from ..turn.shape import JSON
from .chunks import ChatChunk, CompletionBody, invalid
from .failures import no_api_at, passed_headers, status_error, translate
from .secrets import Redactor
from .stream import ChunkStream, reported_error

__all__ = ["Completion", "RawUpstreamResponse", "Upstream", "thinking_params"]

_MAX_WHOLE_ANSWER = 32 << 20
"""The most of a whole (not streamed) answer read in place of a stream."""


@dataclass(frozen=True, slots=True)
class RawUpstreamResponse:
    status: int
    content_type: str
    chunks: AsyncIterator[bytes]
    headers: dict[str, str]
    """The response headers passed on to the client (``Retry-After``)."""


def _address(base_url: str) -> str:
    """``host:port`` of a URL, for log lines (never its path or query)."""
    parts = urlsplit(base_url)
    try:
        port = parts.port
    except ValueError:
        port = None
    host = parts.hostname or "?"
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port or (443 if parts.scheme == 'https' else 80)}"


def _answers(status: int) -> bool:
    """Whether a status shows an upstream able to serve: anything below 500 but a refusal of
    the server's credentials (a 404 is a server without ``/models``, alive all the same)."""
    return status < 500 and status not in (401, 403)


def thinking_params(dialect: str, thinking: bool, effort: str | None, off: bool) -> JSON:
    """What tells the upstream model to think, or not, in its dialect; nothing when the client
    said nothing (a model that does not reason would refuse the field)."""
    if dialect == "deepseek":
        if thinking or off:
            return {"thinking": {"type": "enabled" if thinking else "disabled"}}
        return {}
    if thinking:
        named = effort and effort not in ("none", "minimal")
        return {"reasoning_effort": effort if named else "medium"}
    return {}


def _system_text(content: object) -> str:
    if isinstance(content, list):
        return "\n\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


@dataclass(frozen=True, slots=True)
class Completion:
    """What a small ask answered: its text (None when there was none) and its tokens."""

    text: str | None
    usage: Usage

    @classmethod
    def of(cls, answer: JSON) -> Completion:
        choices = answer.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        return cls(content if isinstance(content, str) else None, Usage.of_completion(answer))


class Upstream:
    def __init__(self, settings: ServerSettings, redactor: Redactor | None = None) -> None:
        """The upstream ``settings`` name (``upstream_*``): ``upstream_timeout`` bounds each
        wait for its next bytes (its first answer included), ``upstream_connect_timeout`` the
        connection. ``redactor`` hides the server's secrets in every upstream text (by
        default, the upstream key)."""
        base_url = settings.upstream_url()
        key = settings.upstream_api_key
        api_key = key.get_secret_value() if key is not None else None
        self.model = settings.upstream_model
        self.dialect = settings.upstream_dialect
        continuation = settings.upstream_continue
        if continuation == "auto":
            continuation = "prefix" if self.dialect == "deepseek" else "prefill"
        self.continuation = continuation
        """How a partial reply is continued (``WEBREACH_UPSTREAM_CONTINUE``, resolved)."""
        self.system_first = settings.upstream_system == "first"
        """The upstream takes one leading system message only (``WEBREACH_UPSTREAM_SYSTEM``)."""
        self.redactor = redactor if redactor is not None else Redactor([api_key])
        self.where = _address(base_url)
        """``host:port`` of the upstream, for the operator's log."""
        self.answered_at: float | None = None
        """``time.monotonic()`` of the upstream's last good answer, to any request (``/readyz``)."""
        # The SDK's HTTP client, kept here too: the relay sends its raw requests through it.
        self._http = openai.DefaultAioHttpClient(
            timeout=openai.Timeout(
                settings.upstream_timeout, connect=settings.upstream_connect_timeout
            )
        )
        self._client = AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "unused",
            http_client=self._http,
            max_retries=0,
        )

    def placed(self, messages: list[JSON]) -> list[JSON]:
        """``messages`` as this upstream takes them: with ``system_first``, every system message
        folded, in order, into one leading message (chat templates such as Mistral's and
        Gemma's refuse a system message anywhere else)."""
        if not self.system_first or not any(m.get("role") == "system" for m in messages[1:]):
            return messages
        said = [m for m in messages if m.get("role") == "system"]
        texts = [_system_text(m.get("content")) for m in said]
        lead: JSON = {"role": "system", "content": "\n\n".join(t for t in texts if t)}
        return [lead, *(m for m in messages if m.get("role") != "system")]

    def continuing(self, body: JSON) -> JSON:
        """``body``, made to continue its last (assistant) message instead of answering anew,
        in the upstream's way: DeepSeek's ``prefix``, vLLM's ``continue_final_message``, or the
        message as it is (``prefill``: models that continue a final assistant turn)."""
        if self.continuation == "continue_final_message":
            return {**body, "continue_final_message": True, "add_generation_prompt": False}
        messages = body.get("messages")
        if self.continuation != "prefix" or not isinstance(messages, list) or not messages:
            return body
        return {**body, "messages": [*messages[:-1], {**messages[-1], "prefix": True}]}

    def model_for(self, requested: str) -> str:
        return self.model or requested

    async def stream_chat(self, body: JSON) -> AsyncStream[Any]:
        """Start a streamed completion (a :class:`ChunkStream`, whose chunks are
        :class:`ChatChunk`); returns once the upstream answered with a status.

        An upstream that answers a whole completion instead is read as a one-chunk stream;
        any other body is its failure, raised here, before the client was answered.
        """
        payload = {
            **body,
            "model": self.model_for(str(body.get("model", ""))),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if "tools" not in payload:
            # OpenAI refuses it on a request that offers no tools (a step made to answer).
            payload.pop("parallel_tool_calls", None)
        try:
            stream = await self._client.post(
                "/chat/completions",
                body=payload,
                cast_to=object,
                stream=True,
                stream_cls=ChunkStream,
            )
        except openai.APIError as error:
            raise translate(error, self.redactor, self.where) from None
        self.answered_at = time.monotonic()
        stream.bind(self.redactor, self.where)
        kind = stream.response.headers.get("content-type", "").split(";")[0].strip().lower()
        if not kind or kind == "text/event-stream":
            return stream
        if not kind.endswith("json"):
            await await_cleanly(stream.close())
            message = f"upstream answered 200 with {kind[:80]}, not an event stream"
            raise stream.failed(message, "not_a_stream")
        stream.whole = await self._whole(stream, kind[:80])
        return stream

    async def _whole(self, stream: ChunkStream, kind: str) -> ChatChunk:
        """The one chunk of a completion the upstream answered whole."""
        data = bytearray()
        try:
            async for part in stream.response.aiter_bytes():
                data += part
                if len(data) > _MAX_WHOLE_ANSWER:
                    break
        except Exception as error:
            raise translate(error, self.redactor, self.where, answered=True) from None
        finally:
            await await_cleanly(stream.close())
        not_one = f"upstream answered 200 with {kind} that is not a completion"
        if len(data) > _MAX_WHOLE_ANSWER:
            raise stream.failed(f"{not_one} (larger than {_MAX_WHOLE_ANSWER} bytes)", "too_large")
        try:
            answer = CompletionBody.model_validate_json(data)
        except ValidationError as error:
            raise stream.failed(f"{not_one} ({invalid(error)})", "malformed") from None
        if answer.error:
            raise stream.failed(reported_error(answer.error, self.redactor), "error_body")
        if answer.choices is None:
            raise stream.failed(f"{not_one} (no choices)", "malformed")
        return answer.as_chunk()

    async def complete_chat(self, body: JSON) -> Completion:
        """One completion, not streamed: for the server's own small asks (a title, a verdict)."""
        payload = {**body, "model": self.model_for(str(body.get("model", ""))), "stream": False}
        try:
            answer = await self._client.post("/chat/completions", body=payload, cast_to=object)
        except openai.APIError as error:
            raise translate(error, self.redactor, self.where) from None
        self.answered_at = time.monotonic()
        completion = Completion.of(answer if isinstance(answer, dict) else {})
        if completion.text:
            return Completion(self.redactor(completion.text), completion.usage)
        return completion

    @asynccontextmanager
    async def relay(
        self, method: str, path: str, body: bytes | None = None
    ) -> AsyncIterator[RawUpstreamResponse]:
        """The upstream's raw response to a request relayed byte for byte."""
        request = self._http.build_request(
            method,
            str(self._client.base_url).rstrip("/") + path,
            content=body,
            headers={
                "Authorization": f"Bearer {self._client.api_key}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
        )
        try:
            response = await self._http.send(request, stream=True)
        except Exception as error:
            raise translate(error, self.redactor, self.where) from None
        if _answers(response.status_code) and response.status_code != 404:
            # A 404 does not show a server that serves: it is what a URL without /v1 answers.
            self.answered_at = time.monotonic()
        try:
            yield RawUpstreamResponse(
                status=response.status_code,
                content_type=response.headers.get("content-type", "application/json"),
                chunks=response.aiter_raw(),
                headers=passed_headers(response.headers),
            )
        finally:
            await await_cleanly(response.aclose())

    async def probe(self, seconds: float) -> str | None:
        """Ask ``GET /models``, the cheapest request every OpenAI-compatible server answers:
        None when it answered, else why not, in words a client may read (no key, no address,
        a 404 or a web page where the API should be).
        Nothing is logged here: the caller logs only when readiness changes."""
        request = self._http.build_request(
            "GET",
            str(self._client.base_url).rstrip("/") + "/models",
            headers={"Authorization": f"Bearer {self._client.api_key}"},
        )
        try:
            async with asyncio.timeout(seconds):
                response = await self._http.send(request, stream=True)
                await response.aclose()
        except TimeoutError:
            return f"the upstream did not answer GET /models within {seconds:g} s"
        except Exception as error:
            cause = network_cause(error)
            how = cause.describe() if cause is not None else type(error).__name__
            return f"the upstream cannot be reached: {how}"
        status = response.status_code
        if status in (401, 403):
            return f"the upstream refused the server's credentials (HTTP {status} to GET /models)"
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if status == 404 or (_answers(status) and kind == "text/html"):
            # An API root one level up (Ollama's without /v1) or a web page, not an API.
            return no_api_at("/models")
        if not _answers(status):
            return f"the upstream answered HTTP {status} to GET /models"
        self.answered_at = time.monotonic()
        return None

    def observe_responses(self, hook: Callable[[Any], Awaitable[None]]) -> None:
        """Call ``hook`` with every HTTP response the upstream gives (metrics count statuses)."""
        self._http.event_hooks["response"].append(hook)

    def status_error(self, status: int, message: str, headers: Mapping[str, str]) -> UpstreamError:
        return status_error(status, message, headers, self.redactor)

    async def aclose(self) -> None:
        await self._client.close()
