"""Start-up cost of the command line, each command as a whole process, beside ``import httpx``.

Side by side, in one run: ``python -c "import httpx"`` (what any Python HTTP tool pays at
least), the libraries a cached fetch needs imported and nothing else (its floor), ``webreach
--help``, a ``webreach fetch`` of a small page that the cache answers, and a ``webreach search``
against a local replay of Exa (``--no-cache``, snippets only, so each one reaches the replay).
Each is timed as wall-clock and CPU (user + system) and printed with its ratio to ``import
httpx``.

The page server and the replay listen on 127.0.0.1; the cache is a SQLite file in a temporary
folder (``WEBREACH_CACHE``), filled by one fetch before the timed ones. No machine setting or
key is passed on. Every command imports compiled modules, as an installed package does (pip
compiles a wheel's modules when it installs them): the children write and read their bytecode
in a temporary folder (``PYTHONPYCACHEPREFIX``) even where ``PYTHONDONTWRITEBYTECODE`` is set,
and each command runs once untimed first. To time another checkout (before a change, say), put
its ``src`` first on ``PYTHONPATH``: the commands run as ``python -m webreach`` and import what
it finds first.

    python bench/cli_startup.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

PAGE = (
    b"<!doctype html><html><head><title>A small page</title></head><body><main>"
    b"<h1>A small page</h1><p>A paragraph of text, long enough to be the page's content, "
    b"with a <a href='/other'>link</a> in it.</p><p>A second paragraph.</p></main></body></html>"
)
EXA_RESPONSE = {
    "results": [
        {"url": "https://www.python.org/3.13", "title": "Python 3.13", "highlights": ["New."]},
        {"url": "https://docs.python.org/3.13", "title": "What's new", "highlights": ["Docs."]},
    ]
}
FLOOR = "import asyncio, sqlite3, pydantic_settings, selectolax.lexbor, typer"
"""What a cached ``webreach fetch`` cannot do without: its event loop, the cache, the settings,
the HTML parser and the command line; the row that imports them is its floor."""
OWN_PREFIXES = ("WEBREACH_", "EXA_", "DUCKDUCKGO_", "BRAVE_", "TAVILY_", "PERPLEXITY_")


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float


def measure(command: list[str], env: dict[str, str], repeat: int) -> Timing:
    """Median wall-clock and CPU seconds of ``command`` run ``repeat`` times."""
    walls, cpus = [], []
    subprocess.run(command, env=env, capture_output=True)  # its bytecode written, not timed
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(
            after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
        )
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    return Timing(statistics.median(walls), statistics.median(cpus))


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the bench prints its own lines."""


@contextmanager
def page_server() -> Iterator[str]:
    """A small HTML page on 127.0.0.1, at the URL yielded."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}/page.html"
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    from replay_server import ReplayServer, Reply  # from tests/, on the path above

    webreach = [sys.executable, "-m", "webreach"]
    with (
        tempfile.TemporaryDirectory() as folder,
        tempfile.TemporaryDirectory() as bytecode,
        page_server() as url,
        ReplayServer() as exa,
    ):
        exa.route("POST", "/search", Reply(json=EXA_RESPONSE))
        host = url.split("/")[2]
        env = {k: v for k, v in os.environ.items() if not k.startswith(OWN_PREFIXES)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(
            PYTHONPYCACHEPREFIX=bytecode,
            WEBREACH_CACHE=f"sqlite:///{Path(folder) / 'cache.sqlite3'}",
            WEBREACH_FETCH_ALLOW=host,
            WEBREACH_SEARCH_PROVIDER="exa",
            WEBREACH_SEARCH_CONTEXT_SIZE="low",
            EXA_API_KEY="bench-key",
            EXA_BASE_URL=exa.url,
        )
        filled = subprocess.run([*webreach, "fetch", url, "--json"], env=env, capture_output=True)
        if filled.returncode != 0:
            raise SystemExit(f"the first fetch failed:\n{filled.stderr.decode()}")
        rows = [
            ('python -c "import httpx"', [sys.executable, "-c", "import httpx"]),
            ("the libraries fetch needs", [sys.executable, "-c", FLOOR]),
            ("webreach --help", [*webreach, "--help"]),
            ("webreach fetch (cached)", [*webreach, "fetch", url]),
            ("webreach search (replay)", [*webreach, "search", "python 3.13", "--no-cache"]),
        ]
        timings = [(name, measure(command, env, args.repeat)) for name, command in rows]
    base = timings[0][1]
    print(f"median of {args.repeat} runs each; ratios are to `import httpx`")
    print(f"{'':26} {'wall':>8} {'':>6}  {'cpu':>8} {'':>6}")
    for name, timing in timings:
        print(
            f"{name:26} {timing.wall * 1000:6.0f} ms {timing.wall / base.wall:5.2f}x"
            f"  {timing.cpu * 1000:6.0f} ms {timing.cpu / base.cpu:5.2f}x"
        )


if __name__ == "__main__":
    main()
