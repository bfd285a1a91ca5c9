"""``webreach mcp`` as a person meets it: started by hand in a terminal, stopped with Ctrl-C, and
the JSON that adds it to an MCP client."""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from cli_helpers import clean_env, run_cli


def _read_until(fd: int, wanted: bytes, seconds: float) -> bytes:
    """What the terminal shows until ``wanted`` appears (or the time is up)."""
    seen = b""
    deadline = time.monotonic() + seconds
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


def _controlling_terminal() -> None:
    """In the child: a session of its own, with the pty on its stdin as controlling terminal,
    so the Ctrl-C byte becomes SIGINT for it."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_in_a_terminal_it_says_it_waits_and_ctrl_c_stops_it() -> None:
    """A real terminal: the child's stdin, stdout and stderr are the pty, and Ctrl-C is the
    byte the terminal turns into SIGINT for its foreground process. This process holds the
    terminal's other end open too, so what the child wrote just before exiting is still there."""
    master, terminal = os.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "webreach", "mcp"],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=clean_env(),
        preexec_fn=_controlling_terminal,
    )
    code = None
    try:
        shown = _read_until(master, b"Ctrl-C to stop", 30)
        assert b"webreach mcp: waiting for an MCP client on stdin; Ctrl-C to stop" in shown
        os.write(master, b"\x03")
        code = child.wait(timeout=10)
        shown += _read_until(master, b"stopped", 5)
    finally:
        if code is None:
            child.kill()
            child.wait()
        os.close(master)
        os.close(terminal)
    assert code == 130, shown
    assert b"webreach mcp: stopped" in shown
    assert b"Traceback" not in shown


def test_a_client_on_a_pipe_gets_no_hint(tmp_path: Path) -> None:
    done = run_cli("mcp", env=clean_env(), input="")
    assert done.returncode == 0, done.stderr
    assert "waiting for an MCP client" not in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("client", "top"),
    [("claude-desktop", "mcpServers"), ("cursor", "mcpServers"), ("vscode", "servers")],
)
def test_print_config_gives_the_absolute_command(client: str, top: str) -> None:
    env = clean_env(
        snippets_only=False,
        WEBREACH_SEARCH_PROVIDER="exa",
        EXA_API_KEY="exa-canary-key-99",
        WEBREACH_CONFIG="",
    )
    done = run_cli("mcp", "--print-config", "--client", client, env=env)
    assert done.returncode == 0, done.stderr
    assert "exa-canary-key-99" not in done.stdout
    server = json.loads(done.stdout)[top]["webreach"]
    command = Path(server["command"])
    assert command.is_absolute() and command.is_file()
    assert server["args"][-1] == "mcp"
    if command.name != "webreach":  # no script beside Python: the module through Python itself
        assert server["args"] == ["-m", "webreach", "mcp"]
    assert server["env"] == {
        "WEBREACH_SEARCH_PROVIDER": "exa",
        "EXA_API_KEY": "<your EXA_API_KEY>",
    }
    if client == "vscode":
        assert server["type"] == "stdio"


def test_print_config_carries_only_what_the_mcp_server_reads() -> None:
    env = clean_env(
        WEBREACH_UPSTREAM_BASE_URL="http://127.0.0.1:9/v1",
        WEBREACH_UPSTREAM_API_KEY="upstream-canary-key",
        WEBREACH_SERVER_API_KEYS="inbound-canary-key",
        WEBREACH_PLAYGROUND="false",
        WEBREACH_SEARCH_MAX_RESULTS="5",
        WEBREACH_CONFIG="",
    )
    done = run_cli("mcp", "--print-config", env=env)
    assert done.returncode == 0, done.stderr
    server = json.loads(done.stdout)["mcpServers"]["webreach"]
    assert server["env"] == {
        "WEBREACH_SEARCH_MAX_RESULTS": "5",
        "WEBREACH_SEARCH_CONTEXT_SIZE": "low",
    }


def test_print_config_names_the_settings_file_by_its_absolute_path(tmp_path: Path) -> None:
    (tmp_path / "webreach.toml").write_text("search_max_results = 5\n")
    done = run_cli("mcp", "--print-config", env=clean_env(snippets_only=False), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    server = json.loads(done.stdout)["mcpServers"]["webreach"]
    assert server["env"] == {"WEBREACH_CONFIG": str(tmp_path / "webreach.toml")}


def test_print_config_is_for_the_stdio_server() -> None:
    done = run_cli("mcp", "--print-config", "--http", env=clean_env())
    assert done.returncode == 2
    assert "--print-config describes the stdio server" in done.stderr


def test_print_config_carries_a_secret_file_by_its_absolute_path(tmp_path: Path) -> None:
    """A key mounted as a file (``EXA_API_KEY_FILE``, as Docker and Kubernetes secrets are) goes
    into the client's config as that file's absolute path, never as its content."""
    (tmp_path / "exa.key").write_text("exa-canary-key-99\n")
    env = clean_env(
        snippets_only=False,
        WEBREACH_SEARCH_PROVIDER="exa",
        EXA_API_KEY_FILE="exa.key",
        WEBREACH_CONFIG="",
    )
    done = run_cli("mcp", "--print-config", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "exa-canary-key-99" not in done.stdout
    server = json.loads(done.stdout)["mcpServers"]["webreach"]
    assert server["env"] == {
        "WEBREACH_SEARCH_PROVIDER": "exa",
        "EXA_API_KEY_FILE": str(tmp_path / "exa.key"),
    }
