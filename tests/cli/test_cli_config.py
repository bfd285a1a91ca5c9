"""``webreach config`` as a person runs it: every setting, where it came from, the providers and
which one each capability would use; secrets show only whether they are set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_helpers import clean_env, run_cli

CANARY = "exa-canary-key-77cc"


def _config(env: dict[str, str], *args: str, cwd: Path | None = None) -> dict[str, Any]:
    done = run_cli("config", "--json", *args, env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _setting(data: dict[str, Any], variable: str) -> dict[str, Any]:
    return next(row for row in data["settings"] if row["variable"] == variable)


def test_defaults_and_the_keyless_choice() -> None:
    data = _config(clean_env())
    assert data["file"]["exists"] is False
    assert _setting(data, "WEBREACH_SEARCH_MAX_RESULTS") == {
        "variable": "WEBREACH_SEARCH_MAX_RESULTS",
        "key": "search_max_results",
        "provider": None,
        "secret": False,
        "set": True,
        "value": 8,
        "source": "default",
    }
    assert data["capabilities"]["search"] == {
        "variable": "WEBREACH_SEARCH_PROVIDER",
        "configured": [],
        "exclude": [],
        "uses": ["duckduckgo"],
        "problem": None,
    }
    assert data["capabilities"]["fetch"]["uses"] == ["auto"]
    exa = next(p for p in data["providers"]["search"] if p["id"] == "exa")
    assert exa == {
        "id": "exa",
        "available": False,
        "needs": ["EXA_API_KEY"],
        "reason": None,
        "plugin": False,
        "shared_credential": False,
    }
    browser = next(p for p in data["providers"]["fetch"] if p["id"] == "browser")
    if not browser["available"]:
        assert browser["reason"], "an unavailable browser says why in one line"
        assert "\n" not in browser["reason"]
    searxng = next(p for p in data["providers"]["search"] if p["id"] == "searxng")
    assert searxng["needs"] == ["SEARXNG_BASE_URL"]


def test_sources_environment_file_and_default(tmp_path: Path) -> None:
    (tmp_path / "webreach.toml").write_text(
        'search_max_queries = 2\nfetch_allow = "127.0.0.1:8080"\nexa_api_key = "from-file"\n'
    )
    env = clean_env(WEBREACH_SEARCH_MAX_QUERIES="3", EXA_API_KEY=CANARY)
    done = run_cli("config", "--json", env=env, cwd=tmp_path)
    assert CANARY not in done.stdout and "from-file" not in done.stdout
    data = json.loads(done.stdout)
    assert data["file"] == {
        "path": str(tmp_path / "webreach.toml"),
        "exists": True,
        "named_by": None,
    }
    assert (_setting(data, "WEBREACH_SEARCH_MAX_QUERIES")["value"], "environment") == (
        3,
        _setting(data, "WEBREACH_SEARCH_MAX_QUERIES")["source"],
    )
    allow = _setting(data, "WEBREACH_FETCH_ALLOW")
    assert (allow["value"], allow["source"]) == ("127.0.0.1:8080", "file")
    key = _setting(data, "EXA_API_KEY")
    assert key == {
        "variable": "EXA_API_KEY",
        "key": "exa_api_key",
        "provider": "exa",
        "secret": True,
        "set": True,
        "value": None,
        "source": "environment",
    }
    # the key makes exa available beside duckduckgo: automatic choice is now ambiguous
    search = data["capabilities"]["search"]
    assert search["uses"] == []
    assert search["problem"] == (
        "several search providers are available (duckduckgo, exa); "
        "choose one with WEBREACH_SEARCH_PROVIDER"
    )


def test_the_text_shows_values_sources_and_choices(tmp_path: Path) -> None:
    settings = tmp_path / "custom.toml"
    settings.write_text('search_provider = "exa"\n')
    env = clean_env(WEBREACH_CONFIG=str(settings), EXA_API_KEY=CANARY)
    done = run_cli("config", env=env)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert CANARY not in out
    lines = out.splitlines()
    assert lines[0] == f"Settings file: {settings} (named by WEBREACH_CONFIG)"
    chosen = "search exa chosen by search_provider in the settings file"
    assert any(" ".join(line.split()) == chosen for line in lines)
    assert any(line.split() == ["WEBREACH_SEARCH_PROVIDER", "exa", "file"] for line in lines)
    assert any(line.split() == ["EXA_API_KEY", "set", "environment"] for line in lines)
    assert any(line.split() == ["BRAVE_API_KEY", "not", "set", "default"] for line in lines)
    assert any(line.split()[-3:] == ["brave", "needs", "BRAVE_API_KEY"] for line in lines)
    assert any(line.split() == ["WEBREACH_FETCH_MAX_CHARS", "40000", "default"] for line in lines)


def test_a_configured_provider_that_cannot_run_is_shown_not_refused() -> None:
    data = _config(clean_env(WEBREACH_SEARCH_PROVIDER="exa,duckduckgo"))
    assert data["capabilities"]["search"]["problem"] == (
        "WEBREACH_SEARCH_PROVIDER=exa,duckduckgo: exa is not configured; set EXA_API_KEY"
    )
    assert data["capabilities"]["search"]["uses"] == []
