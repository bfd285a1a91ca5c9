"""How an upstream's failure becomes the client's error and the operator's log line.

Every upstream text passes through the server's :class:`~.secrets.Redactor` before it is put in
an error: a client and the log see the upstream's words, never a key.
"""

from __future__ import annotations

from collections.abc import Mapping

import openai

from ...seam.causes import network_cause
from .errors import UpstreamError
from .operator_log import upstream_failure
from .secrets import Redactor

__all__ = [
    "REJECTED_CREDENTIALS",
    "broken",
    "passed_headers",
    "status_error",
    "translate",
]

REJECTED_CREDENTIALS = (
    "the upstream rejected the server's credentials (check WEBREACH_UPSTREAM_API_KEY)"
)
"""What a client sees for an upstream 401/403: its own key was fine, the server's was not."""
_PASSED_HEADERS = ("retry-after",)


def passed_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The upstream's response headers a client needs to act on an error (``Retry-After``)."""
    return {name: headers[name] for name in _PASSED_HEADERS if name in headers}


def status_error(
    status: int, message: str, headers: Mapping[str, str], redactor: Redactor
) -> UpstreamError:
    """An upstream's refusal as the client should see it: its credentials problem is ours."""
    if status in (401, 403):
        return UpstreamError(502, REJECTED_CREDENTIALS)
    return UpstreamError(status, redactor(message), passed_headers(headers))


def broken(message: str, cause: str, where: str, status: int = 502) -> UpstreamError:
    """The upstream answered, but not as an upstream should (an error event, a malformed or
    truncated stream, a body that is not one): a 502 for the client, a warning that names the
    upstream for the operator. ``message`` must already be redacted."""
    upstream_failure(status, message, cause, f"{message} ({where})")
    return UpstreamError(status, message)


def _error_message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return error.message


def translate(error: Exception, redactor: Redactor, where: str | None = None) -> UpstreamError:
    """The client's error for a failed upstream call, logged with its cause: the status the
    upstream answered, or what failed on the network (refused, DNS, TLS, timeout), which the
    SDK's own class often misnames (a refused connection is an ``APITimeoutError``)."""
    if isinstance(error, openai.APIStatusError):
        headers = {k.lower(): v for k, v in error.response.headers.items()}
        status = error.status_code
        failure = status_error(status, _error_message(error), headers, redactor)
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
