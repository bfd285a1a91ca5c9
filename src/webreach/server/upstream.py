"""The upstream model: any OpenAI-compatible Chat Completions endpoint, via the official SDK.

The SDK runs on its aiohttp transport, which costs far less CPU per request under
concurrency than an httpx pool (SPEC §7 has the measurements).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import openai
from openai import AsyncOpenAI, AsyncStream

__all__ = ["RawUpstreamResponse", "Upstream", "UpstreamError"]


class UpstreamError(Exception):
    """The upstream refused or could not be reached before anything was sent to the client."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True, slots=True)
class RawUpstreamResponse:
    status: int
    content_type: str
    chunks: AsyncIterator[bytes]


def _error_message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return error.message


def _translate(error: Exception) -> UpstreamError:
    if isinstance(error, openai.APIStatusError):
        return UpstreamError(error.status_code, _error_message(error))
    connect_failure = "Connect" in type(error.__cause__).__name__
    if isinstance(error, openai.APITimeoutError) and not connect_failure:
        return UpstreamError(504, "upstream: the model did not answer in time")
    return UpstreamError(502, f"upstream unreachable: {type(error).__name__}")


class Upstream:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        model: str | None = None,
        timeout: float = 600.0,
    ) -> None:
        self.model = model
        self._client = AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "unused",
            http_client=openai.DefaultAioHttpClient(timeout=timeout),
            max_retries=0,
        )

    def model_for(self, requested: str) -> str:
        return self.model or requested

    async def stream_chat(self, body: dict[str, Any]) -> AsyncStream[Any]:
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
            raise _translate(error) from None

    @asynccontextmanager
    async def relay(
        self, method: str, path: str, body: bytes | None = None
    ) -> AsyncIterator[RawUpstreamResponse]:
        """The upstream's raw response to a request relayed byte for byte."""
        request = self._client._client.build_request(  # the SDK's own HTTP client
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
            response = await self._client._client.send(request, stream=True)
        except Exception as error:
            raise _translate(error) from None
        try:
            yield RawUpstreamResponse(
                status=response.status_code,
                content_type=response.headers.get("content-type", "application/json"),
                chunks=response.aiter_raw(),
            )
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        await self._client.close()
