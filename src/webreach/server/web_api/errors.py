"""One error shape for the search and fetch endpoints, and the HTTP status of each failure.

Every refusal and failure is ``{"error": {"code", "message", …}}`` with a status a generic
HTTP client can act on: the tools' ``WEB_…`` codes map to 4xx for what the caller asked and
to 502 / 503 / 504 for what the providers could not do. Messages are the seam's, which never
carry credentials.
"""

from __future__ import annotations

import math
import re

from starlette.responses import Response

from ...seam import WebError, WebErrorCode
from ..core.turn.errors import RequestError
from ..core.wire.fields import JSON
from ..core.wire.framing import dumps

__all__ = [
    "INTERNAL_ERROR",
    "NOT_ENABLED",
    "RATE_LIMITED",
    "REQUEST_TOO_LARGE",
    "UNAUTHORIZED",
    "error_body",
    "error_response",
    "json_response",
    "rate_limited_body",
    "request_error_response",
    "status_of",
    "unauthorized_body",
    "web_error_response",
]

UNAUTHORIZED = "UNAUTHORIZED"
REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE"
NOT_ENABLED = "NOT_ENABLED"
INTERNAL_ERROR = "INTERNAL_ERROR"
RATE_LIMITED = "RATE_LIMITED"
"""A key past one of its limits (requests a minute, its day's searches or fetches)."""

_STATUS: dict[WebErrorCode, int] = {
    WebErrorCode.INVALID_ARGUMENTS: 400,
    WebErrorCode.WEB_INVALID_URL: 400,
    WebErrorCode.WEB_BLOCKED_URL: 403,
    WebErrorCode.WEB_REDIRECT_BLOCKED: 422,
    WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE: 422,
    WebErrorCode.WEB_FETCH_TOO_LARGE: 422,
    WebErrorCode.WEB_BOT_CHALLENGE: 502,
    WebErrorCode.WEB_ROBOTS_DISALLOWED: 403,
    WebErrorCode.WEB_PROVIDER_ERROR: 502,
    WebErrorCode.WEB_ABORTED: 502,
    WebErrorCode.WEB_FETCH_TIMEOUT: 504,
    WebErrorCode.WEB_PROVIDER_UNAVAILABLE: 503,
    WebErrorCode.WEB_PROVIDER_CONFIGURED_MISSING: 503,
    WebErrorCode.WEB_PROVIDER_CONFIGURED_UNAVAILABLE: 503,
    WebErrorCode.WEB_PROVIDER_AMBIGUOUS: 503,
    WebErrorCode.WEB_DUPLICATE_PROVIDER: 503,
}
"""The caller's mistakes are 4xx; a provider that failed is 502, one that took too long 504,
and a server with no usable provider 503 (its message says which setting to change)."""

_FIELD = re.compile(r"`([A-Za-z_]+)")
_ABOUT_THE_URL = frozenset({WebErrorCode.WEB_INVALID_URL, WebErrorCode.WEB_BLOCKED_URL})


def status_of(error: WebError) -> int:
    """A provider's own rate limit stays a 429, so clients back off as they would anyway."""
    if error.code is WebErrorCode.WEB_PROVIDER_ERROR and error.status == 429:
        return 429
    return _STATUS.get(error.code, 502)


def json_response(status: int, body: object, headers: dict[str, str] | None = None) -> Response:
    return Response(dumps(body).encode(), status, headers, media_type="application/json")


def error_body(
    code: str,
    message: str,
    *,
    param: str | None = None,
    provider: str | None = None,
    retry_after: float | None = None,
) -> JSON:
    error: JSON = {"code": code, "message": message}
    if param is not None:
        error["param"] = param
    if provider is not None:
        error["provider"] = provider
    if retry_after is not None:
        error["retry_after"] = retry_after
    return {"error": error}


def error_response(status: int, code: str, message: str, *, param: str | None = None) -> Response:
    return json_response(status, error_body(code, message, param=param))


def rate_limited_body(message: str) -> JSON:
    """The 429 of a key past one of its limits on these paths."""
    return error_body(RATE_LIMITED, message)


def unauthorized_body(message: str) -> JSON:
    """The 401 the server's key check answers on these paths."""
    return error_body(UNAUTHORIZED, message)


def request_error_response(error: RequestError) -> Response:
    """A refused request: 413 for a body over the limit, else the 4xx naming the field."""
    if error.status == 413:
        return error_response(413, REQUEST_TOO_LARGE, error.message)
    code = WebErrorCode.INVALID_ARGUMENTS.value if error.status == 400 else "INVALID_REQUEST"
    return error_response(error.status, code, error.message, param=error.param)


def web_error_response(error: WebError) -> Response:
    """A tool or seam failure; an invalid argument or URL names its field as ``param``, as
    refusals of the request body do."""
    param = None
    if error.code is WebErrorCode.INVALID_ARGUMENTS:
        named = _FIELD.search(error.message)
        param = named.group(1) if named else None
    elif error.code in _ABOUT_THE_URL:
        param = "url"
    headers = None
    if error.retry_after is not None:
        headers = {"Retry-After": str(max(1, math.ceil(error.retry_after)))}
    body = error_body(
        error.code.value,
        error.message,
        param=param,
        provider=error.provider,
        retry_after=error.retry_after,
    )
    return json_response(status_of(error), body, headers)
