"""The offline first step of the README and of the manual's Getting started runs as written: a
local page refused, then opened with the allow setting. Its shell lines are taken from each file
itself, so neither can drift."""

from __future__ import annotations

import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_helpers import clean_env
from repo_paths import ROOT

FIRST_STEPS = [ROOT / "README.md", ROOT / "docs" / "getting-started.md"]
PORT = "8765"


def first_steps_block(source: Path) -> list[str]:
    text = source.read_text()
    start = text.index("**2. Read a page")
    block = re.search(r"```bash\n(.*?)```", text[start:], flags=re.DOTALL)
    assert block is not None
    return [line.split("  #", 1)[0].strip() for line in block.group(1).splitlines()]


def free_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.parametrize("source", FIRST_STEPS, ids=lambda path: path.name)
def test_the_offline_first_step_works_as_written(tmp_path: Path, source: Path) -> None:
    lines = first_steps_block(source)
    make, serve, refused, opened = lines
    port, site = free_port(), str(tmp_path / "site")

    def local(line: str) -> str:
        return line.replace("/tmp/site", site).replace(PORT, port)

    subprocess.run(["bash", "-c", local(make)], check=True)
    argv = shlex.split(local(serve).removesuffix("&").strip())
    assert argv[:3] == ["python", "-m", "http.server"]
    server = subprocess.Popen([sys.executable, *argv[1:]], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not listening(int(port)):
            assert time.monotonic() < deadline, "the page server did not start"
            time.sleep(0.05)
        env = clean_env()
        env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
        blocked = subprocess.run(
            ["bash", "-c", local(refused)], env=env, capture_output=True, text=True
        )
        assert blocked.returncode == 1
        assert "WEB_BLOCKED_URL" in blocked.stderr
        assert "WEBREACH_FETCH_ALLOW" in blocked.stderr
        shown = subprocess.run(
            ["bash", "-c", local(opened)], env=env, capture_output=True, text=True
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert shown.returncode == 0, shown.stderr
    assert "# Hello" in shown.stdout
    assert "A page on this machine." in shown.stdout
    assert "<web_content" not in shown.stdout
