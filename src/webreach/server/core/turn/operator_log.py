"""What the operator's log says about requests: one record per request, filled in as it runs
and written as the access line when it ends, and one line per failed web call or upstream call.

The record travels in a context variable, so a web call deep in the loop reaches its request's
record (and id) without being handed it; tasks started for the request inherit it. Failure
lines carry the provider, the cause as one short word (``dns``, ``refused``, ``http_401`` …) and
the failure's own message, which never holds a key; URLs lose their query and fragment, where
signatures and tokens live.
"""

from __future__ import annotations

import logging
import os
import re
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Literal

from ....seam import WebError, WebErrorCode
from .events import Usage

__all__ = [
    "RequestLog",
    "WebTool",
    "begin_request",
    "cause_of",
    "end_request",
    "request_log",
    "scrub_urls",
    "upstream_failure",
    "web_failure",
]

logger = logging.getLogger("webreach.server")

WebTool = Literal["search", "fetch", "image_search"]


@dataclass(slots=True)
class RequestLog:
    """One request as its access line tells it; endpoints and web calls fill it in."""

    id: str
    protocol: str = "-"
    stream: bool | None = None
    searches: int = 0
    fetches: int = 0
    web_errors: int = 0
    """Web calls that failed (each also has its own warning line)."""
    note: str | None = None
    """Why it ended as it did, when not well: the error a client was sent, a stream's failure."""
    usage: Usage | None = None
    """The loop's counters, read when the request ends."""
    key: str | None = None
    """The name of the inbound key the request came with (never the key)."""
    user: str | None = None
    """The end user a front end named (Open WebUI's ``X-OpenWebUI-User-*`` headers)."""
    unanswered: list[str] = field(default_factory=list)
    """Why each upstream call that got no HTTP answer failed (``timeout``, ``refused``…)."""

    def spent(self) -> tuple[int, int]:
        """Searches (image searches included) and fetches that ran, for the key's quota: a
        call refused or failed before it ran costs nothing."""
        usage = self.usage
        if usage is None:
            return self.searches, self.fetches
        return (
            self.searches + usage.tool_search + usage.tool_image_search,
            self.fetches + usage.tool_fetch,
        )

    def tokens(self) -> tuple[int, int]:
        """Upstream input and output tokens the request used."""
        usage = self.usage
        return (usage.input_tokens, usage.output_tokens) if usage is not None else (0, 0)

    def counts(self) -> tuple[int, int]:
        """Searches (image searches included) and fetches made for the request."""
        usage = self.usage
        if usage is None:
            return self.searches, self.fetches
        return (
            self.searches + usage.web_search_requests,
            self.fetches + usage.web_fetch_requests,
        )


_current: ContextVar[RequestLog | None] = ContextVar("webreach_request", default=None)


_GIVEN_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def begin_request(
    protocol: str, given_id: str | None = None
) -> tuple[RequestLog, Token[RequestLog | None]]:
    """The request's record, named by the ``X-Request-Id`` a proxy gave it when that is a
    plain token (so its lines join the proxy's), else by a fresh random id."""
    known = given_id if given_id and _GIVEN_ID.fullmatch(given_id) else None
    record = RequestLog(known or os.urandom(4).hex(), protocol)
    return record, _current.set(record)


def end_request(token: Token[RequestLog | None]) -> None:
    _current.reset(token)


def request_log() -> RequestLog:
    """The running request's record (a detached one outside a request, so callers need not
    care)."""
    record = _current.get()
    return record if record is not None else RequestLog("-")


def current_id() -> str | None:
    record = _current.get()
    return record.id if record is not None else None


_URL_TAIL = re.compile(r"(https?://[^\s?#'\"<>]*)[?#][^\s'\"<>)\]]*", re.IGNORECASE)


def scrub_urls(text: str) -> str:
    """``text`` with every URL's query and fragment replaced by ``?…`` (signed URLs)."""
    return _URL_TAIL.sub(r"\1?…", text) if "://" in text else text


_REFUSED = frozenset(
    {
        WebErrorCode.INVALID_ARGUMENTS,
        WebErrorCode.WEB_INVALID_URL,
        WebErrorCode.WEB_BLOCKED_URL,
        WebErrorCode.WEB_REDIRECT_BLOCKED,
        WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE,
        WebErrorCode.WEB_FETCH_TOO_LARGE,
        WebErrorCode.WEB_ROBOTS_DISALLOWED,
        WebErrorCode.WEB_BOT_CHALLENGE,
    }
)
"""Refusals by policy or of what was asked, not failures of a provider: info, not warning."""
_WORDS = (
    (("dns lookup",), "dns"),
    (("connection refused",), "refused"),
    (("tls", "ssl", "certificate"), "tls"),
    (("network unreachable", "network is unreachable", "no route to host"), "unreachable"),
    (("timed out", "took longer than", "timeout"), "timeout"),
    (("connection closed", "connection lost"), "closed"),
)
"""The seam's and providers' own phrases for network causes (``webreach.seam.causes``)."""


def cause_of(error: WebError) -> str:
    """One word for why a web call failed: the HTTP status a provider answered, the network
    cause its message names, else the error code."""
    code = error.code
    if code in _REFUSED:
        return code.value.lower().removeprefix("web_")
    if error.status is not None:
        return f"http_{error.status}"
    if code is WebErrorCode.WEB_FETCH_TIMEOUT:
        return "timeout"
    said = error.message.lower()
    for words, cause in _WORDS:
        if any(word in said for word in words):
            return cause
    return code.value.lower().removeprefix("web_")


def web_failure(
    tool: WebTool,
    error: WebError | None = None,
    *,
    url: str | None = None,
    status: int | None = None,
    provider: str | None = None,
) -> None:
    """A failed search, fetch or image search: counted on the request and logged, a warning
    when a provider failed, info when policy refused it or the page answered an HTTP error."""
    request_log().web_errors += 1
    if error is not None:
        cause, level = cause_of(error), logging.WARNING
        if error.code in _REFUSED:
            level = logging.INFO
        message, code = error.message, error.code.value
        provider, status = error.provider or provider, error.status
    else:
        cause, level, code = f"http_{status}", logging.INFO, None
        message = f"{url} answered HTTP {status}"
    if not logger.isEnabledFor(level):
        return
    verb = "refused" if level == logging.INFO and error is not None else "failed"
    fields = {
        "provider": provider,
        "cause": cause,
        "status": status,
        "code": code,
        "url": scrub_urls(url) if url else None,
    }
    logger.log(
        level,
        "%s %s: %s",
        tool.replace("_", " "),
        verb,
        scrub_urls(message),
        extra={"event": f"{tool}_failed", "fields": fields},
    )


def upstream_failure(
    status: int, message: str, cause: str | None, detail: str | None = None
) -> None:
    """The upstream model could not be reached or refused: ``message`` is what the client was
    told, ``detail`` (when given) the same with the upstream's address, for the operator only.
    A warning, unless the upstream refused the client's own request (another 4xx)."""
    operator = cause is None or not cause.startswith("http_") or status >= 500
    level = logging.WARNING if operator or status in (401, 403, 429) else logging.INFO
    if logger.isEnabledFor(level):
        logger.log(
            level,
            "upstream failed: %s",
            detail or message,
            extra={"event": "upstream_failed", "fields": {"cause": cause, "status": status}},
        )
