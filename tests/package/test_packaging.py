"""Packaging: every import declared, extras that match the code, bounded versions, and the
commands that need an extra saying so instead of failing with a traceback."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from cli_helpers import clean_env, fake_ddgs_env, run_cli
from replay_server import ReplayServer, Reply
from repo_paths import ROOT
from webreach.install_hint import install_command

SRC = ROOT / "src" / "webreach"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
RUNTIME_EXTRAS = ("server", "mcp", "redis")

# Where the code needs an extra; everything else is the plain install (library + CLI).
EXTRA_OF_PATH = {
    "server": "server",  # webreach/server/**
    "tools/mcp/server.py": "mcp",
    "tools/mcp/calls.py": "mcp",  # the MCP server's progress and rate limit
    "tools/mcp/events.py": "mcp",  # the MCP server's event store, for resumed streams
    "tools/mcp/stopping.py": "mcp",  # how the MCP server ends its calls and streams as it stops
    "tools/stopping.py": "mcp",  # uvicorn's server as both servers stop it (in [server] too)
    "cache/redis.py": "redis",
    # Z.AI's MCP server is called with the SDK's client, imported when a Z.AI search runs.
    "providers/search/_mcp_sdk.py": "mcp",
    # The browser's modules import Playwright only when a page is drawn (or for type checks).
    "providers/fetch/_browser_engine.py": "browser",
    "providers/fetch/_browser_launch.py": "browser",
    "providers/fetch/_browser_page.py": "browser",
}
# Declared for another dependency to load, never imported by webreach itself.
LOADED_BY_ANOTHER = {"websockets": "uvicorn's WebSocket protocol, for /v1/responses over a socket"}
# The command line loads a command's extra inside that command only; a few functions load an
# extra of their own when a setting names it.
EXTRA_OF_FUNCTION = {
    "cli": {"serve": "server", "mcp": "mcp"},
    "tools/mcp/events.py": {"__init__": "redis"},  # the Redis event store, when configured
}


def _requirements(extra: str | None) -> list[Requirement]:
    lines = PROJECT["dependencies"] if extra is None else EXTRAS[extra]
    return [Requirement(line) for line in lines]


def _distributions(extra: str | None) -> set[str]:
    """Distributions that ``pip install webreach[extra]`` asks for by name (base included)."""
    names = {canonicalize_name(r.name) for r in _requirements(None)}
    if extra is not None:
        names |= {canonicalize_name(r.name) for r in _requirements(extra) if r.name != "webreach"}
    return names


def _area(path: Path) -> str | None:
    relative = path.relative_to(SRC).as_posix()
    for prefix, extra in EXTRA_OF_PATH.items():
        if relative == prefix or relative.startswith(prefix + "/"):
            return extra
    return None


def _third_party_imports() -> list[tuple[str, str | None, str]]:
    """``(top-level module, extra needed or None, where)`` for every import in src/webreach."""
    found: list[tuple[str, str | None, str]] = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        area = _area(path)
        relative = path.relative_to(SRC).as_posix()
        own_extras = EXTRA_OF_FUNCTION.get(relative) or EXTRA_OF_FUNCTION.get(path.parent.name, {})
        functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            extra = area
            for function in functions:
                inside = function.lineno <= node.lineno <= (function.end_lineno or 0)
                if inside and function.name in own_extras:
                    extra = own_extras[function.name]
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "webreach":
                    found.append((top, extra, f"{path.relative_to(ROOT)}:{node.lineno}"))
    return found


def test_every_import_of_the_package_is_declared_where_it_is_needed() -> None:
    providers = packages_distributions()
    missing = []
    for module, extra, where in _third_party_imports():
        declared = _distributions(extra)
        offered_by = {canonicalize_name(d) for d in providers.get(module, [])}
        if not offered_by & declared:
            wanted = f"[{extra}]" if extra else "[project.dependencies]"
            missing.append(f"{where}: {module} (from {sorted(offered_by)}) not in {wanted}")
    assert not missing, "\n".join(missing)


def test_every_declared_runtime_dependency_is_imported() -> None:
    """A dependency nothing imports (FastAPI, once the server moved to Starlette) is dead weight."""
    imported = {module for module, _extra, _where in _third_party_imports()}
    providers = packages_distributions()
    used = {canonicalize_name(d) for module in imported for d in providers.get(module, [])}
    for extra in (None, *RUNTIME_EXTRAS):
        unused = _distributions(extra) - used - LOADED_BY_ANOTHER.keys()
        assert not unused, f"declared in {extra or 'dependencies'} but never imported: {unused}"


def test_the_plain_install_is_the_library_and_the_command_line() -> None:
    base = _distributions(None)
    assert {
        "httpx",
        "httpx2",
        "httpcore2",
        "aiohttp",
        "httpx-aiohttp",
        "pydantic",
        "pydantic-settings",
    } <= base
    assert {"typer", "rich", "ddgs", "charset-normalizer", "pypdfium2", "selectolax"} <= base
    for heavy in ("starlette", "uvicorn", "openai", "cryptography", "mcp", "redis"):
        assert heavy not in base, f"{heavy} belongs in an extra, not in the plain install"
    assert {"starlette", "uvicorn", "openai", "cryptography"} <= _distributions("server")
    assert "mcp" in _distributions("mcp")
    assert "redis" in _distributions("redis")


def test_all_adds_every_extra_and_dev_installs_all() -> None:
    (everything,) = _requirements("all")
    assert everything.name == "webreach"
    assert set(everything.extras) == set(RUNTIME_EXTRAS)
    assert any(r.name == "webreach" and "all" in r.extras for r in _requirements("dev"))


@pytest.mark.parametrize("extra", [None, *RUNTIME_EXTRAS])
def test_every_runtime_dependency_has_an_upper_bound(extra: str | None) -> None:
    unbounded = []
    for requirement in _requirements(extra):
        if requirement.name == "webreach":
            continue
        if not any(spec.operator in {"<", "<=", "~=", "=="} for spec in requirement.specifier):
            unbounded.append(str(requirement))
    assert not unbounded, f"no upper bound: {unbounded}"


# --- the commands that need an extra, run where that extra is missing ------------------------

BLOCKER = '''
import os, sys

_BLOCKED = set(os.environ["TEST_BLOCKED_MODULES"].split(","))


class _NotInstalled:
    """Makes the listed top-level modules unimportable, as if their extra were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
