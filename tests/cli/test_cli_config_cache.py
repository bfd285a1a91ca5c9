"""``webreach config`` says where things are cached: with ``WEBREACH_CACHE`` unset the
commands use a SQLite file in the user's cache folder and ``serve`` / ``mcp`` use memory; a
store it names is shown without its password; ``none`` or a TTL of 0 is no cache."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import clean_env, run_cli


def _both(env: dict[str, str], tmp_path: Path) -> tuple[str, dict[str, object]]:
    text = run_cli("config", env=env, cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    data = run_cli("config", "--json", env=env, cwd=tmp_path)
    assert data.returncode == 0, data.stderr
    cache: dict[str, object] = json.loads(data.stdout)["cache"]
    return text.stdout, cache


def test_unset_the_commands_use_sqlite_and_the_servers_memory(tmp_path: Path) -> None:
    env = clean_env(XDG_CACHE_HOME=str(tmp_path / "cache"), WEBREACH_CONFIG="")
    text, cache = _both(env, tmp_path)
    sqlite = f"sqlite://{tmp_path}/cache/webreach/cache.sqlite3"
    line = f"Cache: commands: {sqlite}; serve/mcp: memory (WEBREACH_CACHE is not set)"
    assert line in text.splitlines()
    assert cache == {"commands": sqlite, "servers": "memory", "source": "default", "off": None}


def test_a_named_store_is_shown_without_its_password(tmp_path: Path) -> None:
    env = clean_env(WEBREACH_CACHE="redis://:hunter2-pw@cache.internal:6379/0")
    text, cache = _both(env, tmp_path)
    shown = "redis://:***@cache.internal:6379/0"
    assert f"Cache: {shown} (WEBREACH_CACHE, environment)" in text.splitlines()
    assert (cache["commands"], cache["servers"], cache["source"]) == (shown, shown, "environment")
    done = run_cli("config", "--json", env=env, cwd=tmp_path)
    assert "hunter2-pw" not in text + done.stdout


def test_none_and_a_zero_ttl_are_no_cache(tmp_path: Path) -> None:
    text, cache = _both(clean_env(WEBREACH_CACHE="none"), tmp_path)
    assert "Cache: off (WEBREACH_CACHE is none)" in text.splitlines()
    assert (cache["commands"], cache["servers"]) == (None, None)
    text, cache = _both(clean_env(WEBREACH_CACHE_TTL="0"), tmp_path)
    assert "Cache: off (WEBREACH_CACHE_TTL is 0)" in text.splitlines()
    assert cache["off"] == "WEBREACH_CACHE_TTL is 0"
