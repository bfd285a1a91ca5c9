"""webreach's error family: one root, and the web seam's error with codes a caller may branch on.

Everything webreach raises on purpose is a :class:`WebreachError`: the seam's and the tools'
:class:`WebError`, a value refused where it is given (:class:`InvalidValueError`), settings
errors (``webreach.config.ConfigError``) and the server's request and upstream errors.
``except WebreachError`` catches all of them and nothing else.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["InvalidValueError", "WebError", "WebErrorCode", "WebreachError"]


class WebreachError(Exception):
    """The root of every error webreach raises on purpose; ``message`` is for people."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidValueError(WebreachError, ValueError):
    """A value refused where it is given (a constructor's argument): ``field`` names it.

    It is a ``ValueError`` as well, which is what these refusals were before they joined the
    family, so code that caught them as such still does.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class WebErrorCode(StrEnum):
    INVALID_ARGUMENTS = "INVALID_ARGUMENTS"
    """A tool call's arguments were refused before any provider was called."""
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
    WEB_BOT_CHALLENGE = "WEB_BOT_CHALLENGE"
    """The site answered with a bot challenge or block page (Cloudflare, Akamai, DataDome,
    HUMAN): the page could not be read, and webreach does not try to get past it."""
    WEB_ROBOTS_DISALLOWED = "WEB_ROBOTS_DISALLOWED"
    """The site's robots.txt disallows the URL for webreach's user-agent token or ``*``."""
    WEB_NOT_CACHED = "WEB_NOT_CACHED"
    """The caller allowed cached results only (``live=False``) and none was cached."""


class WebError(WebreachError):
    """A failure of search or fetch (or of a tool call) that a caller can route on by ``code``.

    Messages are written for people and models alike; they never carry credentials.
    ``retry_after`` (seconds) is set when the provider said when to come back.
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