'''

SERVER_MODULES = ["starlette", "uvicorn", "openai", "cryptography"]
EVERY_EXTRA_MODULE = [*SERVER_MODULES, "mcp", "redis", "playwright"]


def _without(tmp_path: Path, modules: list[str], env: dict[str, str]) -> dict[str, str]:
    """``env`` in which ``modules`` cannot be imported (a ``sitecustomize`` on PYTHONPATH)."""
    blocker = tmp_path / "blocker"
    blocker.mkdir(exist_ok=True)
    (blocker / "sitecustomize.py").write_text(BLOCKER)
    path = os.pathsep.join(p for p in [str(blocker), env.get("PYTHONPATH", "")] if p)
    return {**env, "PYTHONPATH": path, "TEST_BLOCKED_MODULES": ",".join(modules)}


def test_the_blocker_really_blocks(tmp_path: Path) -> None:
    env = _without(tmp_path, ["starlette"], clean_env())
    done = subprocess.run(
        [sys.executable, "-c", "import starlette"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 1
    assert "No module named 'starlette'" in done.stderr


@pytest.mark.parametrize(
    ("command", "extra", "blocked"),
    [
        *[(["serve"], "server", [module]) for module in SERVER_MODULES],
        (["serve", "--port", "9"], "server", SERVER_MODULES),
        (["mcp"], "mcp", ["mcp"]),
        (["mcp", "--http"], "mcp", ["mcp"]),
    ],
)
def test_a_command_whose_extra_is_missing_says_which_extra_to_install(
    tmp_path: Path, command: list[str], extra: str, blocked: list[str]
) -> None:
    env = _without(tmp_path, blocked, clean_env(WEBREACH_UPSTREAM_BASE_URL="http://127.0.0.1:9"))
    done = run_cli(*command, env=env)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].endswith(install_command(extra))
    assert f"[{extra}]" in lines[0]
    assert f"`webreach {command[0]}` needs the {extra} extra" in lines[0]
    assert lines[0].startswith("webreach: MISSING_EXTRA: ")


def test_search_and_fetch_run_without_any_extra(tmp_path: Path, replay: ReplayServer) -> None:
    rows = {"python 3.13": [{"title": "Py", "href": "https://www.python.org/", "body": "New."}]}
    search_env = _without(tmp_path, EVERY_EXTRA_MODULE, fake_ddgs_env(tmp_path, rows))
    found = run_cli("search", "python 3.13", "--json", env=search_env)
    assert found.returncode == 0, found.stderr
    assert '"https://www.python.org/"' in found.stdout

    page = b"<html><head><title>Notes</title></head><body><h1>Notes</h1><p>Hello.</p></body></html>"
    replay.route("GET", "/notes", Reply(body=page, headers={"content-type": "text/html"}))
    fetch_env = _without(tmp_path, EVERY_EXTRA_MODULE, clean_env(WEBREACH_FETCH_ALLOW="127.0.0.1"))
    fetched = run_cli("fetch", f"{replay.url}/notes", env=fetch_env)
    assert fetched.returncode == 0, fetched.stderr
    assert "Hello." in fetched.stdout

    helped = run_cli("--help", env=fetch_env)
    assert helped.returncode == 0, helped.stderr
    assert "serve" in helped.stdout
