"""The server's own errors: what it refuses, and what it could not do before answering.

Both are HTTP errors in the protocol's own error shape; once a stream has started, failures
are events instead (``events.Failed``).
"""

from __future__ import annotations

from ....seam import WebreachError

__all__ = ["RequestError", "ServerFailure", "UpstreamError"]


class ServerFailure(WebreachError):
    """The server could not answer, before anything was sent: an HTTP error with this status.

    ``headers`` go on the error response (``Retry-After`` of a rate-limited upstream, say).
    """

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


class RequestError(WebreachError):
    """A request the server refuses before doing anything: an HTTP 4xx with this message, the
    ``param`` it names and a ``code`` a client can act on (``previous_response_not_found``)."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 400,
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.param = param
        self.code = code


class UpstreamError(ServerFailure):
    """The upstream refused or could not be reached before anything was sent to the client."""
