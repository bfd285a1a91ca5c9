"""A cache store that cannot be what it says stops every command (exit 2, one line), instead of
continuing without a cache, which on server replicas means no shared store."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import clean_env, run_cli
from test_packaging import _without
from webreach.install_hint import install_command


@pytest.mark.parametrize(
    ("value", "names"),
    [
        (
            "postgres://user:hunter2@db.internal/cache",
            ["the scheme 'postgres' is not a cache store"],
        ),
        ("memcached://127.0.0.1:11211", ["'memcached'"]),
        ("sqlite://relative.db", ["expected sqlite:///absolute/path"]),
        ("/tmp/cache.db", ["it is not a cache store"]),
    ],
)
@pytest.mark.parametrize(
    "command", [["search", "q"], ["fetch", "https://example.com/"], ["config"]]
)
def test_an_unknown_cache_store_stops_every_command(
    value: str, names: list[str], command: list[str]
) -> None:
    done = run_cli(*command, env=clean_env(WEBREACH_CACHE=value))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("webreach: INVALID_SETTING: WEBREACH_CACHE: ")
    for name in names:
        assert name in lines[0]
    assert "hunter2" not in done.stderr + done.stdout


def test_redis_without_its_extra_names_the_extra(tmp_path: Path) -> None:
    env = _without(tmp_path, ["redis"], clean_env(WEBREACH_CACHE="redis://127.0.0.1:9/0"))
    done = run_cli("search", "q", env=env)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "redis:// needs the redis extra (redis is not installed)" in lines[0]
    assert lines[0].endswith(install_command("redis")) or install_command("redis") in lines[0]


@pytest.mark.parametrize("value", ["memory", "none", "sqlite:///tmp/webreach-test.db"])
def test_the_stores_that_exist_are_accepted(value: str) -> None:
    done = run_cli("config", env=clean_env(WEBREACH_CACHE=value))
    assert done.returncode == 0, done.stderr
