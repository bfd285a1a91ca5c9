"""A ``WEBREACH_*`` variable that is not a setting stops every command (exit 2) with the
closest setting, as an unknown key of webreach.toml does: a typo is never silently ignored."""

from __future__ import annotations

import pytest

from cli_helpers import clean_env, run_cli
from webreach.config import all_settings, load_settings
from webreach.config_sources import ConfigError, unknown_variables


@pytest.mark.parametrize(
    "command",
    [["search", "q"], ["fetch", "https://example.com/"], ["config"], ["config", "--json"]],
)
def test_a_mistyped_variable_stops_every_command(command: list[str]) -> None:
    env = clean_env(WEBREACH_FETCH_ALOW="127.0.0.1", WEBREACH_SEARCH_MAX_RESULT="3")
    done = run_cli(*command, env=env)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    text = done.stderr + done.stdout
    assert "WEBREACH_FETCH_ALOW: not a setting; did you mean WEBREACH_FETCH_ALLOW?" in text
    assert (
        "WEBREACH_SEARCH_MAX_RESULT: not a setting; did you mean WEBREACH_SEARCH_MAX_RESULTS?"
        in text
    )


def test_serve_and_mcp_stop_too() -> None:
    for command in (["serve"], ["mcp"]):
        done = run_cli(*command, env=clean_env(WEBREACH_UPSTREAM_BASE_URL_="http://x"))
        assert done.returncode == 2, (command, done.stderr)
        assert "WEBREACH_UPSTREAM_BASE_URL_: not a setting; did you mean" in done.stderr


def test_a_command_line_option_is_named_as_one() -> None:
    done = run_cli("serve", env=clean_env(WEBREACH_PORT="9000"))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "webreach: INVALID_SETTING: WEBREACH_PORT: not a setting; the port is an option: "
        "webreach serve --port N (or mcp --http --port N)"
    ]


def test_a_far_typo_points_at_the_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBREACH_ZZZZ", "1")
    with pytest.raises(ConfigError) as raised:
        load_settings()
    assert raised.value.problems == (
        "WEBREACH_ZZZZ: not a setting; `webreach config` lists the settings",
    )


def test_what_webreach_reads_is_no_typo() -> None:
    environ = {
        "WEBREACH_CONFIG": "/x.toml",
        "WEBREACH_SIGNING_KEY_FILE": "/run/secrets/signing",
        "webreach_fetch_allow": "127.0.0.1",
        "EXA_APIKEY": "not ours to judge",
        "WEBREACH_FETCH_ALOW": "x",
    }
    assert unknown_variables(environ, all_settings()) == [
        "WEBREACH_FETCH_ALOW: not a setting; did you mean WEBREACH_FETCH_ALLOW?"
    ]
