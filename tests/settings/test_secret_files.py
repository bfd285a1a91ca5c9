"""Secrets read from files, as Docker and Kubernetes mount them: ``<NAME>_FILE`` (or
``<key>_file`` in ``webreach.toml``) names the file; its content, less one trailing newline, is
the secret. A file that cannot be used, or a secret set twice, stops every command with exit 2
naming the variable and the path, never what the file holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import clean_env, run_cli
from webreach.config import all_settings, check_settings, configured_secrets, load_settings
from webreach.config_sources import ConfigError, accepted_variables

CANARY = "file-canary-9f3e1c"


def _secret(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_every_secret_of_every_settings_class_reads_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No secret needs code of its own: the shared ones and every provider's key alike."""
    secrets = [s for s in all_settings() if s.secret]
    assert {"WEBREACH_UPSTREAM_API_KEY", "WEBREACH_SERVER_API_KEYS", "EXA_API_KEY"} <= {
        s.variable for s in secrets
    }
    assert {"WEBREACH_SIGNING_KEY", "WEBREACH_MODERATION_API_KEY"} <= {s.variable for s in secrets}
    expected = {}
    for setting in secrets:
        value = f"{CANARY}-{setting.variable.lower()}"
        monkeypatch.setenv(
            f"{setting.variable}_FILE", str(_secret(tmp_path / setting.variable, value + "\n"))
        )
        expected[(setting.owner, setting.field)] = value
    settings = check_settings()
    read: dict[type[Any], Any] = {type(settings): settings}
    for (owner, field), value in expected.items():
        held = read.setdefault(owner, owner())
        assert getattr(held, field).get_secret_value() == value
    assert set(expected.values()) <= set(configured_secrets(settings))


@pytest.mark.parametrize(
    ("content", "secret"),
    [
        ("sk-1\n", "sk-1"),
        ("sk-1", "sk-1"),
        ("sk-1\r\n", "sk-1"),
        ("sk-1\n\n", "sk-1\n"),
        (" sk-1 \n", " sk-1 "),
    ],
)
def test_one_trailing_newline_is_stripped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, secret: str
) -> None:
    path = _secret(tmp_path / "key", content)
    monkeypatch.setenv("WEBREACH_UPSTREAM_API_KEY_FILE", str(path))
    key = load_settings().upstream_api_key
    assert key is not None and key.get_secret_value() == secret


def test_inbound_keys_from_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "WEBREACH_SERVER_API_KEYS_FILE", str(_secret(tmp_path / "keys", "k-one, k-two\n"))
    )
    assert load_settings().api_keys() == ("k-one", "k-two")


def test_an_empty_variable_beside_its_file_is_unset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compose's ``${KEY:-}`` leaves the variable empty: the file still counts."""
    monkeypatch.setenv("WEBREACH_UPSTREAM_API_KEY", "")
    monkeypatch.setenv("WEBREACH_UPSTREAM_API_KEY_FILE", str(_secret(tmp_path / "k", "sk-2\n")))
    key = load_settings().upstream_api_key
    assert key is not None and key.get_secret_value() == "sk-2"


def _refused(env: dict[str, str], *args: str, cwd: Path | None = None) -> str:
    done = run_cli(*(args or ("config",)), env=env, cwd=cwd)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert CANARY not in done.stderr and CANARY not in done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_the_variable_and_its_file_both_set_stop_every_command(tmp_path: Path) -> None:
    path = _secret(tmp_path / "key", CANARY)
    env = clean_env(WEBREACH_UPSTREAM_API_KEY=CANARY, WEBREACH_UPSTREAM_API_KEY_FILE=str(path))
    for command in (("config",), ("search", "x"), ("serve",)):
        line = _refused(env, *command)
        assert "WEBREACH_UPSTREAM_API_KEY and WEBREACH_UPSTREAM_API_KEY_FILE are both set" in line


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda d: d / "missing", "no such file"),
        (lambda d: _secret(d / "empty", ""), "is empty"),
        (lambda d: _secret(d / "newline", "\n"), "is empty"),
        (lambda d: d, "is a directory, not a file"),
        (
            lambda d: (d / "binary").write_bytes(b"\xff\xfe" + CANARY.encode()) and d / "binary",
            "is not UTF-8 text",
        ),
    ],
    ids=["missing", "empty", "only-a-newline", "directory", "not-utf8"],
)
def test_a_file_that_cannot_be_used_is_named_with_its_path(
    tmp_path: Path, make: Any, why: str
) -> None:
    path = make(tmp_path)
    for variable in ("WEBREACH_SIGNING_KEY", "EXA_API_KEY"):
        line = _refused(clean_env(**{f"{variable}_FILE": str(path)}))
        assert line == f"webreach: INVALID_SETTING: {variable}_FILE={path}: {why}"


