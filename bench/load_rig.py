"""The processes of ``bench/load.py``: the two fakes (``bench/load_fakes.py``), the page server
(``bench/load_pages.py``) when the variant serves pages, and the real server,
``python -m webreach serve`` (one uvicorn worker, default settings but for its upstream, its Exa
provider, the cache off, a fixed signing key, the pages' host allowed on every port and the debug
log, which says how long each search's page reads took), each started in a fresh directory with
proxies and webreach settings removed from its environment; what /proc says about the server;
its log's distinct errors; and stopping them all.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from load_fakes import EXA_KEY, HOST, UPSTREAM_KEY

FAKES = Path(__file__).resolve().with_name("load_fakes.py")
PAGE_SERVER = Path(__file__).resolve().with_name("load_pages.py")
PAGE_HOST = "localhost"
"""The sources' host: a name, so each page read resolves it as a real source's would."""
PAGE_ORIGINS = 100
"""Ports the sources' pages are on, each an origin of its own: a search's five pages are on
five sites, and 200 turns' 1,000 reads on a hundred, not all on one."""


@dataclass(frozen=True)
class Variant:
    """One server configuration of the load: its context size (None for the server's default,
    ``medium``), whether the sources' pages are served, or on ports nothing listens on, and its
    turn deadline."""

    name: str
    label: str
    context_size: str | None
    served: bool
    turn_timeout: float | None = None
    """``WEBREACH_TURN_TIMEOUT`` when set: short enough that most of the wave's turns meet it."""


VARIANTS = {
    "low": Variant("low", "low", "low", False),
    "unreachable": Variant("unreachable", "medium, pages unreachable", None, False),
    "served": Variant("served", "medium, pages served", None, True),
    "deadline": Variant("deadline", "medium, turn deadline 1 s", None, False, 1.0),
}


# --- the server process -------------------------------------------------------------------------


@dataclass
class ProcSample:
    """The server's memory, open file descriptors and CPU time so far, from /proc. CPU is summed
    over the server and the processes it started (its page readers, render workers and their
    fork server), since a page read or rendered in a worker is the server's work too;
    ``workers_pss_kib`` is what those processes hold beyond the pages they share with each
    other (their PSS)."""

    peak_rss_kib: int
    rss_kib: int
    fds: int
    cpu_seconds: float
    workers_pss_kib: int = 0

    @classmethod
    def of(cls, pid: int) -> ProcSample:
        status = Path(f"/proc/{pid}/status").read_text()
        values = {
            line.split(":")[0]: int(line.split()[1])
            for line in status.splitlines()
            if line.startswith(("VmHWM", "VmRSS"))
        }
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        cpu, workers = 0.0, 0
        for member in process_tree(pid):
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = Path(f"/proc/{member}/stat").read_text().rpartition(")")[2].split()
                ticks = int(stat[11]) + int(stat[12])  # utime + stime, fields 14 and 15
                cpu += ticks / os.sysconf("SC_CLK_TCK")
                if member != pid:
                    rollup = Path(f"/proc/{member}/smaps_rollup").read_text()
                    pss = [line for line in rollup.splitlines() if line.startswith("Pss:")]
                    workers += int(pss[0].split()[1])
        return cls(values.get("VmHWM", 0), values.get("VmRSS", 0), fds, cpu, workers)

    def row(self, label: str) -> str:
        return (
            f"  {label:<14} {self.peak_rss_kib / 1024:>9.1f} MiB {self.rss_kib / 1024:>9.1f} MiB"
            f" {self.fds:>8} {self.cpu_seconds:>9.2f} s"
        )


