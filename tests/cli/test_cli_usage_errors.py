"""A mistyped command line is one line on stderr and exit 2, like every other refused input."""

from __future__ import annotations

import pytest

from cli_helpers import clean_env, run_cli


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["serve", "--port", "abc"], ["'--port'", "valid integer", "`webreach serve --help`"]),
        (["search", "q", "--max-results", "0"], ["'--max-results'", "greater than or equal to 1"]),
        (["search"], ["Missing argument 'QUERY...'", "`webreach search --help`"]),
        (["frobnicate"], ["No such command 'frobnicate'", "`webreach --help`"]),
        (["search", "q", "--bogus"], ["No such option: --bogus"]),
        (["fetch", "https://example.com", "--start", "x"], ["'--start'"]),
        (["fetch", "https://example.com", "--format", "yaml"], ["'--format'"]),
    ],
)
def test_a_usage_error_is_one_line_and_exit_2(args: list[str], names: list[str]) -> None:
    done = run_cli(*args, env=clean_env())
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("webreach: USAGE: ")
    assert "Value error," not in lines[0]
    for name in names:
        assert name in lines[0]


def test_no_command_still_shows_the_help() -> None:
    done = run_cli(env=clean_env())
    assert done.returncode == 2
    assert "Usage: webreach [OPTIONS] COMMAND" in done.stdout + done.stderr
    assert "search" in done.stdout + done.stderr


def test_help_and_version_exit_0() -> None:
    assert run_cli("--version", env=clean_env()).stdout.startswith("webreach ")
    helped = run_cli("fetch", "--help", env=clean_env())
    assert helped.returncode == 0
    assert "Usage: webreach fetch" in helped.stdout
