"""``webreach search`` as a user runs it: output, --json, exit codes, and the live status line."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from cli_helpers import clean_env, ddgs_calls, fake_ddgs_env, run_cli
from replay_server import ReplayServer, Reply
from test_provider_exa import EXA_RESPONSE

CANARY = "exa-canary-key-55aa"

ROWS = {
    "python 3.13": [
        {"title": "Python 3.13", "href": "https://www.python.org/3.13", "body": "Newest release."},
        {"title": "Real Python", "href": "https://realpython.com/313", "body": "What's new."},
    ],
    "asyncio taskgroup": [
        {
            "title": "TaskGroup",
            "href": "https://docs.python.org/tg",
            "body": "Structured concurrency.",
        },
        {"title": "Python 3.13", "href": "https://www.python.org/3.13", "body": "duplicate URL"},
    ],
}


def exa_env(replay: ReplayServer, **extra: str) -> dict[str, str]:
    return clean_env(
        WEBREACH_SEARCH_PROVIDER="exa",
        EXA_API_KEY=CANARY,
        EXA_BASE_URL=replay.url,
        **extra,
    )


def test_keyless_default_search_prints_numbered_sources(tmp_path: Path) -> None:
    """The README's first command, with ``ddgs`` replaced at the library boundary."""
    done = run_cli("search", "python 3.13", "asyncio taskgroup", env=fake_ddgs_env(tmp_path, ROWS))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    out = done.stdout
    assert out.startswith('Web search for "python 3.13" · "asyncio taskgroup": 3 sources')
    assert "[1] Python 3.13\n    https://www.python.org/3.13" in out
    assert "[2] TaskGroup\n    https://docs.python.org/tg" in out
    assert "[3] Real Python" in out
    assert sorted(call["query"] for call in ddgs_calls(tmp_path)) == [
        "asyncio taskgroup",
        "python 3.13",
    ]
    assert {call["max_results"] for call in ddgs_calls(tmp_path)} == {8}


def test_json_output(tmp_path: Path) -> None:
    done = run_cli(
        "search", "python 3.13", "--json", "--max-results", "1", env=fake_ddgs_env(tmp_path, ROWS)
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "queries": ["python 3.13"],
        "content": None,
        "sources": [
            {
                "url": "https://www.python.org/3.13",
                "title": "Python 3.13",
                "snippet": "Newest release.",
                "published_at": None,
            }
        ],
        "truncated": False,
        "provider": "duckduckgo",
    }


def test_exa_through_the_command_line(replay: ReplayServer) -> None:
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    done = run_cli("search", "python 3.13", "--json", env=exa_env(replay))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["provider"] == "exa"
    assert data["sources"][0]["published_at"] == "2024-10-07T00:00:00.000Z"
    assert replay.requests[0].json()["numResults"] == 8


def test_provider_flag_selects_the_provider(replay: ReplayServer) -> None:
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    env = clean_env(EXA_API_KEY=CANARY, EXA_BASE_URL=replay.url)
    ambiguous = run_cli("search", "q", env=env)
    assert ambiguous.returncode == 1
    assert "WEB_PROVIDER_AMBIGUOUS" in ambiguous.stderr
    assert "WEBREACH_SEARCH_PROVIDER" in ambiguous.stderr
    chosen = run_cli("search", "q", "--provider", "exa", env=env)
    assert chosen.returncode == 0, chosen.stderr


def test_provider_failure_exits_1_without_leaking_the_key(replay: ReplayServer) -> None:
    replay.route("POST", "/search", Reply(401, json={"error": f"invalid key {CANARY}"}))
    done = run_cli("search", "q", env=exa_env(replay))
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip() == (
        "webreach: WEB_PROVIDER_ERROR: exa: authorization failed (HTTP 401); check the API key"
    )
    as_json = run_cli("search", "q", "--json", env=exa_env(replay))
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["error"]["code"] == "WEB_PROVIDER_ERROR"
    for output in (done.stdout, done.stderr, as_json.stdout, as_json.stderr):
        assert CANARY not in output


def test_a_rate_limited_provider_says_when_to_retry(replay: ReplayServer) -> None:
    replay.route("POST", "/search", Reply(429, json={}, headers={"retry-after": "30"}))
    done = run_cli("search", "q", env=exa_env(replay))
    assert done.returncode == 1
    assert "rate limited (HTTP 429), retry after 30 s" in done.stderr
    as_json = run_cli("search", "q", "--json", env=exa_env(replay))
    assert json.loads(as_json.stdout)["error"]["retry_after"] == 30.0


def test_bad_queries_exit_1_and_reach_no_provider(replay: ReplayServer) -> None:
    for queries in (["a", "b", "c", "d", "e"], [""], ["ok", "  "]):
        done = run_cli("search", *queries, "--json", env=exa_env(replay))
        assert done.returncode == 1
        assert json.loads(done.stdout)["error"]["code"] == "INVALID_ARGUMENTS"
    assert replay.requests == []


def test_usage_errors_exit_2() -> None:
    assert run_cli("search", env=clean_env()).returncode == 2
    assert run_cli("search", "q", "--max-results", "0", env=clean_env()).returncode == 2
    assert run_cli("frobnicate", env=clean_env()).returncode == 2
    bad_setting = run_cli("search", "q", "--json", env=clean_env(WEBREACH_SEARCH_MAX_RESULTS="x"))
    assert bad_setting.returncode == 2
    assert "WEBREACH_SEARCH_MAX_RESULTS" in json.loads(bad_setting.stdout)["error"]["message"]


def test_help_lists_the_commands() -> None:
    done = run_cli("--help", env=clean_env())
    assert done.returncode == 0
    assert "search" in done.stdout


def test_status_line_goes_to_a_terminal_only(tmp_path: Path) -> None:
    env = fake_ddgs_env(tmp_path, ROWS, FAKE_DDGS_DELAY="0.5", TERM="xterm")
    primary, secondary = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "webreach", "search", "python 3.13", "asyncio taskgroup"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=secondary,
        text=True,
    ) as process:
        os.close(secondary)
        stdout, _ = process.communicate(timeout=60)
    terminal = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:
            break
        if not chunk:
            break
        terminal += chunk
    os.close(primary)
    assert process.returncode == 0
    assert "Searching the web: python 3.13" in terminal.decode(errors="replace")
    assert "Searching the web" not in stdout
    assert stdout.startswith("Web search for")
