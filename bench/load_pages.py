"""The sources' pages of ``bench/load.py`` at ``medium``: which pages, a server for them, what
rendering them costs, and how late the server's page reads ended.

* The pages: the five pages of Mozilla Readability's test corpus (``../shared/corpus/pages/``,
  read at run time) whose sizes sit at the corpus's median, so a turn reads pages of a
  realistic size; without the corpus, five generated articles of about 100 KB.
* ``python bench/load_pages.py --port 8003 [--port 8004 ...]``: an asyncio server that answers
  ``GET /page/<n>`` (n from 1) on every port given at once with page n, so it is never the
  bottleneck, and closes the connection: real sources are on as many hosts, so each read
  connects anew and resolves the host's name, and each port is an origin of its own.
* :func:`render_cpu`: the CPU seconds webreach's own renderer spends on each page, in a fresh
  process, the reference for the server's CPU per turn.
* :func:`passage_reads`: the server's ``passages_read`` debug lines (one per search that read
  pages): how long the reads took against their deadline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

HOST = "127.0.0.1"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "pages"
PAGES = 5
"""As many as ``medium`` reads per search."""


def corpus_pages(corpus: Path = CORPUS, count: int = PAGES) -> list[tuple[str, str]]:
    """``(name, html)`` of the ``count`` corpus pages around the median size, or generated
    articles when the corpus is not there."""
    sources = sorted(
        (path.stat().st_size, path.parent.name, path)
        for path in corpus.glob("*/source.html")
        if path.is_file()
    )
    if len(sources) < count:
        return [(f"generated-{n}", generated(n)) for n in range(1, count + 1)]
    middle = len(sources) // 2 - count // 2
    chosen = sources[middle : middle + count]
    return [(name, path.read_text(encoding="utf-8", errors="replace")) for _, name, path in chosen]


def generated(seed: int, paragraphs: int = 220) -> str:
    """An article page of about 100 KB: navigation, paragraphs with links, a footer."""
    nav = "".join(f'<li><a href="/section/{n}">Section {n}</a></li>' for n in range(40))
    body = "".join(
        f"<p>Paragraph {n} of story {seed}: Iceland had about 390,000 inhabitants in 2024, "
        f'says <a href="/source/{n}">the statistics office</a>, up from 2023; fishing, '
        "tourism and aluminium smelting employ most of them, and the capital holds two "
        "thirds of the population.</p>"
        for n in range(paragraphs)
    )
    return (
        f"<!doctype html><html><head><title>Story {seed}</title></head><body>"
        f"<nav><ul>{nav}</ul></nav><article><h1>Story {seed}</h1>{body}</article>"
        f"<footer>{nav}</footer></body></html>"
    )


def serve_pages(ports: list[int]) -> None:
    pages = [html.encode() for _, html in corpus_pages()]

    async def page(request: web.Request) -> web.Response:
        number = int(request.match_info["number"])
        if not 1 <= number <= len(pages):
            raise web.HTTPNotFound()
        response = web.Response(body=pages[number - 1], content_type="text/html", charset="utf-8")
        response.force_close()  # each source its own connection, as each is its own host
        return response

    app = web.Application()
    app.add_routes([web.get("/page/{number:\\d+}", page)])
    asyncio.run(_serve(app, ports))


async def _serve(app: web.Application, ports: list[int]) -> None:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    for port in ports:
        await web.TCPSite(runner, HOST, port, backlog=4096).start()
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def render_cpu(rounds: int = 10) -> dict[str, float]:
    """CPU seconds webreach's renderer takes for each page: the least of ``rounds``, as a
    machine busy with anything else only adds to it, in a fresh process, as the load
    generator's own heap after a wave slowed its renders by up to 1.7 times."""
    command = [sys.executable, __file__, "--render-cpu", str(rounds)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    costs: dict[str, float] = json.loads(done.stdout)
    return costs


def _render_cpu_here(rounds: int) -> dict[str, float]:
    from webreach.seam import FetchResult, HtmlBody
    from webreach.tools.fetch import render_body

    costs = {}
    for number, (name, html) in enumerate(corpus_pages(), 1):
        result = FetchResult(f"http://{HOST}/page/{number}", 200, HtmlBody(html))
        best = float("inf")
        for _ in range(rounds):
            began = time.process_time()
            render_body(result)
            best = min(best, time.process_time() - began)
        costs[name] = best
    return costs


@dataclass(frozen=True)
class Reads:
    """One search's page reads, from the server's debug line."""

    pages: int
    read: int
    deadline: float
    seconds: float
    ranking: float | None
    """The cutting and ranking after the reads (a line from before it was logged has none)."""

    @property
    def late(self) -> float:
        return max(0.0, self.seconds - self.deadline)


_READS = re.compile(r"\[pages=(\d+) read=(\d+) deadline_s=([\d.]+) seconds=([\d.]+) ")
_RANKING = re.compile(r" ranking_s=([\d.]+)")


def passage_reads(log: Path, skip: int = 0) -> list[Reads]:
    """The ``passages_read`` lines of the server's text log, after its first ``skip`` bytes."""
    with log.open("rb") as file:
        file.seek(skip)
        text = file.read().decode(errors="replace")
    return [
        Reads(int(m[1]), int(m[2]), float(m[3]), float(m[4]), ranking(line))
        for line in text.splitlines()
        if " passages: " in line and (m := _READS.search(line))
    ]


def ranking(line: str) -> float | None:
    found = _RANKING.search(line)
    return float(found[1]) if found else None


def main() -> None:
    parser = argparse.ArgumentParser(description="The page server of bench/load.py.")
    parser.add_argument("--port", type=int, action="append")
    parser.add_argument("--render-cpu", type=int, metavar="ROUNDS", help="print render_cpu()")
    args = parser.parse_args()
    if args.render_cpu:
        print(json.dumps(_render_cpu_here(args.render_cpu)))
    elif args.port:
        serve_pages(args.port)
    else:
        parser.error("--port or --render-cpu")


if __name__ == "__main__":
    main()
