"""The upstream model: any OpenAI-compatible Chat Completions endpoint, via the official SDK.

The SDK runs on its aiohttp transport, which costs far less CPU per request under
concurrency than an httpx pool (SPEC §7 has the measurements).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import openai
from openai import AsyncOpenAI, AsyncStream

from ...seam import settled
from ...seam.causes import network_cause
from .errors import UpstreamError
from .events import Usage
from .journal import upstream_failure
from .turn import JSON

__all__ = [
    "REJECTED_CREDENTIALS",
    "Completion",
    "RawUpstreamResponse",
    "Upstream",
    "passed_headers",
    "thinking_params",
]

REJECTED_CREDENTIALS = (
    "the upstream rejected the server's credentials (check WEBREACH_UPSTREAM_API_KEY)"
)
"""What a client sees for an upstream 401/403: its own key was fine, the server's was not."""
_PASSED_HEADERS = ("retry-after",)


def passed_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The upstream's response headers a client needs to act on an error (``Retry-After``)."""
    return {name: headers[name] for name in _PASSED_HEADERS if name in headers}


@dataclass(frozen=True, slots=True)
class RawUpstreamResponse:
    status: int
    content_type: str
    chunks: AsyncIterator[bytes]
    headers: dict[str, str]
    """The response headers passed on to the client (``Retry-After``)."""


def _error_message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return error.message


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


def redact(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


def status_error(
    status: int, message: str, headers: Mapping[str, str], key: str | None
) -> UpstreamError:
    """An upstream's refusal as the client should see it: its credentials problem is ours."""
    if status in (401, 403):
        return UpstreamError(502, REJECTED_CREDENTIALS)
    return UpstreamError(status, redact(message, key), passed_headers(headers))


def _translate(error: Exception, key: str | None, where: str | None = None) -> UpstreamError:
    """The client's error for a failed upstream call, logged with its cause: the status the
    upstream answered, or what failed on the network (refused, DNS, TLS, timeout), which the
    SDK's own class often misnames (a refused connection is an ``APITimeoutError``)."""
    if isinstance(error, openai.APIStatusError):
        headers = {k.lower(): v for k, v in error.response.headers.items()}
        status = error.status_code
        failure = status_error(status, _error_message(error), headers, key)
        upstream_failure(status, failure.message, f"http_{status}")
        return failure
    cause = network_cause(error)
    if cause is None:
        failure = UpstreamError(502, f"upstream unreachable: {type(error).__name__}")
        upstream_failure(502, failure.message, None)
    elif cause.kind == "timeout":
        failure = UpstreamError(504, "upstream: the model did not answer in time")
        upstream_failure(504, failure.message, "timeout", f"{failure.message} ({where})")
    else:
        failure = UpstreamError(502, f"upstream unreachable: {cause.describe()}")
        detail = f"upstream unreachable: {cause.describe(where)}"
        upstream_failure(502, failure.message, cause.kind, detail)
    return failure


DIALECTS = ("openai", "deepseek")
"""How thinking is asked of the upstream: ``reasoning_effort``, or DeepSeek's ``thinking``."""


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
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        model: str | None = None,
        timeout: float = 600.0,
        connect_timeout: float = 10.0,
        dialect: str = "openai",
        continuation: str = "auto",
        system_first: bool = False,
    ) -> None:
        """``timeout`` bounds each wait for the upstream's next bytes (its first answer
        included), ``connect_timeout`` the connection."""
        self.model = model
        self.dialect = dialect
        self.continuation = (
            continuation
            if continuation != "auto"
            else ("prefix" if dialect == "deepseek" else "prefill")
        )
        """How a partial reply is continued (``WEBREACH_UPSTREAM_CONTINUE``, resolved)."""
        self.system_first = system_first
        """The upstream takes one leading system message only (``WEBREACH_UPSTREAM_SYSTEM``)."""
        self._key = api_key or None
        self.where = _address(base_url)
        """``host:port`` of the upstream, for the operator's log."""
        # The SDK's HTTP client, kept here too: the relay sends its raw requests through it.
        self._http = openai.DefaultAioHttpClient(
            timeout=openai.Timeout(timeout, connect=connect_timeout)
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
        """Start a streamed completion; returns once the upstream answered with a status.

        Chunks come back as plain dicts: building the SDK's typed chunk objects would cost
        more than everything else the server does for a request.
        """
        payload = {
            **body,
            "model": self.model_for(str(body.get("model", ""))),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        try:
            return await self._client.post(
                "/chat/completions",
                body=payload,
                cast_to=object,
                stream=True,
                stream_cls=AsyncStream[Any],
            )
        except openai.APIError as error:
            raise _translate(error, self._key, self.where) from None

    async def complete_chat(self, body: JSON) -> Completion:
        """One completion, not streamed: for the server's own small asks (a title, a verdict)."""
        payload = {**body, "model": self.model_for(str(body.get("model", ""))), "stream": False}
        try:
            answer = await self._client.post("/chat/completions", body=payload, cast_to=object)
        except openai.APIError as error:
            raise _translate(error, self._key, self.where) from None
        return Completion.of(answer if isinstance(answer, dict) else {})

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
            raise _translate(error, self._key, self.where) from None
        try:
            yield RawUpstreamResponse(
                status=response.status_code,
                content_type=response.headers.get("content-type", "application/json"),
                chunks=response.aiter_raw(),
                headers=passed_headers(response.headers),
            )
        finally:
            await settled(response.aclose())

    def redact(self, text: str) -> str:
        """``text`` without the server's upstream key, for relayed upstream messages."""
        return redact(text, self._key)

    def status_error(self, status: int, message: str, headers: Mapping[str, str]) -> UpstreamError:
        return status_error(status, message, headers, self._key)

    async def aclose(self) -> None:
        await self._client.close()
