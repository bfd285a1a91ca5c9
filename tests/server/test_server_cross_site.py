"""Requests a web page in the user's browser could make to the server, over plain HTTP with the
headers a browser sends: a body not declared JSON is a 415, a keyless server refuses a foreign
Host (421) or Origin (403), and only the origins ``WEBREACH_SERVER_CORS_ORIGINS`` lists get
their preflights answered. The official SDKs keep working unchanged.

Before these checks, a ``text/plain`` POST from any page reached the model.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from cli_helpers import clean_env, run_cli
from scripted_upstream import ScriptedUpstream
from sdk_clients import anthropic_client, openai_client
from server_harness import LiveServer
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

KEY = "inbound-cross-site-key"
PAGE_ORIGIN = "http://127.0.0.1:5173"
"""Another loopback port: a local dev server's page, as far as the browser is concerned."""
USER = [{"role": "user", "content": "hi"}]
BODIES: dict[str, dict[str, Any]] = {
    "/v1/chat/completions": {"model": "m", "messages": USER},
    "/v1/responses": {"model": "m", "input": "hi"},
    "/v1/messages": {"model": "m", "max_tokens": 16, "messages": USER},
    "/v1/search": {"query": "q"},
    "/v1/fetch": {"url": "https://example.org/"},
    "/openwebui/search": {"query": "q", "count": 3},
    "/openwebui/loader": {"urls": ["https://example.org/"]},
}
NOT_JSON = [
    "text/plain",
    "text/plain;charset=UTF-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
]
"""The types a page may send anywhere without a preflight (a "simple" request)."""


def browser_headers(port: int, origin: str, content_type: str) -> dict[str, str]:
    """What headless Chromium 156 sends for a cross-origin ``fetch`` POST (recorded from it)."""
    return {
        "Host": f"127.0.0.1:{port}",
        "sec-ch-ua-platform": '"Linux"',
        "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "HeadlessChrome/156.0.0.0 Safari/537.36",
        "sec-ch-ua": '"Not:A-Brand";v="8", "Chromium";v="156"',
        "Content-Type": content_type,
        "sec-ch-ua-mobile": "?0",
        "Accept": "*/*",
        "Origin": origin,
        "Sec-Fetch-Site": "same-site",
        "Sec-Fetch-Mode": "cors",
        "Sec-Fetch-Dest": "empty",
        "Referer": origin + "/",
        "Accept-Encoding": "gzip, deflate, br, zstd",
        "Accept-Language": "en-US,en;q=0.9",
    }


@contextmanager
def serving(**settings: Any) -> Iterator[tuple[str, int, ScriptedUpstream]]:
    with ScriptedUpstream() as upstream:
        config = ServerSettings(upstream_base_url=upstream.url, **settings)
        with LiveServer(create_app(config, WebRuntime(), ToolOptions())) as server:
            yield server.url, int(server.url.rsplit(":", 1)[1]), upstream


@pytest.fixture(scope="module")
def keyless() -> Iterator[tuple[str, int, ScriptedUpstream]]:
    with serving() as served:
        yield served


@pytest.fixture
def upstream(keyless: tuple[str, int, ScriptedUpstream]) -> ScriptedUpstream:
    keyless[2].requests.clear()
    return keyless[2]


