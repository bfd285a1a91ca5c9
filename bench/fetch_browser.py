"""Does ``auto`` read app shells that ``http`` cannot, without starting a browser for pages?

One run, side by side:

1. **The app-shell rule alone** (no browser) on every page of ``../shared/corpus/``: the
   Readability pages and the four labelled extraction sets, ``wcxb-dev`` per page type; how
   often it fires, the pages it fires on (with the size of their labelled main content), and
   its cost per page against webreach's renderer.
2. **Fetches** from a page server on 127.0.0.1, through ``webreach``'s own runtime
   (``WEBREACH_FETCH_PROVIDER=http`` and ``auto``, no cache): corpus pages as served
   (``plain``), the pages made into shells as served (``sources``) and their app-shell
   versions (``bench/shells.py``: ``json``, ``inline``, ``timer``, ``route``), plus the
   hand-written shells (``minimal``). Per set and provider: recall of the labelled main
   content's words in the page as webreach renders it, p50 / p90 latency, how many fetches a
   browser drew. For ``auto``: the browser's peak RSS (every Chromium process under this one,
   summed from /proc) and its processes left once the runtime is closed.

    python bench/fetch_browser.py [--pages 25] [--plain 100] [--rule-only]

``--pages`` corpus pages are made into shells of each kind; ``--plain`` pages are fetched as
served. The browser is ``WEBREACH_BROWSER_EXECUTABLE`` (default ``/usr/bin/chromium``).
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from fetch_render_metrics import (  # noqa: E402
    CORPUS,
    EXTRACTION,
    LABELLED_SETS,
    html_text,
    markdown_text,
    word_scores,
    words,
)
from shells import DRAWN, KINDS, MINIMAL, Files, build_shell  # noqa: E402

from webreach.providers.fetch.app_shell import app_shell  # noqa: E402

WCXB = EXTRACTION / "wcxb-dev"
SHELL_SETS = (*KINDS, "minimal")


@dataclass(frozen=True, slots=True)
class Page:
    set: str
    name: str
    html: str
    expected: str


def readability_pages() -> Iterator[Page]:
    for folder in sorted(path for path in CORPUS.iterdir() if path.is_dir()):
        source, expected = folder / "source.html", folder / "expected.html"
        if source.is_file() and expected.is_file():
            text = html_text(expected.read_text(encoding="utf-8", errors="replace"))
            yield Page("readability", folder.name, source.read_text("utf-8", "replace"), text)


def labelled_pages(name: str) -> Iterator[Page]:
    folder = EXTRACTION / name
    with gzip.open(folder / "ground-truth.jsonl.gz", "rt", encoding="utf-8") as lines:
        truth = {row["page_id"]: row["plaintext"] or "" for row in map(json.loads, lines)}
    for page_id in sorted(truth):
        with gzip.open(folder / "html" / f"{page_id}.html.gz", "rb") as raw:
            yield Page(name, page_id, raw.read().decode("utf-8", "replace"), truth[page_id])


def wcxb_pages() -> Iterator[Page]:
    """WCXB's development split, each page's set named by its page type (``wcxb-dev/forum``)."""
    listed = json.loads((WCXB / "metadata.json").read_text(encoding="utf-8"))["files"]
    for path in sorted((WCXB / "ground-truth").glob("*.json")):
        truth = json.loads(path.read_text(encoding="utf-8"))
        kind = truth["_internal"]["page_type"]["primary"]
        with gzip.open(WCXB / "html" / f"{path.stem}.html.gz", "rb") as raw:
            html = raw.read().decode("utf-8", "replace")
        spa = " (labelled a single-page app)" if listed.get(path.stem, {}).get("spa") else ""
        expected = truth["ground_truth"].get("main_content") or ""
        yield Page(f"wcxb-dev/{kind}", path.stem + spa, html, expected)


def corpus_pages() -> list[Page]:
    pages: list[Page] = []
    if CORPUS.is_dir():
        pages += readability_pages()
    pages += (
        p for name in LABELLED_SETS if (EXTRACTION / name).is_dir() for p in labelled_pages(name)
    )
    if WCXB.is_dir():
        pages += wcxb_pages()
    return pages


# ---------------------------------------------------------------------------------------------
# 1. The rule alone.


def rule_table(pages: list[Page]) -> None:
    from webreach.tools.render import render_html

    fired: Counter[str] = Counter()
    total: Counter[str] = Counter()
    hits: list[tuple[Page, str]] = []
    rule_s = render_s = 0.0
    for page in pages:
        start = time.perf_counter()
        reason = app_shell(page.html)
        rule_s += time.perf_counter() - start
        total[page.set] += 1
        if reason is not None:
            fired[page.set] += 1
            hits.append((page, reason))
    for page in pages[:: max(1, len(pages) // 300)]:  # the renderer on a spread of 300 pages
        start = time.perf_counter()
        render_html(page.html, base_url="http://127.0.0.1/")
        render_s += (time.perf_counter() - start) / len(pages[:: max(1, len(pages) // 300)])
    print("The app-shell rule on the corpus (no browser)")
    print(f"{'set / page type':<26}{'pages':>7}{'fires':>7}{'rate':>8}")
    for name in total:
        print(f"{name:<26}{total[name]:>7}{fired[name]:>7}{fired[name] / total[name]:>8.1%}")
    all_fired, all_total = sum(fired.values()), sum(total.values())
    print(f"{'all':<26}{all_total:>7}{all_fired:>7}{all_fired / max(all_total, 1):>8.1%}")
    for page, reason in hits:
        print(f"  fires on {page.set} {page.name}: {reason}; labelled main content "
              f"{len(page.expected.split())} words")  # fmt: skip
    per_page = rule_s / max(len(pages), 1)
    print(f"cost: {per_page * 1000:.2f} ms a page, the renderer {render_s * 1000:.2f} ms "
          f"({per_page / render_s:.0%} of it)\n")  # fmt: skip


# ---------------------------------------------------------------------------------------------
# 2. Fetches from a local page server.


def serve(files: Files) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = files.get(self.path.split("?")[0])
            kind, body = found or ("text/plain", b"not here")
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128

    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@dataclass(frozen=True, slots=True)
class Target:
    set: str
    path: str
    expected: str


def spread(pages: list[Page], count: int) -> list[Page]:
    """`count` pages drawn evenly over the sets, each set's pages evenly over its order."""
    sets: dict[str, list[Page]] = {}
    for page in pages:
        if page.expected.split():
            sets.setdefault(page.set, []).append(page)
    picked: list[Page] = []
    rounds = 0
    while len(picked) < count and any(len(group) > rounds for group in sets.values()):
        for group in sets.values():
            step = max(1, len(group) // max(1, count // len(sets) + 1))
            index = rounds * step
            if index < len(group) and len(picked) < count:
                picked.append(group[index])
        rounds += 1
    return picked


def targets(pages: list[Page], shell_count: int, plain_count: int) -> tuple[Files, list[Target]]:
    files: Files = {}
    found: list[Target] = []
    for number, page in enumerate(spread(pages, plain_count)):
        path = f"/plain/{number}/"
        files[path] = ("text/html; charset=utf-8", page.html.encode())
        found.append(Target("plain", path, page.expected))
    for number, page in enumerate(spread(pages, shell_count)):
        path = f"/source/{number}/"
        files[path] = ("text/html; charset=utf-8", page.html.encode())
        found.append(Target("sources", path, page.expected))
        for kind in KINDS:
            path = f"/{kind}/{number}/"
            files.update(build_shell(kind, page.html, path))
            found.append(Target(kind, path, page.expected))
    for shell in MINIMAL.values():
        files.update(shell)
        found.append(Target("minimal", next(iter(shell)), html_text(DRAWN)))
    return files, found


@dataclass
class Row:
    recalls: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    browser: int = 0
    failures: int = 0


class ChromiumWatch:
    """Samples the Chromium processes under this one: their summed RSS and PSS, every pid seen."""

    def __init__(self) -> None:
        self.peak_rss = self.peak_pss = 0
        self.seen: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ChromiumWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            pids = chromium_under(os.getpid())
            self.seen |= pids
            self.peak_rss = max(self.peak_rss, sum(map(rss, pids)))
            self.peak_pss = max(self.peak_pss, sum(map(pss, pids)))

    def left(self) -> int:
        """How many of the Chromium processes seen still run (zombies aside)."""
        return sum(1 for pid in self.seen if _state(pid) not in ("", "Z"))


def _stat(pid: int) -> tuple[str, str, int]:
    """(name, state, parent) of a process, from /proc/<pid>/stat; empty when gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "", "", 0
    name = raw[raw.index("(") + 1 : raw.rindex(")")]
    state, parent = raw[raw.rindex(")") + 2 :].split()[:2]
    return name, state, int(parent)


def _state(pid: int) -> str:
    return _stat(pid)[1]


def chromium_under(root: int) -> set[int]:
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            name, _, parent = _stat(int(entry.name))
            parents[int(entry.name)], names[int(entry.name)] = parent, name
    found = set()
    for pid, name in names.items():
        if "chrom" not in name.lower() and "headless" not in name.lower():
            continue
        up, hops = parents.get(pid, 0), 0
        while up and up != root and hops < 64:
            up, hops = parents.get(up, 0), hops + 1
        if up == root:
            found.add(pid)
    return found


def pss(pid: int) -> int:
    """Proportional set size: shared pages split among the processes that share them."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


async def fetch_all(provider: str, base: str, found: list[Target]) -> dict[str, Row]:
    os.environ["WEBREACH_FETCH_PROVIDER"] = provider
    from webreach.config import build_runtime, load_settings
    from webreach.tools.fetch import read_page

    rows: dict[str, Row] = {}
    runtime = build_runtime(load_settings(), default_cache=None)
    async with runtime:
        for target in found:
            row = rows.setdefault(target.set, Row())
            start = time.perf_counter()
            try:
                result, rendered = await read_page(runtime, base + target.path)
            except Exception as error:
                row.failures += 1
                print(f"  {provider} {target.path}: {error}", file=sys.stderr)
                continue
            row.seconds.append(time.perf_counter() - start)
            row.browser += result.rendered_by == "browser"
            got = words(markdown_text(rendered.text))
            row.recalls.append(word_scores(got, words(target.expected)).recall)
    return rows


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


def fetch_table(shell_count: int, plain_count: int, pages: list[Page]) -> None:
    os.environ.setdefault("WEBREACH_BROWSER_EXECUTABLE", "/usr/bin/chromium")
    if os.geteuid() == 0:  # Chromium's sandbox cannot start as root
        os.environ.setdefault("WEBREACH_BROWSER_NO_SANDBOX", "true")
        print("running as root: Chromium without its sandbox (WEBREACH_BROWSER_NO_SANDBOX)")
    os.environ["WEBREACH_FETCH_ALLOW"] = "127.0.0.1"
    os.environ["WEBREACH_CACHE"] = "none"
    files, found = targets(pages, shell_count, plain_count)
    server, base = serve(files)
    try:
        http = asyncio.run(fetch_all("http", base, found))
        with ChromiumWatch() as watch:
            auto = asyncio.run(fetch_all("auto", base, found))
            time.sleep(0.5)  # closing has returned; let the kernel reap what it stopped
        left = watch.left()
    finally:
        server.shutdown()
    fetches = sum(len(row.seconds) + row.failures for row in auto.values())
    print(f"Fetches from 127.0.0.1: {plain_count} plain pages, {shell_count} pages as shells of "
          f"each kind, {len(MINIMAL)} hand-written shells")  # fmt: skip
    print(f"{'set':<10}{'pages':>6}  {'recall http':>11}{'auto':>7}  {'p50 http':>9}{'auto':>7}"
          f"  {'p90 http':>9}{'auto':>7}  {'browser drew':>12}  failures")  # fmt: skip
    for name in ("plain", "sources", *SHELL_SETS):
        h, a = http.get(name, Row()), auto.get(name, Row())
        count = len(a.seconds) + a.failures
        print(
            f"{name:<10}{count:>6}  {_mean(h.recalls):>11.3f}{_mean(a.recalls):>7.3f}"
            f"  {quantile(h.seconds, 0.5):>9.2f}{quantile(a.seconds, 0.5):>7.2f}"
            f"  {quantile(h.seconds, 0.9):>9.2f}{quantile(a.seconds, 0.9):>7.2f}"
            f"  {a.browser:>5} ({a.browser / max(count, 1):>4.0%})  {h.failures}/{a.failures}"
        )
    print(f"auto: browser peak RSS {watch.peak_rss / 2**20:,.0f} MiB, summed over its processes"
          f" (PSS, shared pages counted once: {watch.peak_pss / 2**20:,.0f} MiB);"
          f" {len(watch.seen)} Chromium processes seen over {fetches} fetches, {left} left after"
          " the runtime closed")  # fmt: skip


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=25, help="corpus pages made into shells")
    parser.add_argument("--plain", type=int, default=100, help="corpus pages fetched as served")
    parser.add_argument("--rule-only", action="store_true", help="only the rule's table")
    args = parser.parse_args()
    pages = corpus_pages()
    if not pages:
        print("skipped: ../shared/corpus is not there")
        return
    rule_table(pages)
    if not args.rule_only:
        fetch_table(args.pages, args.plain, pages)


if __name__ == "__main__":
    main()