def process_tree(pid: int) -> list[int]:
    """``pid`` and every process below it, from /proc's children lists."""
    found, todo = [], [pid]
    while todo:
        member = todo.pop()
        found.append(member)
        for task in Path(f"/proc/{member}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                todo.extend(int(child) for child in task.read_text().split())
    return found


PROC_HEADER = f"  {'server':<14} {'peak RSS':>13} {'RSS':>13} {'open FDs':>8} {'CPU time':>11}"


@dataclass
class Rig:
    webreach: str
    upstream: str
    provider: str
    server_pid: int
    log: Path
    args: argparse.Namespace
    variant: Variant
    others: list[int]
    """The rig's other processes (the fakes, the page server), whose CPU shares the cores."""

    @property
    def protocols(self) -> list[str]:
        return list(self.args.protocols)

    @property
    def port(self) -> int:
        """The server's port."""
        return int(self.webreach.rpartition(":")[2])


# --- processes ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def free_ports(count: int, taken: set[int]) -> list[int]:
    """``count`` distinct free ports, none of ``taken``."""
    ports: list[int] = []
    while len(ports) < count:
        port = free_port()
        if port not in taken and port not in ports:
            ports.append(port)
    return ports


def wait_listening(port: int, child: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if child.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{child.args!r} exited with {child.returncode}:\n{tail}")
        with socket.socket() as sock:
            if sock.connect_ex((HOST, port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {HOST}:{port}")


def die_with_parent() -> None:
    """In the child: receive SIGTERM if this benchmark dies without cleaning up (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def child_env(extra: dict[str, str]) -> dict[str, str]:
    """The environment without proxies or webreach/provider settings, plus ``extra``."""
    dropped = ("WEBREACH_", "EXA_", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(dropped)}
    env.update(NO_PROXY=f"{HOST},localhost", no_proxy=f"{HOST},localhost", **extra)
    return env


def spawn(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as output:
        return subprocess.Popen(
            command,
            env=env,
            cwd=log.parent,  # a fresh directory: no webreach.toml is read
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches only this script, which stops the children
            preexec_fn=die_with_parent,
        )


def stop(children: list[subprocess.Popen[bytes]]) -> None:
    for child in children:
        if child.poll() is None:
            child.terminate()
    for child in children:
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(timeout=10)


def server_log_summary(log: Path) -> list[str]:
    """Distinct error lines in the server's output (the last line of each traceback)."""
    lines = log.read_text(errors="replace").splitlines()
    errors: Counter[str] = Counter()
    for number, line in enumerate(lines):
        if line.startswith("Traceback"):
            tail = next(
                (x for x in lines[number + 1 :] if x and not x.startswith((" ", "Traceback"))),
                "?",
            )
            errors[tail[:160]] += 1
        elif "ERROR" in line or "Exception" in line:
            errors[line[:160]] += 1
    return [f"  {n}x {text}" for text, n in errors.most_common(6)]


def start_rig(
    args: argparse.Namespace, workdir: Path, children: list[Any], variant: Variant
) -> Rig:
    up_port, prov_port, web_port = free_port(), free_port(), free_port()
    page_ports = free_ports(PAGE_ORIGINS, {up_port, prov_port, web_port})
    latency = str(args.latency / 1000)
    workdir.mkdir(parents=True, exist_ok=True)
    logs = [workdir / "upstream.log", workdir / "provider.log", workdir / "server.log"]
    pages = ",".join(f"http://{PAGE_HOST}:{port}" for port in page_ports)
    for role, port, log in zip(("upstream", "provider"), (up_port, prov_port), logs, strict=False):
        command = [sys.executable, str(FAKES), role, "--port", str(port), "--seconds", latency]
        children.append(spawn([*command, "--pages", pages], child_env({}), log))
    ports = [up_port, prov_port]
    if variant.served:
        logs.insert(2, workdir / "pages.log")
        command = [sys.executable, str(PAGE_SERVER)]
        command += [arg for port in page_ports for arg in ("--port", str(port))]
        children.append(spawn(command, child_env({}), logs[2]))
        ports.append(page_ports[-1])
    settings = {
        "WEBREACH_FETCH_ALLOW": PAGE_HOST,
        **({"WEBREACH_SEARCH_CONTEXT_SIZE": variant.context_size} if variant.context_size else {}),
        **({"WEBREACH_TURN_TIMEOUT": str(variant.turn_timeout)} if variant.turn_timeout else {}),
    }
    server_env = child_env(
        {
            **settings,
            "WEBREACH_UPSTREAM_BASE_URL": f"http://{HOST}:{up_port}/v1",
            "WEBREACH_UPSTREAM_API_KEY": UPSTREAM_KEY,
            "WEBREACH_SEARCH_PROVIDER": "exa",
            "EXA_API_KEY": EXA_KEY,
            "EXA_BASE_URL": f"http://{HOST}:{prov_port}",
            "WEBREACH_CACHE_TTL": "0",
            "WEBREACH_SIGNING_KEY": "bench-signing-key-0123456789abcdef",
        }
    )
    command = [sys.executable, "-m", "webreach", "serve", "--host", HOST, "--port", str(web_port)]
    server = spawn([*command, "--log-level", "debug"], server_env, logs[-1])
    children.append(server)
    for child, port, log in zip(children, (*ports, web_port), logs, strict=True):
        wait_listening(port, child, log)
    return Rig(
        webreach=f"http://{HOST}:{web_port}",
        upstream=f"http://{HOST}:{up_port}",
        provider=f"http://{HOST}:{prov_port}",
        server_pid=server.pid,
        log=logs[-1],
        args=args,
        variant=variant,
        others=[child.pid for child in children if child is not server],
    )
