"""Shell completion and ``--version``, as a person's shell calls them."""

from __future__ import annotations

import subprocess
import sys

from cli_helpers import clean_env, run_cli


def test_bash_completes_commands_and_options() -> None:
    def complete(line: str) -> list[str]:
        words = line.split(" ")
        env = clean_env(
            _WEBREACH_COMPLETE="complete_bash",
            COMP_WORDS=line,
            COMP_CWORD=str(len(words) - 1),
        )
        done = run_cli(env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert complete("webreach se") == ["search", "serve"]
    assert "--provider" in complete("webreach search --pro")
    assert complete("webreach serve --log-format ") == ["text", "json"]


def test_show_completion_prints_the_script_for_the_shell_it_runs_in() -> None:
    # A lone command would replace bash (bash execs it), leaving webreach no shell among its
    # parents when the test runner has none either; a second command keeps bash its parent.
    done = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m webreach --show-completion; exit $?"],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "_WEBREACH_COMPLETE=complete_bash" in done.stdout
    assert done.stdout.rstrip().endswith("complete -o default -F _webreach_completion webreach")


def test_the_root_help_lists_completion_and_version() -> None:
    done = run_cli("--help", env=clean_env())
    assert done.returncode == 0
    for option in ("--version", "--install-completion", "--show-completion"):
        assert option in done.stdout
    version = run_cli("--version", env=clean_env())
    assert version.returncode == 0
    from webreach import __version__

    assert version.stdout == f"webreach {__version__}\n"
