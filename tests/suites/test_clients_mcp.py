"""Tool errors and results of a real ``webreach mcp`` as each MCP client shows them: the Python
SDK's ``Client``, the TypeScript SDK's v1 ``Client`` (``tests/clients/mcp_sdk.mjs``, over
``StdioClientTransport`` and ``StreamableHTTPClientTransport``) and the MCP Inspector's CLI.

A failed call is ``isError: true`` with the model's text and the code under ``_meta``
``webreach/error``, and no ``structuredContent``: clients that check structured content against
the tool's ``outputSchema`` (the TypeScript SDK, the Inspector) would otherwise throw the error
away for not matching it. A result still matches the schema, as the TypeScript client checks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import test_mcp
from clients.matrix import HERE, node, node_case
from replay_server import Recorded, ReplayServer, Reply
from test_mcp import EXA_RESPONSE, PAGE, Connect, server_env, text_of
from webreach.tools.mcp.calls import OUTPUT_SCHEMAS

connect = test_mcp.connect  # a fresh ``webreach mcp`` per transport, for the Python client
http_servers = test_mcp.http_servers

INSPECTOR = HERE / "node_modules" / "@modelcontextprotocol" / "inspector" / "cli" / "build"
SERVER = [sys.executable, "-m", "webreach", "mcp"]
FAILING_QUERY = "the provider fails"
ERROR_META_KEY = "webreach/error"


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    arguments: dict[str, Any]
    """``{replay}`` in a string stands for the replay server's URL."""
    code: str | None = None
    """The error code the call fails with; ``None`` for a result."""
    says: str = ""
    """Words the error's message holds."""

    def arguments_on(self, replay: ReplayServer) -> dict[str, Any]:
        return {
            name: value.format(replay=replay.url) if isinstance(value, str) else value
            for name, value in self.arguments.items()
        }


CASES = [
    Case("search-result", "web_search", {"queries": ["python 3.13"]}),
    Case(
        "search-provider-error",
        "web_search",
        {"queries": [FAILING_QUERY]},
        "WEB_PROVIDER_ERROR",
        "401",
    ),
    Case(
        "search-queries-not-an-array",
        "web_search",
        {"queries": "python"},
        "INVALID_ARGUMENTS",
        "`queries` must be an array of strings, not a string",
    ),
    Case("fetch-result", "web_fetch", {"url": "{replay}/page"}),
    Case(
        "fetch-blocked-url",
        "web_fetch",
        {"url": "http://10.20.30.40/admin"},
        "WEB_BLOCKED_URL",
        "10.20.30.40 is a private, local or reserved address",
    ),
    Case(
        "fetch-url-not-a-string",
        "web_fetch",
        {"url": 42},
        "INVALID_ARGUMENTS",
        "`url` must be a string",
    ),
]
"""Per tool, a result, a web error and an invalid argument."""
STDIO_CASES = ("search-queries-not-an-array", "fetch-blocked-url")
"""The Inspector starts a server for each call over stdio: one error per tool there."""


@pytest.fixture
def env(replay: ReplayServer) -> dict[str, str]:
    """The server's settings: Exa on the replay, which fails one query, and the page on it."""

    def search(request: Recorded) -> Reply:
        if request.json()["query"] == FAILING_QUERY:
            return Reply(401, json={"error": "bad key"})
        return Reply(json=EXA_RESPONSE)

    replay.route("POST", "/search", search)
    replay.route("GET", "/page", Reply(body=PAGE, headers={"content-type": "text/html"}))
    return server_env(replay, WEBREACH_SEARCH_CONTEXT_SIZE="low")


@pytest.fixture
def http_url(
    env: dict[str, str], tmp_path: Path, http_servers: list[subprocess.Popen[bytes]]
) -> Iterator[str]:
    """A ``webreach mcp --http`` process serving these settings."""
    port, log = test_mcp.free_port(), tmp_path / "http-server.log"
    http_servers.append(
        test_mcp.spawn([*SERVER, "--http", "--port", str(port)], env, tmp_path, log)
    )
    test_mcp.wait_until_listening(http_servers[-1], port, log)
    yield f"http://127.0.0.1:{port}/mcp"
    assert "Traceback" not in log.read_text()


