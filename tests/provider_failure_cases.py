"""The failures every keyed JSON search provider maps the same way, for the per-provider replay
tests of kimi, parallel and synthetic: each answer, and how its error message begins."""

from __future__ import annotations

import pytest

from replay_server import Reply
from webreach.seam import WebError, WebErrorCode

FAILURES = [
    pytest.param(
        Reply(401, json={"error": "bad key"}), "authorization failed (HTTP 401)", id="401"
    ),
    pytest.param(Reply(403, json={}), "authorization failed (HTTP 403)", id="403"),
    pytest.param(
        Reply(429, json={}, headers={"retry-after": "2"}),
        "rate limited (HTTP 429), retry after 2 s",
        id="429-retry-after",
    ),
    pytest.param(Reply(500, json={}), "server error (HTTP 500)", id="500"),
    pytest.param(Reply(503, json={}), "server error (HTTP 503)", id="503"),
    pytest.param(Reply(422, json={}), "request rejected (HTTP 422)", id="422"),
    pytest.param(Reply(body=b"<html>oops</html>"), "the response is not valid JSON", id="bad-json"),
    pytest.param(Reply(json={"unrelated": []}), "unexpected response shape", id="missing-field"),
    pytest.param(Reply(json=["not", "an", "object"]), "unexpected response shape", id="not-object"),
]


def check_failure(error: WebError, pid: str, reply: Reply, expected: str) -> None:
    """``error`` is the provider error ``reply`` should have caused, naming ``pid``."""
    assert error.code == WebErrorCode.WEB_PROVIDER_ERROR
    assert error.provider == pid
    assert error.message.startswith(f"{pid}: {expected}"), error.message
    if reply.status >= 400:
        assert error.status == reply.status
    if "retry-after" in reply.headers:
        assert error.retry_after == 2.0
