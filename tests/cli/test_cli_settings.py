"""Bad settings as a person meets them: every command stops at start-up (exit 2) with the
variable or file key, what is wrong and a valid example, and never a traceback.

Each case runs every command as a subprocess; nothing reaches the network, as nothing runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import clean_env, run_cli
from replay_server import ReplayServer, Reply

COMMANDS = {
    "search": ["search", "python 3.13"],
    "fetch": ["fetch", "https://example.com/"],
    "config": ["config"],
    "serve": ["serve"],
    "mcp": ["mcp"],
}

ENVIRONMENT_CASES = [
    (
        {"WEBREACH_FETCH_ALLOW": "http://127.0.0.1"},
        ["WEBREACH_FETCH_ALLOW=http://127.0.0.1", "is a URL, not a host", "write '127.0.0.1'"],
    ),
    (
        {"WEBREACH_FETCH_ALLOW": "127.0.0.1, 10.0.0.0/33"},
        ["WEBREACH_FETCH_ALLOW=", "'10.0.0.0/33' is not a CIDR network", "e.g. 10.0.0.0/8"],
    ),
    (
        {"WEBREACH_FETCH_ALLOW": "not a host!!"},
        ["WEBREACH_FETCH_ALLOW='not a host!!'", "is not a host name", "e.g. 127.0.0.1"],
    ),
    (
        {"WEBREACH_FETCH_ALLOW": "localhost:99999"},
        ["WEBREACH_FETCH_ALLOW=localhost:99999", "a port is 1 to 65535"],
    ),
    (
        {"WEBREACH_SEARCH_MAX_RESULTS": "many"},
        ["WEBREACH_SEARCH_MAX_RESULTS=many", "valid integer", "e.g. WEBREACH_SEARCH_MAX_RESULTS=8"],
    ),
    (
        {"WEBREACH_FETCH_TIMEOUT": "-1"},
        ["WEBREACH_FETCH_TIMEOUT=-1", "greater than 0", "e.g. WEBREACH_FETCH_TIMEOUT=30"],
    ),
    (
        {"WEBREACH_SEARCH_ENABLED": "perhaps"},
        ["WEBREACH_SEARCH_ENABLED=perhaps", "valid boolean", "e.g. WEBREACH_SEARCH_ENABLED=false"],
    ),
    (
        {"WEBREACH_CITATIONS": "footnotes"},
        ["WEBREACH_CITATIONS=footnotes", "'annotations' or 'markdown'"],
    ),
    (
        {"EXA_BASE_URL": "ftp://exa.example"},
        ["EXA_BASE_URL:", "must be an http(s) URL", "e.g. https://api.example.com"],
    ),
    (
        {"WEBREACH_SEARCH_PROVIDER": "nope"},
        ["WEBREACH_SEARCH_PROVIDER=nope", "no search provider 'nope'", "duckduckgo, exa"],
    ),
    (
        {"WEBREACH_CONFIG": "/nonexistent/webreach.toml"},
        ["WEBREACH_CONFIG=/nonexistent/webreach.toml", "no such file"],
    ),
]

# (file text, what the message must say, what it must not say)
FILE_CASES = [
    (
        'fetch_allow = "http://127.0.0.1"\n',
        ['fetch_allow = "http://127.0.0.1" in {path} (line 1)', "is a URL, not a host"],
        ["WEBREACH_FETCH_ALLOW"],
    ),
    (
        "search_max_results = 5\nsearch_max_queries = 0\n",
        [
            "search_max_queries = 0 in {path} (line 2)",
            "greater than 0",
            "e.g. search_max_queries = 4",
        ],
        ["WEBREACH_SEARCH_MAX_QUERIES"],
    ),
    (
        'exa_base_url = "ftp://exa.example"\n',
        ["exa_base_url in {path} (line 1)", "must be an http(s) URL"],
        ["EXA_BASE_URL"],
    ),
    (
        '# local pages\nfetch_alow = "127.0.0.1"\n',
        [
            "fetch_alow in {path} (line 2)",
            "unknown key 'fetch_alow'",
            "did you mean 'fetch_allow'?",
        ],
        [],
    ),
    (
        'search_max_results = 5\nfetch_allow = 127.0.0.1"\n',
        ["{path}, line 2, column", "not valid TOML", 'e.g. fetch_allow = "127.0.0.1"'],
        [],
    ),
]


def _assert_refused(done: subprocess.CompletedProcess[str], says: list[str]) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stdout == ""
    for words in says:
        assert words in done.stderr, (words, done.stderr)
    assert done.stderr.startswith("webreach: INVALID_SETTING: ")


def _every_command(env: dict[str, str]) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every command started at once with ``env`` (they only read settings and stop)."""
    started = {
        name: subprocess.Popen(
            [sys.executable, "-m", "webreach", *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, args in COMMANDS.items()
    }
    done = {}
    for name, process in started.items():
        out, err = process.communicate(timeout=60)
        done[name] = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    return done


@pytest.mark.parametrize(("variables", "says"), ENVIRONMENT_CASES, ids=lambda v: str(v)[:40])
def test_a_bad_variable_stops_every_command(variables: dict[str, str], says: list[str]) -> None:
    for command, done in _every_command(clean_env(**variables)).items():
        print(command)
        _assert_refused(done, says)


@pytest.mark.parametrize(("text", "says", "never"), FILE_CASES, ids=lambda v: str(v)[:30])
def test_a_bad_settings_file_stops_every_command(
    tmp_path: Path, text: str, says: list[str], never: list[str]
) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(text)
    for command, done in _every_command(clean_env(WEBREACH_CONFIG=str(path))).items():
        print(command)
        _assert_refused(done, [words.format(path=path) for words in says])
        for words in never:
            assert words not in done.stderr


def test_webreach_toml_in_the_working_directory_is_checked_too(tmp_path: Path) -> None:
    (tmp_path / "webreach.toml").write_text("search_max_queries = 0\n")
    done = run_cli("search", "q", env=clean_env(), cwd=tmp_path)
    _assert_refused(done, [f"search_max_queries = 0 in {tmp_path / 'webreach.toml'} (line 1)"])


def test_every_problem_is_named_at_once() -> None:
    env = clean_env(WEBREACH_FETCH_TIMEOUT="soon", EXA_BASE_URL="exa.example", KAGI_BASE_URL="x")
    done = run_cli("config", env=env)
    _assert_refused(done, ["WEBREACH_FETCH_TIMEOUT=soon", "EXA_BASE_URL:", "KAGI_BASE_URL:"])
    assert len(done.stderr.splitlines()) == 3


def test_a_bad_setting_with_json_is_a_json_error() -> None:
    for command in (["search", "q"], ["fetch", "https://example.com/"], ["config"]):
        done = run_cli(*command, "--json", env=clean_env(WEBREACH_FETCH_ALLOW="http://10.0.0.1"))
        assert done.returncode == 2
        error = json.loads(done.stdout)["error"]
        assert error["code"] == "INVALID_SETTING"
        assert error["message"].startswith("WEBREACH_FETCH_ALLOW=http://10.0.0.1: ")


def test_a_secret_is_never_echoed_in_an_error() -> None:
    done = run_cli("search", "q", env=clean_env(EXA_BASE_URL="https://user:hunter2@exa.example/"))
    assert done.returncode == 2
    assert "EXA_BASE_URL" in done.stderr
    assert "hunter2" not in done.stderr


@pytest.mark.parametrize(
    "entries", ["127.0.0.1:{port}", "localhost:{port}, 10.0.0.0/8", "*.internal.example, {ip}"]
)
def test_good_allow_lists_are_accepted_and_a_port_entry_opens_only_its_port(
    replay: ReplayServer, entries: str
) -> None:
    replay.route("GET", "/page", Reply(body=b"opened", headers={"content-type": "text/plain"}))
    port = replay.url.rsplit(":", 1)[1]
    allow = entries.format(port=port, ip="127.0.0.1")
    host = "localhost" if allow.startswith("localhost") else "127.0.0.1"
    done = run_cli("fetch", f"http://{host}:{port}/page", env=clean_env(WEBREACH_FETCH_ALLOW=allow))
    assert done.returncode == 0, done.stderr
    assert "opened" in done.stdout
    if "{port}" in entries:
        other = run_cli(
            "fetch", f"http://{host}:1/page", "--json", env=clean_env(WEBREACH_FETCH_ALLOW=allow)
        )
        assert json.loads(other.stdout)["error"]["code"] == "WEB_BLOCKED_URL"


def test_no_traceback_from_a_broken_settings_file_in_the_python_entry_point(
    tmp_path: Path,
) -> None:
    """``python -m webreach`` and the ``webreach`` script share one entry point."""
    path = tmp_path / "webreach.toml"
    path.write_bytes(b"\xff\xfe not text")
    done = subprocess.run(
        [sys.executable, "-m", "webreach", "config"],
        env=clean_env(WEBREACH_CONFIG=str(path)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    _assert_refused(done, [str(path), "is not UTF-8 text"])
