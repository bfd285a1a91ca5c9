"""Does the fact the user asked for reach the model? Evidence recall of ``web_search`` at a size
budget, for ``low``, ``medium`` and ``high`` side by side.

Setup. The real web pages of ``../shared/corpus/pages/`` (each with its main content as a
careful reader finds it, ``expected.html``) are served on 127.0.0.1 and fetched by the real
safe fetcher (allowed to reach 127.0.0.1), with no cache. For each page one question is made,
deterministically:

- the answer is a sentence of the expected main content of 10 to 40 words that starts past its
  first 200 characters (so no snippet holds it), the one nearest to 60 % of the body whose words
  also appear in a row in the page as webreach renders it (what ``web_fetch`` would show; a
  page without one is skipped and counted);
- the query is the page's title plus the four longest words of the sentence before the answer
  that are not in the answer (the asker knows the topic, not the fact);
- a local search provider returns the article among 7 distractors (other corpus pages), at rank
  1 to 4 (question number mod 4), every source with a realistic snippet: the first 200
  characters of its expected content.

A question counts as answered when the answer's words appear in a row in the tool's output read
as a model reads it: Markdown markup aside (a link's label is read, its URL is not).
Printed per size: recall, mean output characters, p50 / p90 latency of the whole call; with
``--rankings`` also each passage ranking at medium and high. With ``--shells`` a quarter of the
questions' articles are served as app shells instead (``bench/shells.py``: drawn by script from
a JSON call, an inline script, a 1 s timer or client-side routing, in turn) and every size runs
twice, fetched by the ``http`` and by the ``auto`` provider (a browser for app shells;
``WEBREACH_BROWSER_EXECUTABLE``, default ``/usr/bin/chromium``).

    python bench/search_substance.py [--limit N] [--rankings] [--shells]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from webreach.providers.fetch.http import HttpFetchProvider  # noqa: E402
from webreach.seam import SearchRequest, SearchResult, SearchSource, WebRuntime  # noqa: E402
from webreach.tools import ToolOptions, web_search_tool  # noqa: E402
from webreach.tools.render import render_page  # noqa: E402
from webreach.tools.render.markdown.plain import markdown_to_text  # noqa: E402
from webreach.tools.search import passages, ranking  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from shells import KINDS, Files, build_shell  # noqa: E402

DISTRACTORS = 7
SNIPPET = 200
_WORD = re.compile(r"\w+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'“(\[A-Z0-9])")


def corpus_dir() -> Path | None:
    for base in ROOT.parents:
        folder = base / "shared" / "corpus" / "pages"
        if folder.is_dir():
            return folder
    return None


def words(text: str) -> str:
    return " ".join(w.lower() for w in _WORD.findall(text))


@dataclass(frozen=True)
class Page:
    name: str
    title: str
    html: bytes
    expected: str


@dataclass(frozen=True)
class Question:
    page: Page
    query: str
    answer: str


def load(folder: Path) -> list[Page]:
    pages = []
    for path in sorted(folder.iterdir()):
        source, expected = path / "source.html", path / "expected.html"
        if not (source.is_file() and expected.is_file()):
            continue
        html = source.read_bytes()
        text = LexborHTMLParser(expected.read_text(errors="replace")).text(separator=" ")
        text = " ".join(text.split())
        rendered = render_page(html.decode("utf-8", "replace"), base_url=f"http://x/{path.name}")
        pages.append(Page(path.name, rendered.title or path.name, html, text))
    return pages


def question(page: Page) -> Question | None:
    rendered = words(markdown_to_text(render_page(page.html.decode("utf-8", "replace")).markdown))
    sentences = _SENTENCE.split(page.expected)
    offsets, at = [], 0
    for sentence in sentences:
        at = page.expected.find(sentence, at)
        offsets.append(at)
    target = len(page.expected) * 0.6
    best: tuple[float, int] | None = None
    for index, (sentence, offset) in enumerate(zip(sentences, offsets, strict=True)):
        count = len(_WORD.findall(sentence))
        if index == 0 or offset < SNIPPET or not 10 <= count <= 40:
            continue
        if words(sentence) not in rendered:
            continue
        distance = abs(offset - target)
        if best is None or distance < best[0]:
            best = (distance, index)
    if best is None:
        return None
    answer = sentences[best[1]]
    taken = set(words(answer).split())
    near = [w for w in _WORD.findall(sentences[best[1] - 1]) if w.lower() not in taken]
    near = sorted(dict.fromkeys(near), key=lambda w: (-len(w), w))[:4]
    return Question(page, f"{page.title} {' '.join(near)}", answer)


def serve(pages: list[Page], files: Files | None = None) -> tuple[ThreadingHTTPServer, str]:
    html = "text/html; charset=utf-8"
    served = {f"/{p.name}": (html, p.html) for p in pages} | (files or {})

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            kind, body = served.get(self.path, (html, b""))
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        # socketserver's default backlog of 5 is below the 8 pages ``high`` opens at once: the
        # kernel drops the extra connection attempts, which the client retries only after 1 s.
        request_queue_size = 128

    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


class LocalSearch:
    """Answers each bench query with its article among distractors."""

    id = "bench"

    def __init__(
        self,
        base: str,
        pages: list[Page],
        questions: list[Question],
        targets: dict[str, str] | None = None,
    ) -> None:
        """`targets` serves some questions' articles elsewhere: page name -> path."""
        self.results: dict[str, SearchResult] = {}
        targets = targets or {}
        for number, q in enumerate(questions):
            others = [p for p in pages if p is not q.page]
            picked = [others[(number * 13 + k * 17) % len(others)] for k in range(DISTRACTORS)]
            picked = list(dict.fromkeys(picked))
            picked.insert(number % 4, q.page)
            self.results[q.query] = SearchResult(
                tuple(
                    SearchSource(
                        base + targets[p.name]
                        if p is q.page and p.name in targets
                        else f"{base}/{p.name}",
                        p.title,
                        p.expected[:SNIPPET],
                    )
                    for p in picked
                )
            )

    def available(self) -> bool:
        return True

    async def search(self, request: SearchRequest) -> SearchResult:
        return self.results[request.query]