def assert_shown(case: Case, result: dict[str, Any]) -> None:
    """A ``CallToolResult`` on the wire, as the case says it is."""
    (block,) = result["content"]
    text: str = block["text"]
    if case.code is None:
        assert not result.get("isError"), text
        jsonschema.validate(result["structuredContent"], OUTPUT_SCHEMAS[case.tool])
        return
    assert result["isError"] is True
    assert text.startswith(f"Error: {case.tool} failed with {case.code}: "), text
    assert case.says in text
    assert "structuredContent" not in result
    error = result["_meta"][ERROR_META_KEY]
    assert error["code"] == case.code
    assert case.says in error["message"]


# --- Python: mcp.client.Client ---------------------------------------------------------------


async def test_the_python_client_shows_errors_with_their_codes_and_results(
    connect: Connect, env: dict[str, str], replay: ReplayServer
) -> None:
    async with connect(env) as client:
        for case in CASES:
            result = await client.call_tool(case.tool, case.arguments_on(replay))
            assert_shown(case, result.model_dump(by_alias=True, exclude_none=True, mode="json"))
            if case.code is not None:
                assert result.structured_content is None
                assert result.meta is not None
                assert result.meta[ERROR_META_KEY]["code"] == case.code
                assert text_of(result).startswith(f"Error: {case.tool} failed with {case.code}")


# --- TypeScript SDK v1: Client + StdioClientTransport / StreamableHTTPClientTransport --------


def sdk_calls(target: str, replay: ReplayServer) -> list[dict[str, Any]]:
    """Every case through one session of the TypeScript client, checked against its outcome."""
    calls = [{"name": case.tool, "arguments": case.arguments_on(replay)} for case in CASES]
    seen = node_case("mcp_sdk.mjs", json.dumps(calls), target)
    assert "error" not in seen, seen
    assert seen["tools"] == ["web_search", "web_fetch"]
    outcomes: list[dict[str, Any]] = seen["calls"]
    for case, outcome in zip(CASES, outcomes, strict=True):
        assert "error" not in outcome, (case.id, outcome["error"])
        assert_shown(case, outcome["result"])
        # The client checked each result against the tool's outputSchema itself (Ajv), and had
        # nothing to check on an error.
        expected = [] if case.code else [{"valid": True, "errorMessage": None}]
        assert outcome["checks"] == expected, case.id
    return outcomes


def test_the_typescript_client_over_stdio(env: dict[str, str], replay: ReplayServer) -> None:
    entry = {"command": SERVER[0], "args": SERVER[1:], "env": env}
    sdk_calls(json.dumps(entry), replay)


def test_the_typescript_client_over_streamable_http(http_url: str, replay: ReplayServer) -> None:
    sdk_calls(http_url, replay)


# --- MCP Inspector: mcp-inspector --cli --method tools/call ----------------------------------


def inspector_node() -> str:
    """``node``, when it can run the Inspector's CLI (it imports JSON with import attributes)."""
    executable = node()
    version = subprocess.run(
        [executable, "--version"], capture_output=True, text=True, check=True
    ).stdout
    if int(version.lstrip("v").split(".")[0]) < 20:
        pytest.skip(f"the MCP Inspector's CLI needs Node 20 or later, not {version.strip()}")
    return executable


def inspect(target: list[str], env: dict[str, str], case: Case, replay: ReplayServer) -> Any:
    """``mcp-inspector --cli <target> --method tools/call …``: the result it prints, once it
    exited 0 (it exits 1 with the SDK's message on stderr when the client rejected the result)."""
    arguments = case.arguments_on(replay)
    pairs = [f"{name}={json.dumps(value)}" for name, value in arguments.items()]
    command = [inspector_node(), str(INSPECTOR / "cli.js"), "--cli", *target]
    command += ["--method", "tools/call", "--tool-name", case.tool, "--tool-arg", *pairs]
    done = subprocess.run(
        command, cwd=HERE, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_the_inspector_over_streamable_http(
    http_url: str, env: dict[str, str], replay: ReplayServer, case: Case
) -> None:
    assert_shown(case, inspect([http_url, "--transport", "http"], env, case, replay))


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.id in STDIO_CASES], ids=lambda case: case.id
)
def test_the_inspector_over_stdio(env: dict[str, str], replay: ReplayServer, case: Case) -> None:
    assert_shown(case, inspect(SERVER, env, case, replay))
