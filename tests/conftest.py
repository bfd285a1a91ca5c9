from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from cli_helpers import OWN_PREFIXES
from replay_server import ReplayServer
from repo_paths import TESTS
from slow_marker import mark_slow
from webreach.net import create_client

pytest_plugins = ["server_harness", "redis_harness"]


def _test_folders() -> list[str]:
    """Every folder under tests/ that holds test modules (npm packages and caches left out)."""
    found = []
    for folder, subfolders, files in os.walk(TESTS):
        subfolders[:] = [
            name for name in subfolders if name != "node_modules" and name[0] not in "._"
        ]
        if any(name.startswith("test_") and name.endswith(".py") for name in files):
            found.append(folder)
    return sorted(found)


# A test module imports another's cases by its name (``from test_mcp import server_env``), from
# whatever folder it sits in: basenames are unique, and every folder of tests is on the path.
sys.path.extend(folder for folder in _test_folders() if folder not in sys.path)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_slow(items)


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


@pytest.fixture(autouse=True)
def sdk_clients_closed() -> Iterator[None]:
    """The SDK clients a test made through sdk_clients.py are closed after it, not left to the
    collector to finalize their pooled sockets (which warn) in some later test. Looked up, not
    imported: importing it would load both SDKs in every worker, for tests that use neither."""
    yield
    made = sys.modules.get("sdk_clients")
    if made is not None:
        made.close_clients()


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    with ReplayServer() as server:
        yield server


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    """The provider tests' HTTP client, closed after the test; a module may define its own."""
    async with create_client(timeout=5) as client:
        yield client
