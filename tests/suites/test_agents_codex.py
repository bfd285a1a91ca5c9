"""OpenAI's Codex CLI (npm `@openai/codex`, its native linux-x64 binary) against the server.

Codex is pointed at webreach as a user would: a ``model_providers`` entry in an isolated
``CODEX_HOME/config.toml`` with ``wire_api = "responses"`` and the server's inbound key in the
provider's ``env_key``, analytics, feedback, update checks and the plugin sync off, every proxy
a dead end so nothing but 127.0.0.1 is reached. It runs headless with ``codex exec --json
--skip-git-repo-check`` and continues with ``codex exec resume --last``.

With default features Codex declares ``{"type": "web_search"}`` beside its own tools: for a
model outside its catalog (a webreach user's upstream model, say ``deepseek-chat``) a
``namespace`` of functions (``multi_agent_v1``); for a catalog model such as ``gpt-5.5`` a
``custom`` tool (``apply_patch``, free-form grammar) and ``tool_search``. Its default model
(``gpt-6.2-sol``) sends no ``tools`` at all but an ``additional_tools`` input item. The scripted
upstream searches (Exa, a local replay) and answers citing 【1】; Codex shows the search as a
``web_search`` item and the answer as an ``agent_message``. Every case runs with no request
refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clients.agents import (
    CITED_URL,
    FOLLOW_UP,
    FOLLOW_UP_ANSWER,
    PLAIN_ANSWER,
    QUERY,
    QUESTION,
    SEARCH_ANSWER,
    SERVER_KEY,
    AgentRun,
    World,
    agent_binary,
    run_agent,
    sandbox_env,
    world,
)

VERSION = "0.171.0"
"""The newest Codex CLI (its ``engines``: Node >= 16)."""
UPSTREAM_MODEL = "deepseek-chat"
"""A model outside Codex's catalog, as a webreach user's upstream model is."""
CATALOG_MODEL = "gpt-5.5"


@pytest.fixture
def codex() -> Path:
    return agent_binary("codex")


def config(here: World, model: str | None, provider_extra: str = "") -> str:
    """``config.toml``: webreach as the model provider, Responses wire API, live web search
    (Codex's default, ``cached``, asks for ``external_web_access: false``: the cache only), nothing
    else (one retry at most, so a failing server fails the test fast)."""
    chosen = f'model = "{model}"\n' if model else ""
    return f"""{chosen}model_provider = "webreach"
web_search = "live"
check_for_update_on_startup = false

[model_providers.webreach]
name = "webreach"
base_url = "{here.url}/v1"
wire_api = "responses"
env_key = "CODEX_WEBREACH_KEY"
request_max_retries = 1
stream_max_retries = 1
{provider_extra}
[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
"""


def run_codex(
    codex: Path,
    here: World,
    tmp_path: Path,
    *command: str,
    model: str | None = UPSTREAM_MODEL,
    provider_extra: str = "",
) -> AgentRun:
    """``codex exec --json --skip-git-repo-check <command…>`` in an isolated CODEX_HOME."""
    home = tmp_path / "codex-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(config(here, model, provider_extra))
    env = sandbox_env(tmp_path, here, CODEX_HOME=str(home), CODEX_WEBREACH_KEY=SERVER_KEY)
    workdir = tmp_path / "project"
    workdir.mkdir(exist_ok=True)
    argv = [str(codex), "exec", "--json", "--skip-git-repo-check", *command]
    return run_agent(argv, env, workdir, timeout=25)


def items(run: AgentRun, kind: str) -> list[dict[str, Any]]:
    """The completed items of a type in ``--json`` events."""
    return [
        event["item"]
        for event in run.events()
        if event.get("type") == "item.completed" and event["item"].get("type") == kind
    ]


def messages(run: AgentRun) -> list[str]:
    return [item["text"] for item in items(run, "agent_message")]


def thread(run: AgentRun) -> str:
    (started,) = [e["thread_id"] for e in run.events() if e.get("type") == "thread.started"]
    return str(started)


def assert_searched_and_answered(here: World, run: AgentRun) -> None:
    """No request refused; a completed web_search item; the scripted answer."""
    here.assert_nothing_refused()
    assert run.returncode == 0, run.describe()
    (search,) = items(run, "web_search")
    assert search["query"] == QUERY
    assert search["action"]["type"] == "search"
    assert here.searched == [QUERY]
    assert "turn.completed" in [event.get("type") for event in run.events()]


def test_exec_searches_the_web(codex: Path, tmp_path: Path) -> None:
    with world(tmp_path) as here:
        run = run_codex(codex, here, tmp_path, QUESTION)
        (request,) = here.sent("/v1/responses")
        kinds = {tool["type"] for tool in request["tools"]}
        assert {"web_search", "namespace", "function"} <= kinds
        assert_searched_and_answered(here, run)
        assert messages(run) == [SEARCH_ANSWER]


def test_exec_resume_last_continues_the_conversation(codex: Path, tmp_path: Path) -> None:
    with world(tmp_path) as here:
        first = run_codex(codex, here, tmp_path, QUESTION)
        assert_searched_and_answered(here, first)
        second = run_codex(codex, here, tmp_path, "resume", "--last", FOLLOW_UP)
        here.assert_nothing_refused()
        assert second.returncode == 0, second.describe()
        assert thread(second) == thread(first)
        assert messages(second) == [FOLLOW_UP_ANSWER]
        # Turn 1 (the answer, not its search results) is in the upstream's context.
        context = here.requests[-1]["messages"]
        assert [m["content"] for m in context if m["role"] == "assistant"] == [SEARCH_ANSWER]
        assert context[-1] == {"role": "user", "content": FOLLOW_UP}


@pytest.mark.parametrize(
    ("settings", "provider_extra"),
    [
        ({"WEBREACH_CITATIONS": "markdown"}, ""),
        ({}, 'http_headers = { "X-Webreach-Citations" = "markdown" }\n'),
    ],
    ids=["server-setting", "provider-header"],
)
def test_markdown_citations_show_the_source_in_the_message(
    codex: Path, tmp_path: Path, settings: dict[str, str], provider_extra: str
) -> None:
    """Codex shows no annotations: with markdown citations the link is in the message's text,
    asked for by the server's setting or by a header of Codex's provider entry."""
    with world(tmp_path, **settings) as here:
        run = run_codex(codex, here, tmp_path, QUESTION, provider_extra=provider_extra)
        if provider_extra:
            (sent,) = [e for e in here.proxy.exchanges if e.path == "/v1/responses"]
            assert sent.headers["x-webreach-citations"] == "markdown"
        assert_searched_and_answered(here, run)
        (message,) = messages(run)
        assert message.startswith("About 390,000 people")
        assert f"]({CITED_URL})" in message


def test_exec_with_a_catalog_model(codex: Path, tmp_path: Path) -> None:
    with world(tmp_path) as here:
        run = run_codex(codex, here, tmp_path, QUESTION, model=CATALOG_MODEL)
        (request,) = here.sent("/v1/responses")
        kinds = {tool["type"] for tool in request["tools"]}
        assert {"web_search", "custom", "tool_search"} <= kinds
        assert_searched_and_answered(here, run)
        assert messages(run) == [SEARCH_ANSWER]


def test_exec_with_codex_default_model(codex: Path, tmp_path: Path) -> None:
    """With ``WEBREACH_UPSTREAM_MODEL`` set, a user may leave Codex's default model."""
    with world(tmp_path, WEBREACH_UPSTREAM_MODEL=UPSTREAM_MODEL) as here:
        run = run_codex(codex, here, tmp_path, QUESTION, model=None)
        (request,) = here.sent("/v1/responses")
        assert "tools" not in request
        assert request["input"][0]["type"] == "additional_tools"
        here.assert_nothing_refused()
        assert run.returncode == 0, run.describe()
        assert messages(run) == [PLAIN_ANSWER]


def test_the_pinned_version_runs(codex: Path, tmp_path: Path) -> None:
    """The binary installed from tests/clients is the pinned one, and starts here."""
    home = tmp_path / "codex-home"
    home.mkdir()
    env = {"HOME": str(tmp_path), "CODEX_HOME": str(home), "PATH": "/usr/bin:/bin"}
    done = run_agent([str(codex), "--version"], env, tmp_path, 30)
    assert done.returncode == 0, done.describe()
    assert done.stdout.strip() == f"codex-cli {VERSION}"
