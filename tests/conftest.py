from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from cli_helpers import OWN_PREFIXES
from replay_server import ReplayServer
from slow_marker import mark_slow
from webreach.net import create_client

pytest_plugins = ["server_harness", "redis_harness"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_slow(items)


# The environment as the session began, before the per-test cleaning below: live smoke tests
# read real keys from it.
LIVE_ENVIRONMENT = dict(os.environ)

# Settings come from the environment: tests start from a clean one, whatever the machine has.


@pytest.fixture(autouse=True)
def clean_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    for name in list(os.environ):
        if name.startswith(OWN_PREFIXES):
            monkeypatch.delenv(name)
    monkeypatch.setenv("WEBREACH_CONFIG", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("user-cache")))
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    with ReplayServer() as server:
        yield server


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    """The provider tests' HTTP client, closed after the test; a module may define its own."""
    async with create_client(timeout=5) as client:
        yield client