def message_of(path: str, response: httpx.Response, status: int) -> str:
    """The error's message, once its body proved to be the shape ``path``'s protocol speaks."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    if "messages" in path:
        assert body["type"] == "error"
        assert isinstance(body["error"]["type"], str)
        return str(body["error"]["message"])
    if path.startswith(("/v1/search", "/v1/fetch", "/openwebui")):
        assert set(body["error"]) == {"code", "message"}
        return f"{body['error']['code']}: {body['error']['message']}"
    assert set(body["error"]) == {"message", "type", "param", "code"}
    return str(body["error"]["message"])


# -- bodies that are not declared JSON -------------------------------------------------------


@pytest.mark.parametrize("content_type", NOT_JSON)
@pytest.mark.parametrize("path", list(BODIES))
def test_a_body_not_declared_json_is_415_on_every_post_route(
    keyless: tuple[str, int, ScriptedUpstream],
    upstream: ScriptedUpstream,
    path: str,
    content_type: str,
) -> None:
    url = keyless[0]
    response = httpx.post(
        url + path, content=json.dumps(BODIES[path]), headers={"Content-Type": content_type}
    )
    message = message_of(path, response, 415)
    assert "must be JSON" in message and "application/json" in message
    assert content_type.split(";")[0] in message
    if path.startswith(("/v1/search", "/v1/fetch", "/openwebui")):
        assert message.startswith("UNSUPPORTED_MEDIA_TYPE")
    assert upstream.requests == []


@pytest.mark.parametrize(
    "content_type", ["application/json", "Application/JSON; charset=utf-8", "application/x+json"]
)
def test_json_types_are_taken(
    keyless: tuple[str, int, ScriptedUpstream], upstream: ScriptedUpstream, content_type: str
) -> None:
    body = json.dumps(BODIES["/v1/chat/completions"])
    response = httpx.post(
        keyless[0] + "/v1/chat/completions", content=body, headers={"Content-Type": content_type}
    )
    assert response.status_code == 200, response.text
    assert len(upstream.requests) == 1


def test_a_body_without_a_content_type_is_taken_as_json(
    keyless: tuple[str, int, ScriptedUpstream], upstream: ScriptedUpstream
) -> None:
    """No SDK sends one; a browser's request without it still carries an Origin."""
    body = json.dumps(BODIES["/v1/messages"]).encode()
    response = httpx.post(keyless[0] + "/v1/messages", content=body)
    assert "content-type" not in response.request.headers
    assert response.status_code == 200, response.text


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_json_works_and_curl_d_alone_is_told_what_to_add(
    keyless: tuple[str, int, ScriptedUpstream], upstream: ScriptedUpstream
) -> None:
    """``curl -d`` declares a form (exactly what a page may send anywhere), so it is refused
    with the flag that fixes it; ``--json`` and an explicit header work."""
    url = keyless[0] + "/v1/chat/completions"
    body = json.dumps(BODIES["/v1/chat/completions"])

    def curl(*args: str) -> tuple[int, dict[str, Any]]:
        done = subprocess.run(
            ["curl", "-sS", "-w", "\n%{http_code}", *args, url],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        text, _, status = done.stdout.rpartition("\n")
        return int(status), json.loads(text)

    status, refused = curl("-d", body)
    assert status == 415
    assert "application/x-www-form-urlencoded" in refused["error"]["message"]
    assert "--json" in refused["error"]["message"]
    assert upstream.requests == []
    assert curl("--json", body)[0] == 200
    assert curl("-H", "Content-Type: application/json", "-d", body)[0] == 200
    assert len(upstream.requests) == 2


# -- a keyless server and foreign pages -------------------------------------------------------


@pytest.mark.parametrize("content_type", [NOT_JSON[0], "application/json"])
@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages", "/v1/search"])
def test_a_foreign_page_is_refused_403_naming_its_origin(
    keyless: tuple[str, int, ScriptedUpstream],
    upstream: ScriptedUpstream,
    path: str,
    content_type: str,
) -> None:
    url, port, _ = keyless
    headers = browser_headers(port, PAGE_ORIGIN, content_type)
    response = httpx.post(url + path, content=json.dumps(BODIES[path]), headers=headers)
    message = message_of(path, response, 403)
    assert PAGE_ORIGIN in message and "WEBREACH_SERVER_CORS_ORIGINS" in message
    assert "access-control-allow-origin" not in response.headers
    assert upstream.requests == []


@pytest.mark.parametrize("origin", ["null", "https://evil.example", "http://127.0.0.1"])
def test_origins_other_than_the_servers_own_are_refused(
    keyless: tuple[str, int, ScriptedUpstream], upstream: ScriptedUpstream, origin: str
) -> None:
    url, port, _ = keyless
    headers = browser_headers(port, origin, "application/json")
    response = httpx.post(
        url + "/v1/chat/completions", json=BODIES["/v1/chat/completions"], headers=headers
    )
    assert origin in message_of("/v1/chat/completions", response, 403)
    assert upstream.requests == []


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_the_servers_own_origin_is_taken(
    keyless: tuple[str, int, ScriptedUpstream], upstream: ScriptedUpstream, host: str
) -> None:
    url, port, _ = keyless
    headers = browser_headers(port, f"http://{host}:{port}", "application/json")
    headers["Host"] = f"{host}:{port}"
    response = httpx.post(
        url + "/v1/chat/completions", json=BODIES["/v1/chat/completions"], headers=headers
    )
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("content_type", [NOT_JSON[0], "application/json"])
def test_a_dns_rebinding_page_is_refused_421_naming_its_host(
    keyless: tuple[str, int, ScriptedUpstream], upstream: ScriptedUpstream, content_type: str
) -> None:
    """The page is served from the name it rebinds, so its JSON POSTs are same-origin: no
    preflight, and only the Host it sends tells it apart."""
    url, port, _ = keyless
    rebound = f"rebind.example:{port}"
    headers = browser_headers(port, f"http://{rebound}", content_type)
    headers.update({"Host": rebound, "Sec-Fetch-Site": "same-origin"})
    for path in ("/v1/chat/completions", "/v1/messages", "/v1/fetch"):
        response = httpx.post(url + path, content=json.dumps(BODIES[path]), headers=headers)
        message = message_of(path, response, 421)
        assert rebound in message and f"127.0.0.1:{port}" in message
    assert httpx.get(url + "/v1/models", headers={"Host": rebound}).status_code == 421
    assert upstream.requests == []


def test_a_host_with_another_port_or_loopback_address_is_refused(
    keyless: tuple[str, int, ScriptedUpstream],
) -> None:
    url, port, _ = keyless
    for host in (f"127.0.0.1:{port + 1}", f"127.0.0.2:{port}", f"[::1]:{port}", "127.0.0.1"):
        response = httpx.get(url + "/v1/models", headers={"Host": host})
        assert host in message_of("/v1/models", response, 421)
    assert httpx.get(url + "/v1/models", headers={"Host": f"LocalHost:{port}"}).status_code == 200


def test_a_preflight_from_a_foreign_page_is_not_answered(
    keyless: tuple[str, int, ScriptedUpstream], upstream: ScriptedUpstream
) -> None:
    url, port, _ = keyless
    headers = {
        "Host": f"127.0.0.1:{port}",
        "Origin": PAGE_ORIGIN,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
        "Sec-Fetch-Mode": "cors",
    }
    response = httpx.options(url + "/v1/messages", headers=headers)
    assert PAGE_ORIGIN in message_of("/v1/messages", response, 403)
    assert not any(name.startswith("access-control-allow") for name in response.headers)


def test_the_official_sdks_work_unchanged_against_a_keyless_server(
    keyless: tuple[str, int, ScriptedUpstream], upstream: ScriptedUpstream
) -> None:
    url = keyless[0]
    chat = openai_client(url + "/v1", "unused")
    completion = chat.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}]
    )
    assert completion.choices[0].message.content == "Hello from the scripted upstream."
    assert chat.responses.create(model="m", input="hi").output_text
    messages = anthropic_client(url, "unused")
    reply = messages.messages.create(
        model="m", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
    )
    assert reply.content[0].type == "text"
    assert len(upstream.requests) == 3


