"""The one error type of the web seam, with codes a caller may branch on."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["WebError", "WebErrorCode"]


class WebErrorCode(StrEnum):
    WEB_PROVIDER_UNAVAILABLE = "WEB_PROVIDER_UNAVAILABLE"
    WEB_PROVIDER_CONFIGURED_MISSING = "WEB_PROVIDER_CONFIGURED_MISSING"
    WEB_PROVIDER_CONFIGURED_UNAVAILABLE = "WEB_PROVIDER_CONFIGURED_UNAVAILABLE"
    WEB_PROVIDER_AMBIGUOUS = "WEB_PROVIDER_AMBIGUOUS"
    WEB_DUPLICATE_PROVIDER = "WEB_DUPLICATE_PROVIDER"
    WEB_INVALID_URL = "WEB_INVALID_URL"
    WEB_BLOCKED_URL = "WEB_BLOCKED_URL"
    WEB_REDIRECT_BLOCKED = "WEB_REDIRECT_BLOCKED"
    WEB_FETCH_TOO_LARGE = "WEB_FETCH_TOO_LARGE"
    WEB_FETCH_TIMEOUT = "WEB_FETCH_TIMEOUT"
    WEB_ABORTED = "WEB_ABORTED"
    WEB_UNSUPPORTED_CONTENT_TYPE = "WEB_UNSUPPORTED_CONTENT_TYPE"
    WEB_PROVIDER_ERROR = "WEB_PROVIDER_ERROR"


class WebError(Exception):
    """A failure of search or fetch that a caller can route on by ``code``.

    Messages are written for people and models alike; they never carry credentials.
    """

    def __init__(
        self,
        code: WebErrorCode | str,
        message: str,
        *,
        provider: str | None = None,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.code = WebErrorCode(code)
        self.message = message
        self.provider = provider
        self.status = status
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __repr__(self) -> str:
        extras = "".join(
            f", {name}={value!r}"
            for name, value in (
                ("provider", self.provider),
                ("status", self.status),
                ("retry_after", self.retry_after),
            )
            if value is not None
        )
        return f"WebError({self.code.value!r}, {self.message!r}{extras})"
