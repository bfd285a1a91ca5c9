"""One error family: everything webreach raises on purpose is a ``WebreachError``."""

from __future__ import annotations

import pytest

from webreach.config import ConfigError, load_settings
from webreach.seam import WebError, WebErrorCode, WebreachError, WebRuntime
from webreach.server.core.turn.errors import RequestError, ServerFailure, UpstreamError
from webreach.tools import ToolError, ToolOptions, web_search_tool


async def test_a_tool_error_is_a_web_error_with_an_enum_code() -> None:
    tool = web_search_tool(WebRuntime(), ToolOptions())
    with pytest.raises(WebError) as caught:
        await tool.execute({"queries": []})
    assert isinstance(caught.value, ToolError)
    assert caught.value.code is WebErrorCode.INVALID_ARGUMENTS
    assert caught.value.code == "INVALID_ARGUMENTS"


def test_a_provider_failure_keeps_its_retry_after_through_the_tool() -> None:
    error = WebError(WebErrorCode.WEB_PROVIDER_ERROR, "brave: rate limited", retry_after=2.0)
    tool_error = ToolError.from_web_error(error)
    assert tool_error.retry_after == 2.0
    assert tool_error.to_json()["error"]["retry_after"] == 2.0


def test_settings_errors_belong_to_the_family(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBREACH_SEARCH_MAX_QUERIES", "many")
    with pytest.raises(WebreachError) as caught:
        load_settings()
    assert isinstance(caught.value, ConfigError)
    assert "WEBREACH_SEARCH_MAX_QUERIES" in caught.value.message


@pytest.mark.parametrize(
    "error",
    [
        RequestError("model: Field required"),
        ServerFailure(500, "failed"),
        UpstreamError(502, "upstream unreachable"),
        WebError("WEB_BLOCKED_URL", "blocked"),
    ],
)
def test_server_errors_belong_to_the_family(error: WebreachError) -> None:
    assert isinstance(error, WebreachError)
    assert error.message
