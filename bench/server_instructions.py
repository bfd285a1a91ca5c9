"""Instructions the API server spends per request, this tree against another revision.

Latency on a shared 2-core machine moves by tens of percent from run to run; instruction counts
under callgrind barely move. Both servers run ``python -m webreach serve`` under
``valgrind --tool=callgrind`` in front of the same scripted upstream; counting is switched on
only around the measured requests (after a warm-up), and the totals are divided by their number.

    python bench/server_instructions.py [--base 4c1c3c8] [--requests 150]

``--base`` is checked out into a temporary ``git worktree`` (removed afterwards). Needs valgrind.
``--metrics`` instead compares this tree with Prometheus metrics off and on.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
QUESTION = [{"role": "user", "content": "What is the population of Iceland?"}]
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "chat relay json": ("/v1/chat/completions", {"model": "m", "messages": QUESTION}),
    "chat relay stream": (
        "/v1/chat/completions",
        {"model": "m", "stream": True, "messages": QUESTION},
    ),
    "responses json": ("/v1/responses", {"model": "m", "input": QUESTION[0]["content"]}),
    "responses stream": (
        "/v1/responses",
        {"model": "m", "stream": True, "input": QUESTION[0]["content"]},
    ),
    "messages stream": (
        "/v1/messages",
        {"model": "m", "max_tokens": 64, "stream": True, "messages": QUESTION},
    ),
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(port: int, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        time.sleep(0.2)
    raise SystemExit(f"nothing listens on port {port}")


@contextlib.contextmanager
def worktree(revision: str) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="webreach-base-"))
    subprocess.run(
        ["git", "worktree", "add", "--detach", "-f", str(folder), revision],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    try:
        yield folder
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=ROOT)
        shutil.rmtree(folder, ignore_errors=True)


def control(*args: str) -> None:
    subprocess.run(["callgrind_control", *args], capture_output=True, check=False)


def measure(
    source: Path, upstream: str, requests: int, out: Path, metrics: bool = True
) -> dict[str, float]:
    """Instructions per request of each case, for the server of the tree at ``source``."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBREACH_")}
    env.update(
        WEBREACH_METRICS=str(metrics).lower(),
        PYTHONPATH=str(source / "src"),
        PYTHONMALLOC="malloc",
        WEBREACH_UPSTREAM_BASE_URL=upstream,
        WEBREACH_SIGNING_KEY="bench-signing-key-0123456789abcdef",
        WEBREACH_CACHE_TTL="0",
    )
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}/cg.%p",
        sys.executable,
        "-m",
        "webreach",
        "serve",
        "--port",
        str(port),
    ]
    server = subprocess.Popen(
        command, env=env, cwd=out, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    counts: dict[str, float] = {}
    try:
        wait_listening(port)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
            for label, (path, body) in CASES.items():
                for _ in range(30):
                    client.post(path, json=body).read()
                control("-z", str(server.pid))
                control("-i", "on", str(server.pid))
                for _ in range(requests):
                    client.post(path, json=body).read()
                control("-i", "off", str(server.pid))
                tag = label.replace(" ", "_")
                control(f"--dump={tag}", str(server.pid))
                counts[label] = _dumped(out, server.pid, tag) / requests
    finally:
        server.terminate()
        server.wait(60)
    return counts


def _dumped(out: Path, pid: int, tag: str) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for name in glob.glob(f"{out}/cg.{pid}*"):
            text = Path(name).read_text(errors="replace")
            if f"Trigger: dump {tag}" in text:
                found = re.search(r"^totals:\s*(\d+)", text, re.M)
                if found:
                    return int(found.group(1))
        time.sleep(0.2)
    raise SystemExit(f"callgrind wrote no dump for {tag}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default="4c1c3c8", help="revision to compare against")
    parser.add_argument("--requests", type=int, default=150)
    parser.add_argument(
        "--metrics", action="store_true", help="this tree with metrics off, then on"
    )
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    up_port = free_port()
    role = [str(ROOT / "bench" / "server_overhead.py"), "--role", "upstream"]
    upstream = subprocess.Popen(
        [sys.executable, *role, "--port", str(up_port)],
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    try:
        wait_listening(up_port)
        base_url = f"http://127.0.0.1:{up_port}/v1"
        with tempfile.TemporaryDirectory() as scratch:
            if args.metrics:
                before = measure(ROOT, base_url, args.requests, Path(scratch), metrics=False)
                after = measure(ROOT, base_url, args.requests, Path(scratch))
                names = ("metrics off", "metrics on")
            else:
                with worktree(args.base) as base:
                    before = measure(base, base_url, args.requests, Path(scratch))
                    after = measure(ROOT, base_url, args.requests, Path(scratch))
                names = (args.base, "this tree")
    finally:
        upstream.terminate()
    print(f"instructions per request (callgrind, {args.requests} requests each)")
    print(f"{'case':20s} {names[0]:>12s} {names[1]:>12s}   ratio")
    for label in CASES:
        a, b = before[label], after[label]
        print(f"{label:20s} {a / 1e6:10.2f} M {b / 1e6:10.2f} M   {b / a:.2f}x")


if __name__ == "__main__":
    main()
