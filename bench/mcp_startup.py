"""Start-up cost of ``webreach mcp``: from spawning the process to its ``initialize`` answer.

Speaks raw JSON-RPC over the pipes (no client SDK in the measuring process) and also times the
first ``tools/list`` answer, which is when the providers are loaded. Printed beside a bare
Python and a process that only imports the MCP SDK's server, the floor.

    python bench/mcp_startup.py [--repeat 10]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from typing import IO

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
TARGET_S = 1.0


def _send(pipe: IO[bytes], message: Mapping[str, object]) -> None:
    pipe.write(json.dumps(message).encode() + b"\n")
    pipe.flush()


def _answer(pipe: IO[bytes], wanted: int) -> dict[str, object]:
    while line := pipe.readline():
        message: dict[str, object] = json.loads(line)
        if message.get("id") == wanted:
            return message
    raise RuntimeError("the server closed stdout before answering")


def one_run(command: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    start = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        _send(process.stdin, INITIALIZE)
        answer = _answer(process.stdout, 1)
        initialized = time.perf_counter() - start
        assert "result" in answer, answer
        _send(process.stdin, INITIALIZED)
        _send(process.stdin, LIST_TOOLS)
        assert "result" in _answer(process.stdout, 2)
        listed = time.perf_counter() - start
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return initialized, listed


def first_line(command: list[str], repeat: int) -> float:
    """Median time from spawn to the first line on stdout, measured like the server's answer."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.PIPE)
        assert process.stdout is not None
        process.stdout.readline()
        times.append(time.perf_counter() - start)
        process.wait()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    script = shutil.which("webreach")
    command = [script, "mcp"] if script else [sys.executable, "-m", "webreach", "mcp"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBREACH_")}
    env["WEBREACH_CONFIG"] = ""

    bare = first_line([sys.executable, "-c", "print()"], args.repeat)
    sdk = "import mcp.server.lowlevel.server, mcp.server.stdio; print()"
    floor = first_line([sys.executable, "-c", sdk], args.repeat)
    with tempfile.TemporaryDirectory() as cwd:
        runs = [one_run(command, env, cwd) for _ in range(args.repeat)]
    initialize = statistics.median(r[0] for r in runs)
    listed = statistics.median(r[1] for r in runs)
    print(f"python -c 'print()'                 {bare * 1000:6.0f} ms")
    print(f"python importing the SDK's server   {floor * 1000:6.0f} ms  (the floor)")
    print(f"webreach mcp → initialize answered  {initialize * 1000:6.0f} ms")
    print(f"webreach mcp → tools/list answered  {listed * 1000:6.0f} ms  (providers loaded)")
    worst = max(r[0] for r in runs)
    verdict = "meets" if initialize < TARGET_S else "MISSES"
    print(
        f"median {initialize * 1000:.0f} ms (worst {worst * 1000:.0f} ms of {args.repeat}): "
        f"{verdict} the {TARGET_S * 1000:.0f} ms target"
    )


if __name__ == "__main__":
    main()
