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
    """Nothing is configured and no provider of this capability is available (none has
    what it needs, such as its key)."""
    WEB_PROVIDER_CONFIGURED_MISSING = "WEB_PROVIDER_CONFIGURED_MISSING"
    """The configured provider id is not registered: no built-in provider or plugin has it."""
    WEB_PROVIDER_CONFIGURED_UNAVAILABLE = "WEB_PROVIDER_CONFIGURED_UNAVAILABLE"
    """The configured provider is registered but not available: it lacks what it needs,
    such as its key, which the message names."""
    WEB_PROVIDER_AMBIGUOUS = "WEB_PROVIDER_AMBIGUOUS"
    """Nothing is configured and several providers are available; the message names the
    setting that chooses one."""
    WEB_DUPLICATE_PROVIDER = "WEB_DUPLICATE_PROVIDER"
    """A second provider was registered under an id one already has."""
    WEB_INVALID_URL = "WEB_INVALID_URL"
    """The URL was refused before any I/O: not http(s), with ``user:pass@``, longer than
    2,048 characters, or without a host."""
    WEB_BLOCKED_URL = "WEB_BLOCKED_URL"
    """The host is, or resolves to, a private, local or reserved address;
    ``WEBREACH_FETCH_ALLOW`` opens one on purpose."""
    WEB_REDIRECT_BLOCKED = "WEB_REDIRECT_BLOCKED"
    """A redirect the fetch may not follow, its target named: a fetch a model asked for by
    URL follows its own site only."""
    WEB_FETCH_TOO_LARGE = "WEB_FETCH_TOO_LARGE"
    """The body is over ``WEBREACH_FETCH_MAX_BYTES`` after decoding, or declares a
    ``Content-Length`` over it."""
    WEB_FETCH_TIMEOUT = "WEB_FETCH_TIMEOUT"
    """A fetch took longer than ``WEBREACH_FETCH_TIMEOUT``, redirects included."""
    WEB_ABORTED = "WEB_ABORTED"
    """The call was cut short: the runtime it ran on had been closed."""
    WEB_UNSUPPORTED_CONTENT_TYPE = "WEB_UNSUPPORTED_CONTENT_TYPE"
    """Content webreach does not read (images, audio, video, archives), or an image a
    provider cannot take as given (a fallback list moves on to the next)."""
    WEB_PROVIDER_ERROR = "WEB_PROVIDER_ERROR"
    """A provider failed (an HTTP error, a service out of reach, an answer it could not
    read); when every provider of a chain failed, the message names each reason in order."""
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
