"""Claude Code (npm `@anthropic-ai/claude-code`, its native linux-x64 binary) against the server.

Claude Code is run as a user would point it at webreach: ``ANTHROPIC_BASE_URL`` (the server,
behind a recording proxy) and an API key (the server's inbound key), headless with
``claude -p <question> --output-format json --allowed-tools WebSearch``, in an isolated home and
config directory with telemetry, error reporting, auto-updates and other non-essential traffic
off, and every proxy a dead end so nothing but 127.0.0.1 is reached.

Its main loop calls its own ``WebSearch`` tool (a client function tool, relayed), which makes a
request of its own declaring ``web_search_20250305`` with ``tool_choice: {"type": "tool",
"name": "web_search"}``; webreach runs that search through Exa (a local replay) and answers with
the protocol's blocks, which Claude Code turns into the tool's result, and the main loop answers.
With its default model, Claude Code also sends ``system`` messages mid-conversation (beta
``mid-conversation-system-2026-04-07``). Every case runs with no request refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clients.agents import (
    CITED_URL,
    FINAL_ANSWER,
    QUERY,
    QUESTION,
    SERVER_KEY,
    AgentRun,
    Exchange,
    World,
    agent_binary,
    run_agent,
    sandbox_env,
    world,
)

VERSION = "2.1.197"
"""The newest Claude Code whose ``engines`` admit Node 20 (2.1.198 and later need Node 22)."""
MID_CONVERSATION_SYSTEM = "mid-conversation-system-2026-04-07"


@pytest.fixture
def claude() -> Path:
    return agent_binary("claude")


def run_claude(claude: Path, here: World, tmp_path: Path, *options: str) -> AgentRun:
    """``claude -p`` with the question, as a user runs it against webreach."""
    env = sandbox_env(
        tmp_path,
        here,
        ANTHROPIC_BASE_URL=here.url,
        ANTHROPIC_API_KEY=SERVER_KEY,
        CLAUDE_CONFIG_DIR=str(tmp_path / "claude-config"),
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_BUG_COMMAND="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        CLAUDE_CODE_MAX_RETRIES="1",  # a failing server fails the test fast
    )
    workdir = tmp_path / "project"
    workdir.mkdir(exist_ok=True)
    argv = [
        str(claude),
        "-p",
        QUESTION,
        "--output-format",
        "json",
        "--allowed-tools",
        "WebSearch",
        *options,
    ]
    return run_agent(argv, env, workdir, timeout=45)


def result(run: AgentRun) -> dict[str, Any]:
    """The JSON result ``--output-format json`` prints last."""
    (found,) = [event for event in run.events() if event.get("type") == "result"]
    return found


def first_turn(here: World) -> Exchange:
    """Claude Code's first request to ``/v1/messages``: its main loop's."""
    return next(e for e in here.proxy.exchanges if e.path.split("?")[0] == "/v1/messages")


def web_search_requests(here: World) -> list[dict[str, Any]]:
    """The requests of Claude Code's WebSearch tool: Anthropic's web search, forced."""
    return [
        body
        for body in here.sent("/v1/messages")
        if any(tool.get("type") == "web_search_20250305" for tool in body.get("tools") or [])
    ]


def assert_searched_and_answered(here: World, run: AgentRun) -> None:
    """No request refused; the search reached Exa; the final answer came back."""
    here.assert_nothing_refused()
    assert run.returncode == 0, run.describe()
    final = result(run)
    assert final["is_error"] is False, final
    assert final["result"] == FINAL_ANSWER, (final, here.report())
    assert here.searched == [QUERY]
    # The WebSearch tool's own request: web_search_20250305 forced by tool_choice.
    (forced,) = web_search_requests(here)
    assert forced["tool_choice"] == {"type": "tool", "name": "web_search"}
    # Claude Code counted the server's search in its usage, and its result held the source.
    assert sum(model["webSearchRequests"] for model in final["modelUsage"].values()) == 1
    tool_results = [
        message["content"]
        for request in here.requests
        for message in request["messages"]
        if message["role"] == "tool"
    ]
    assert any(CITED_URL in json.dumps(content) for content in tool_results)


def test_web_search_with_the_default_model(claude: Path, tmp_path: Path) -> None:
    with world(tmp_path) as here:
        run = run_claude(claude, here, tmp_path)
        first = first_turn(here)
        assert MID_CONVERSATION_SYSTEM in first.headers.get("anthropic-beta", "")
        assert "system" in [m["role"] for m in first.body["messages"]]
        assert_searched_and_answered(here, run)


def test_web_search_with_a_model_without_mid_conversation_system(
    claude: Path, tmp_path: Path
) -> None:
    """Claude Code sends no mid-conversation ``system`` messages to the 4.5 models."""
    with world(tmp_path) as here:
        run = run_claude(claude, here, tmp_path, "--model", "claude-sonnet-4-5")
        first = first_turn(here)
        assert MID_CONVERSATION_SYSTEM not in first.headers.get("anthropic-beta", "")
        assert_searched_and_answered(here, run)


def test_the_pinned_version_runs(claude: Path, tmp_path: Path) -> None:
    """The binary installed from tests/clients is the pinned one, and starts here."""
    home = tmp_path / "home"
    home.mkdir()
    done = run_agent(
        [str(claude), "--version"], {"HOME": str(home), "PATH": "/usr/bin:/bin"}, tmp_path, 30
    )
    assert done.returncode == 0, done.describe()
    assert done.stdout.strip() == f"{VERSION} (Claude Code)"