def test_a_large_file_is_refused_unread(tmp_path: Path) -> None:
    path = _secret(tmp_path / "big", CANARY * 10_000)
    line = _refused(clean_env(WEBREACH_MODERATION_API_KEY_FILE=str(path)))
    assert line.endswith(
        f"WEBREACH_MODERATION_API_KEY_FILE={path}: is larger than 64 KiB, too large for a key"
    )


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    done = run_cli(
        "config",
        env=clean_env(
            WEBREACH_SIGNING_KEY_FILE=str(tmp_path / "a"), BRAVE_API_KEY_FILE=str(tmp_path / "b")
        ),
    )
    assert done.returncode == 2
    assert f"WEBREACH_SIGNING_KEY_FILE={tmp_path / 'a'}: no such file" in done.stderr
    assert f"BRAVE_API_KEY_FILE={tmp_path / 'b'}: no such file" in done.stderr


def test_the_settings_file_may_name_a_secret_file(tmp_path: Path) -> None:
    """A relative path is from the settings file's directory; the environment still wins."""
    (tmp_path / "secrets").mkdir()
    _secret(tmp_path / "secrets" / "exa", CANARY + "\n")
    (tmp_path / "webreach.toml").write_text('exa_api_key_file = "secrets/exa"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = clean_env(WEBREACH_CONFIG=str(tmp_path / "webreach.toml"))
    done = run_cli("config", "--json", env=env, cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert CANARY not in done.stdout
    row = next(r for r in json.loads(done.stdout)["settings"] if r["variable"] == "EXA_API_KEY")
    assert (row["set"], row["source"]) == (True, f"file {tmp_path / 'secrets' / 'exa'}")

    done = run_cli("config", "--json", env={**env, "EXA_API_KEY": "from-env"}, cwd=elsewhere)
    row = next(r for r in json.loads(done.stdout)["settings"] if r["variable"] == "EXA_API_KEY")
    assert row["source"] == "environment"


def test_the_settings_file_naming_a_key_twice_or_a_missing_file(tmp_path: Path) -> None:
    toml = tmp_path / "webreach.toml"
    toml.write_text(f'exa_api_key = "{CANARY}"\nexa_api_key_file = "exa"\n')
    line = _refused(clean_env(), cwd=tmp_path)
    assert line.endswith(
        f"exa_api_key and exa_api_key_file in {toml} are both set; keep one of them"
    )
    toml.write_text('signing_key_file = "nothere"\n')
    line = _refused(clean_env(), cwd=tmp_path)
    assert line.endswith(f"signing_key_file in {toml} ({tmp_path / 'nothere'}): no such file")
    toml.write_text("signing_key_file = 3\n")
    assert "signing_key_file in" in _refused(clean_env(), cwd=tmp_path)


def test_a_file_key_of_a_setting_that_is_no_secret_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "webreach.toml").write_text('fetch_allow_file = "x"\n')
    line = _refused(clean_env(), cwd=tmp_path)
    assert "unknown key 'fetch_allow_file'" in line


def test_config_shows_the_file_never_the_value(tmp_path: Path) -> None:
    path = _secret(tmp_path / "upstream", CANARY + "\n")
    env = clean_env(WEBREACH_UPSTREAM_API_KEY_FILE=str(path))
    done = run_cli("config", env=env)
    assert done.returncode == 0, done.stderr
    assert CANARY not in done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(
        line.split() == ["WEBREACH_UPSTREAM_API_KEY", "set", "file", str(path)] for line in lines
    )
    assert not any(line.startswith("Not settings") for line in lines)


def test_the_accepted_variables_include_each_secrets_file_form() -> None:
    names = accepted_variables(all_settings())
    assert {"WEBREACH_UPSTREAM_API_KEY", "WEBREACH_UPSTREAM_API_KEY_FILE"} <= names
    assert {"WEBREACH_SERVER_API_KEYS_FILE", "WEBREACH_SIGNING_KEY_FILE"} <= names
    assert {"WEBREACH_MODERATION_API_KEY_FILE", "EXA_API_KEY_FILE"} <= names
    assert {"ANTHROPIC_SEARCH_API_KEY_FILE", "WEBREACH_CONFIG"} <= names
    assert "WEBREACH_FETCH_ALLOW" in names
    assert "WEBREACH_FETCH_ALLOW_FILE" not in names
    assert "WEBREACH_UPSTREAM_BASE_URL_FILE" not in names


def test_a_secret_file_problem_in_process_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEBREACH_UPSTREAM_API_KEY_FILE", str(tmp_path / "none"))
    with pytest.raises(ConfigError) as raised:
        load_settings()
    assert raised.value.problems == (
        f"WEBREACH_UPSTREAM_API_KEY_FILE={tmp_path / 'none'}: no such file",
    )
