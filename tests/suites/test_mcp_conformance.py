"""The official suites against ``webreach mcp``: ``@modelcontextprotocol/conformance`` (its
server scenarios, over Streamable HTTP, with tests/conformance-baseline.yml naming the scenarios
that need the suite's own fixture tools, resources and prompts) and the MCP Inspector 2 CLI's
``tools/list --strict`` (every tool schema portable), over Streamable HTTP and stdio.

Both need Node 22 or later: the machine's ``node`` when it is new enough, else the one ``.ci/run``
installs in tests/node22; without either the tests skip and say so. Providers are a replay
server on 127.0.0.1.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import test_mcp
from replay_server import ReplayServer, Reply
from repo_paths import TESTS
from test_mcp import EXA_RESPONSE, PAGE, server_env

CLIENTS = TESTS / "clients"
CONFORMANCE = CLIENTS / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist"
INSPECTOR = CLIENTS / "node_modules" / "inspector-v2" / "clients" / "launcher" / "build"
BASELINE = TESTS / "conformance-baseline.yml"
BUNDLED_NODE = TESTS / "node22" / "node_modules" / ".bin" / "node"
SUITE_TIMEOUT_S = 600

http_servers = test_mcp.http_servers


def _major(executable: str) -> int:
    said = subprocess.run(
        [executable, "--version"], capture_output=True, text=True, timeout=30, check=False
    ).stdout
    found = re.match(r"v(\d+)\.", said.strip())
    return int(found.group(1)) if found else 0


@pytest.fixture(scope="module")
def node22() -> str:
    """A Node 22 or later: both suites use APIs older Nodes lack (``fs.globSync``)."""
    for candidate in (shutil.which("node"), str(BUNDLED_NODE)):
        if candidate and Path(candidate).exists() and _major(candidate) >= 22:
            return candidate
    pytest.skip(
        "no Node 22 or later (the MCP conformance suite and the Inspector 2 CLI need it): "
        "`.ci/run` installs one in tests/node22 (npm ci there)"
    )


@pytest.fixture
def env(replay: ReplayServer, tmp_path: Path) -> dict[str, str]:
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    replay.route("GET", "/page", Reply(body=PAGE, headers={"content-type": "text/html"}))
    # The Inspector keeps a catalog of servers; this one lives and dies with the test.
    return server_env(replay) | {"MCP_CATALOG_PATH": str(tmp_path / "catalog.json")}


@pytest.fixture
def http_url(
    env: dict[str, str], tmp_path: Path, http_servers: list[subprocess.Popen[bytes]]
) -> str:
    port, log = test_mcp.free_port(), tmp_path / "server-stderr.log"
    command = [sys.executable, "-m", "webreach", "mcp", "--http", "--port", str(port)]
    http_servers.append(test_mcp.spawn(command, env, tmp_path, log))
    test_mcp.wait_until_listening(http_servers[-1], port, log)
    return f"http://127.0.0.1:{port}/mcp"


def _needs(path: Path) -> None:
    if not path.exists():
        pytest.fail(f"{path} is missing: run `npm ci` in tests/clients (`.ci/run` does)")


def test_the_conformance_suite_passes_every_scenario_that_applies(
    node22: str, http_url: str, tmp_path: Path
) -> None:
    _needs(CONFORMANCE)
    command = [node22, str(CONFORMANCE / "index.js"), "server", "--url", http_url]
    command += ["--suite", "all", "--expected-failures", str(BASELINE), "-o", str(tmp_path)]
    done = subprocess.run(
        command, cwd=CLIENTS, capture_output=True, text=True, timeout=SUITE_TIMEOUT_S, check=False
    )
    summary = done.stdout[done.stdout.find("=== SUMMARY ===") :]
    assert done.returncode == 0, f"{summary}\n{done.stderr[-4000:]}"
    assert "Baseline check passed" in done.stdout
    for scenario in ("server-initialize", "tools-list", "server-sse-multiple-streams"):
        assert re.search(rf"✓ {scenario}: [1-9]\d* passed, 0 failed", summary), summary


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_the_inspector_finds_every_tool_schema_portable(
    node22: str, transport: str, env: dict[str, str], request: pytest.FixtureRequest
) -> None:
    _needs(INSPECTOR)
    if transport == "http":
        target = [request.getfixturevalue("http_url"), "--transport", "http"]
    else:
        target = [sys.executable, "-m", "webreach", "mcp"]
        for name, value in env.items():  # the Inspector gives a server only what -e names (not "")
            if name.startswith(("WEBREACH_", "EXA_")) and value:
                target += ["-e", f"{name}={value}"]
    command = [node22, str(INSPECTOR / "index.js"), "--cli", *target]
    command += ["--method", "tools/list", "--strict"]
    done = subprocess.run(
        command, cwd=CLIENTS, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert '"name": "web_search"' in done.stdout and '"name": "web_fetch"' in done.stdout
    # --strict fails on errors only; a type list is a warning, which it also prints.
    assert "Warning:" not in done.stderr, done.stderr
    assert not re.search(r"\b[1-9]\d* warnings?\b", done.stderr), done.stderr