# -- listed origins --------------------------------------------------------------------------

SDK_HEADERS = "authorization,x-api-key,anthropic-version,content-type,x-stainless-os"


@pytest.mark.parametrize("keys", [None, KEY])
def test_a_listed_origins_preflight_is_answered_and_only_its_own(keys: str | None) -> None:
    with serving(server_cors_origins=PAGE_ORIGIN, server_api_keys=keys) as (url, port, upstream):
        preflight = {
            "Host": f"127.0.0.1:{port}",
            "Origin": PAGE_ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": SDK_HEADERS,
        }
        answered = httpx.options(url + "/v1/chat/completions", headers=preflight)
        assert answered.status_code == 200, answered.text
        assert answered.headers["access-control-allow-origin"] == PAGE_ORIGIN
        assert "POST" in answered.headers["access-control-allow-methods"]
        allowed = {h.strip() for h in answered.headers["access-control-allow-headers"].split(",")}
        assert set(SDK_HEADERS.split(",")) <= allowed

        other = "http://127.0.0.1:5174"
        refused = httpx.options(
            url + "/v1/chat/completions", headers={**preflight, "Origin": other}
        )
        assert other in message_of("/v1/chat/completions", refused, 403)
        assert "access-control-allow-origin" not in refused.headers

        auth = {"Authorization": f"Bearer {KEY}"} if keys else {}
        body = BODIES["/v1/chat/completions"]
        sent = browser_headers(port, PAGE_ORIGIN, "application/json") | auth
        done = httpx.post(url + "/v1/chat/completions", json=body, headers=sent)
        assert done.status_code == 200, done.text
        assert done.headers["access-control-allow-origin"] == PAGE_ORIGIN
        assert "x-request-id" in done.headers["access-control-expose-headers"].lower()

        elsewhere = httpx.post(
            url + "/v1/chat/completions", json=body, headers={**sent, "Origin": other}
        )
        assert "access-control-allow-origin" not in elsewhere.headers
        # Keys protect a keyed server from any origin, as before; a keyless one refuses it.
        assert elsewhere.status_code == (200 if keys else 403), elsewhere.text
        assert len(upstream.requests) == (2 if keys else 1)


