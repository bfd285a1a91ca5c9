"""A path the server does not serve (404) or a method a path does not take (405) is answered in
the documented JSON error shape, the protocol's own when the path belongs to one, naming what
was asked. Before, both were Starlette's plain text on every route."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import httpx
import openai
import pytest

from scripted_upstream import ScriptedUpstream
from sdk_clients import anthropic_client, openai_client
from server_harness import LiveServer
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with ScriptedUpstream() as upstream:
        config = ServerSettings(upstream_base_url=upstream.url)
        with LiveServer(create_app(config, WebRuntime(), ToolOptions())) as server:
            yield server.url


def openai_error(response: httpx.Response) -> dict[str, object]:
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] in ("invalid_request_error", "not_found_error")
    return dict(error)


def anthropic_error(response: httpx.Response) -> dict[str, object]:
    body = response.json()
    assert body["type"] == "error"
    assert set(body["error"]) == {"type", "message"}
    return dict(body["error"])


def web_error(response: httpx.Response) -> dict[str, object]:
    error = response.json()["error"]
    assert set(error) == {"code", "message"}
    return dict(error)


SHAPES = {"openai": openai_error, "anthropic": anthropic_error, "web": web_error}


@pytest.mark.parametrize(
    ("method", "path", "shape", "allow"),
    [
        ("GET", "/v1/chat/completions", "openai", "POST"),
        ("PUT", "/chat/completions", "openai", "POST"),
        ("GET", "/v1/responses", "openai", "POST"),
        ("GET", "/v1/messages", "anthropic", "POST"),
        ("DELETE", "/anthropic/v1/messages", "anthropic", "POST"),
        ("POST", "/v1/models", "openai", "GET, HEAD"),
        ("GET", "/v1/search", "web", "POST"),
        ("GET", "/openwebui/loader", "web", "POST"),
    ],
)
def test_a_method_a_path_does_not_take_is_405_with_allow(
    url: str, method: str, path: str, shape: str, allow: str
) -> None:
    response = httpx.request(method, url + path, json={})
    assert response.status_code == 405, response.text
    assert response.headers["content-type"] == "application/json"
    # Starlette keeps a route's methods in a set: their order varies.
    assert set(response.headers["allow"].split(", ")) == set(allow.split(", "))
    error = SHAPES[shape](response)
    assert method in str(error["message"]) and path in str(error["message"])
    if shape == "web":
        assert error["code"] == "METHOD_NOT_ALLOWED"


@pytest.mark.parametrize(
    ("method", "path", "shape"),
    [
        ("POST", "/v1/messages/nope", "anthropic"),
        ("POST", "/v1/messages/count_tokens", "anthropic"),
        ("GET", "/v1/responses/resp_123", "openai"),
        ("POST", "/v1/chat/completions/x", "openai"),
        ("GET", "/nope", "openai"),
        ("POST", "/v2/anything", "openai"),
        ("POST", "/v1/search/deep", "web"),
    ],
)
def test_an_unknown_path_is_404_in_the_shape_of_the_protocol_it_lies_under(
    url: str, method: str, path: str, shape: str
) -> None:
    response = httpx.request(method, url + path, json={})
    assert response.status_code == 404, response.text
    assert response.headers["content-type"] == "application/json"
    error = SHAPES[shape](response)
    assert f"{method} {path}" in str(error["message"])
    if shape == "anthropic":
        assert error["type"] == "not_found_error"
    if shape == "web":
        assert error["code"] == "NOT_FOUND"


def test_the_sdks_read_a_404_as_their_own_not_found_error(url: str) -> None:
    chat = openai_client(url + "/v1", "unused")
    with pytest.raises(openai.NotFoundError) as raised:
        chat.models.retrieve("m")
    assert "GET /v1/models/m" in raised.value.message
    messages = anthropic_client(url, "unused")
    with pytest.raises(anthropic.NotFoundError) as found:
        messages.messages.count_tokens(model="m", messages=[{"role": "user", "content": "hi"}])
    assert "POST /v1/messages/count_tokens" in str(found.value)
    assert found.value.body == {
        "type": "error",
        "error": {
            "type": "not_found_error",
            "message": "POST /v1/messages/count_tokens: no such endpoint on this server",
        },
    }