@dataclass
class Row:
    label: str
    recall: float
    mean_chars: float
    p50: float
    p90: float


def shell_targets(questions: list[Question]) -> tuple[Files, dict[str, str]]:
    """Every fourth question's article as an app shell, the four kinds in turn."""
    files: Files = {}
    targets: dict[str, str] = {}
    for number, q in enumerate(questions[::4]):
        path = f"/shell/{q.page.name}/"
        kind = KINDS[number % len(KINDS)]
        files.update(build_shell(kind, q.page.html.decode("utf-8", "replace"), path))
        targets[q.page.name] = path
    return files, targets


def runtime_for(fetch: str, search: LocalSearch) -> WebRuntime:
    """``direct``: the HTTP fetcher alone in a bare runtime; ``http`` or ``auto``: the runtime
    webreach builds from its settings, with that fetch provider and no cache."""
    if fetch == "direct":
        runtime = WebRuntime()
        fetcher = HttpFetchProvider(allow=["127.0.0.1"])
        runtime.register_fetch_provider(fetcher)
        runtime.own(fetcher)  # its connections close with the runtime
    else:
        from webreach.config import build_runtime, load_settings

        settings = load_settings(
            search_provider=search.id, fetch_provider=fetch, fetch_allow="127.0.0.1", cache="none"
        )
        runtime = build_runtime(settings, default_cache=None)
    runtime.register_search_provider(search)
    return runtime


async def measure(
    label: str, size: str, questions: list[Question], search: LocalSearch, fetch: str = "direct"
) -> Row:
    answered, sizes, times = 0, [], []
    async with runtime_for(fetch, search) as runtime:
        tool = web_search_tool(runtime, ToolOptions(search_context_size=size))  # type: ignore[arg-type]
        for q in questions:
            start = time.perf_counter()
            result = await tool.execute({"queries": [q.query]})
            times.append(time.perf_counter() - start)
            sizes.append(len(result.text))
            answered += words(q.answer) in words(markdown_to_text(result.text))
    times.sort()
    return Row(
        label,
        answered / len(questions),
        statistics.mean(sizes),
        times[len(times) // 2],
        times[min(len(times) - 1, int(len(times) * 0.9))],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument("--rankings", action="store_true", help="compare passage rankings")
    parser.add_argument(
        "--shells", action="store_true", help="a quarter of the articles as app shells"
    )
    args = parser.parse_args()
    folder = corpus_dir()
    if folder is None:
        print("skipped: ../shared/corpus/pages is not there")
        return
    pages = load(folder)
    made = [question(p) for p in pages]
    questions = [q for q in made if q is not None]
    if args.limit:
        questions = questions[: args.limit]
    if args.shells:
        shells(pages, questions, made.count(None))
        return
    server, base = serve(pages)
    search = LocalSearch(base, pages, questions)
    print(f"{len(pages)} pages, {len(questions)} questions ({made.count(None)} pages skipped)")
    cases = [("low", "low", ranking.DEFAULT_RANKING, passages.SELECTION)]
    methods = ranking.RANKINGS if args.rankings else (ranking.DEFAULT_RANKING,)
    selections = ("rounds", "score") if args.rankings else (passages.SELECTION,)
    for size in ("medium", "high"):
        cases += [(f"{size} {m} {s}", size, m, s) for m in methods for s in selections]
    rows = []
    for label, size, method, selection in cases:
        ranking.DEFAULT_RANKING = method
        passages.SELECTION = selection
        rows.append(asyncio.run(measure(label, size, questions, search)))
    server.shutdown()
    table(rows)


def table(rows: list[Row]) -> None:
    print(f"{'size':<28}{'recall':>8}{'mean chars':>12}{'p50 s':>8}{'p90 s':>8}")
    for row in rows:
        print(
            f"{row.label:<28}{row.recall:>8.3f}{row.mean_chars:>12,.0f}"
            f"{row.p50:>8.2f}{row.p90:>8.2f}"
        )


def shells(pages: list[Page], questions: list[Question], skipped: int) -> None:
    os.environ.setdefault("WEBREACH_BROWSER_EXECUTABLE", "/usr/bin/chromium")
    if os.geteuid() == 0:  # Chromium's sandbox cannot start as root
        os.environ.setdefault("WEBREACH_BROWSER_NO_SANDBOX", "true")
    files, targets = shell_targets(questions)
    server, base = serve(pages, files)
    search = LocalSearch(base, pages, questions, targets)
    print(
        f"{len(pages)} pages, {len(questions)} questions ({skipped} pages skipped), "
        f"{len(targets)} of their articles served as app shells"
    )
    rows = [
        asyncio.run(measure(f"{size} {fetch}", size, questions, search, fetch))
        for size in ("low", "medium", "high")
        for fetch in ("http", "auto")
    ]
    server.shutdown()
    table(rows)


if __name__ == "__main__":
    main()
