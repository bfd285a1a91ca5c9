"""How an upstream's failure becomes the client's error and the operator's log line.

Every upstream text passes through the server's :class:`~.secrets.Redactor` before it is put in
an error: a client and the log see the upstream's words, never a key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

import openai
from selectolax.lexbor import LexborHTMLParser

from ....seam.causes import network_cause
from ..turn.errors import UpstreamError
from ..turn.operator_log import request_log, upstream_failure
from .secrets import Redactor

__all__ = [
    "REJECTED_CREDENTIALS",
    "broken",
    "client_status",
    "passed_headers",
    "refused",
    "status_error",
    "translate",
]

REJECTED_CREDENTIALS = (
    "the upstream rejected the server's credentials (check WEBREACH_UPSTREAM_API_KEY)"
)
"""What a client sees for an upstream 401/403: its own key was fine, the server's was not."""
_PASSED_HEADERS = ("retry-after",)
_EXCERPT = 200
"""The most of an error body that is not a JSON error passed on (after redaction)."""
_READ = 64 << 10
"""The most of such a body looked at: its start is what is shown."""
_REDACTED = _EXCERPT + 4096
"""The text redacted before the cut: longer than any key, so none survives in part."""


def passed_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The upstream's response headers a client needs to act on an error (``Retry-After``)."""
    return {name: headers[name] for name in _PASSED_HEADERS if name in headers}


def client_status(status: int) -> int:
    """The status a client gets for an upstream's HTTP error.

    A 4xx is about the request (429 and its ``Retry-After`` included) and passes on; an
    upstream's own failure is a gateway's: 503 (overloaded, come back later) and 504 keep their
    meaning, every other 5xx is a 502, so a client never reads the upstream's crash as the
    server's own 500. A 408 is the upstream's timeout reading the server's request (504), and
    401/403/407 are the server's credentials, not the client's (502).
    """
    if status in (401, 403, 407):
        return 502
    if status == 408:
        return 504
    if status < 500:
        return status
    return status if status in (503, 504) else 502


def status_error(
    status: int, message: str, headers: Mapping[str, str], redactor: Redactor
) -> UpstreamError:
    """An upstream's refusal as the client should see it: its credentials problem is ours."""
    if status in (401, 403, 407):
        return UpstreamError(502, REJECTED_CREDENTIALS)
    return UpstreamError(client_status(status), redactor(message), passed_headers(headers))


def broken(message: str, cause: str, where: str, status: int = 502) -> UpstreamError:
    """The upstream answered, but not as an upstream should (an error event, a malformed or
    truncated stream, a body that is not one): a 502 for the client, a warning that names the
    upstream for the operator. ``message`` must already be redacted."""
    upstream_failure(status, message, cause, f"{message} ({where})")
    return UpstreamError(status, message)


def excerpt(body: str, content_type: str, redactor: Redactor) -> str:
    """The start of an error body as one line of text: an HTML page reduced to its words,
    whitespace and control characters folded, secrets hidden before it is cut (so no key is
    cut in half)."""
    kind = content_type.split(";")[0].strip().lower()
    body = body[:_READ]
    if "html" in kind or body.lstrip().startswith("<"):
        tree = LexborHTMLParser(body)
        tree.strip_tags(["script", "style"])
        body = tree.text(separator=" ")
    words = " ".join(body.split())[:_REDACTED]
    text = redactor(" ".join("".join(c if c.isprintable() else " " for c in words).split()))
    if not text:
        return "(an empty body)"
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"


def _words(body: object, content_type: str, redactor: Redactor) -> tuple[str, bool]:
    """What an error body says, redacted, and whether it was a JSON error carrying a message
    (which a client's SDK reads as it is)."""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        text = body
        try:
            body = json.loads(text)
        except ValueError:
            return excerpt(text, content_type, redactor), False
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return redactor(str(inner["message"])), True
    if body is None:
        return excerpt("", content_type, redactor), False
    return excerpt(json.dumps(body, ensure_ascii=False), content_type, redactor), False


_TOOLS = re.compile(r"\btools?\b|\btool[ _-]?(calling|use|choice|call)|function[ _-]?calling")


def no_api_at(path: str) -> str:
    """What a 404 (or a web page) where the API should be most often means: a base URL
    without its ``/v1`` (Ollama's is ``http://host:11434/v1``). No address: clients read it;
    the operator's log line adds it."""
    return f"the upstream has no {path}: does WEBREACH_UPSTREAM_BASE_URL end in /v1?"


def refuses_tools(said: str) -> bool:
    """Whether an upstream's refusal is about tools, as a model without tool calling is
    refused (Ollama: "registry.ollama.ai/library/gemma3:4b does not support tools")."""
    return _TOOLS.search(said.lower()) is not None


def refused(
    status: int,
    body: object,
    content_type: str,
    headers: Mapping[str, str],
    redactor: Redactor,
    where: str | None,
) -> tuple[UpstreamError, bool]:
    """An upstream's HTTP error as the client's error, logged with the upstream's address and
    what its body said; and whether that body was a JSON error a client can be given as is.

    A JSON error's message is passed on as the upstream wrote it; any other body (a proxy's
    HTML page, a plain-text 502) becomes "upstream answered HTTP <status>: <its first words>".
    """
    said, is_json = _words(body, content_type, redactor)
    message = said if is_json else f"upstream answered HTTP {status}: {said}"
    if status == 404 and not is_json:
        message = f"{no_api_at('/chat/completions')} ({message})"
    elif status == 400 and refuses_tools(said):
        message = (
            "the upstream model refused tool calling, which web search needs: choose a model "
            f"that supports tool calling (the upstream said: {said})"
        )
    failure = status_error(status, message, headers, redactor)
    detail = f"upstream {where or '?'} answered HTTP {status}: {said}"
    if status in (401, 403, 407):
        detail = f"{failure.message}; {detail}"
    upstream_failure(status, failure.message, f"http_{status}", detail)
    return failure, is_json


def translate(
    error: Exception, redactor: Redactor, where: str | None = None, *, answered: bool = False
) -> UpstreamError:
    """The client's error for a failed upstream call, logged with its cause: the status the
    upstream answered, or what failed on the network (refused, DNS, TLS, timeout), which the
    SDK's own class often misnames (a refused connection is an ``APITimeoutError``).
    ``answered``: the failure came after the upstream's answer began (a cut body), so the
    call is not counted as one without an answer."""
    if isinstance(error, openai.APIStatusError):
        headers = {k.lower(): v for k, v in error.response.headers.items()}
        kind = headers.get("content-type", "")
        return refused(error.status_code, error.body, kind, headers, redactor, where)[0]
    cause = network_cause(error)
    if not answered:
        request_log().unanswered.append(cause.kind if cause is not None else "other")
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