def test_a_keyed_server_works_from_any_origin_and_host() -> None:
    with serving(server_api_keys=KEY) as (url, port, upstream):
        headers = browser_headers(port, "https://anywhere.example", "application/json")
        headers.update({"Host": "webreach.internal:8080", "Authorization": f"Bearer {KEY}"})
        body = BODIES["/v1/chat/completions"]
        response = httpx.post(url + "/v1/chat/completions", json=body, headers=headers)
        assert response.status_code == 200, response.text
        assert "access-control-allow-origin" not in response.headers
        unkeyed = {k: v for k, v in headers.items() if k != "Authorization"}
        assert (
            httpx.post(url + "/v1/chat/completions", json=body, headers=unkeyed).status_code == 401
        )
        form = headers | {"Content-Type": NOT_JSON[1]}
        refused = httpx.post(url + "/v1/chat/completions", content=json.dumps(body), headers=form)
        assert "must be JSON" in message_of("/v1/chat/completions", refused, 415)
        assert len(upstream.requests) == 1


# -- the setting ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "wanted"),
    [
        ("*", "must list origins"),
        ("http://localhost:3000/app", "is not an origin"),
        ("localhost:3000", "is not an origin"),
        ("ftp://files.example", "is not an origin"),
    ],
)
def test_a_value_that_is_not_an_origin_is_refused(value: str, wanted: str) -> None:
    with pytest.raises(ValidationError, match=wanted):
        ServerSettings(server_cors_origins=value)


def test_origins_are_kept_as_a_browser_writes_them() -> None:
    settings = ServerSettings(server_cors_origins="HTTP://LocalHost:3000/, https://app.example:443")
    assert settings.cors_origins() == ("http://localhost:3000", "https://app.example")


def test_webreach_config_shows_the_setting_and_refuses_a_bad_one() -> None:
    shown = run_cli("config", env=clean_env(WEBREACH_SERVER_CORS_ORIGINS="http://localhost:3000"))
    assert shown.returncode == 0, shown.stderr
    line = next(
        line for line in shown.stdout.splitlines() if "WEBREACH_SERVER_CORS_ORIGINS" in line
    )
    assert "http://localhost:3000" in line
    refused = run_cli("config", env=clean_env(WEBREACH_SERVER_CORS_ORIGINS="*"))
    assert refused.returncode == 2
    assert (
        "WEBREACH_SERVER_CORS_ORIGINS" in refused.stderr and "must list origins" in refused.stderr
    )
