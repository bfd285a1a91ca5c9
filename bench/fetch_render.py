"""How good and how fast is webreach's HTML→Markdown renderer next to the usual choices?

Every page of the shared real-page corpus (``../shared/corpus/pages/<name>/source.html``, from
Mozilla Readability's test suite) is rendered by each renderer in one process, side by side:

* quality: word F1 of the output against ``expected.html``, the main content as Readability
  extracts it (see ``markdown_words`` and ``word_f1`` for the exact definition);
* speed: MB of source HTML per second over the whole corpus (best of ``--repeat`` interleaved
  passes), and the ratio to markdownify converting the whole page;
* memory: extra peak RSS while rendering the corpus, each renderer in a fresh child process.

    python bench/fetch_render.py [--repeat 3] [--worst 10] [--no-memory]

The bench-only libraries (markdownify, html2text, readability-lxml, trafilatura) are imported
inside their runners, so this module's metric functions can be imported without them.
"""

from __future__ import annotations

import argparse
import gc
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser, LexborNode

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "pages"
BASE_URL = "http://fakehost/test/page.html"

Renderer = Callable[[str], str]

# ---------------------------------------------------------------------------------------------
# The metric, defined once.

# A word is a run of letters or digits: "_" is Markdown emphasis syntax, not part of words.
_WORD = re.compile(r"[^\W_]+")
_IMAGE = re.compile(r"!\[((?:\\.|[^\]\\])*)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"]*\")?\)")
_LINK = re.compile(r"\[((?:\\.|[^\]\\])*)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"]*\")?\)")
_AUTOLINK = re.compile(r"<(?:https?|mailto|ftp):[^>\s]*>")


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_INLINE_TAGS = _names(
    "a abbr b bdi bdo big cite code data del dfn em font i ins kbd label mark nobr q s samp small"
    " span strike strong sub sup time tt u var wbr"
)
_INVISIBLE = _names("script style noscript template -comment head title")


def words(text: str) -> Counter[str]:
    """Lowercased words of `text` as a multiset."""
    return Counter(_WORD.findall(text.lower()))


def markdown_words(markdown: str) -> Counter[str]:
    """Words a reader of the Markdown sees: link targets are syntax, image alt text is not."""
    text = _IMAGE.sub(r" \1 ", markdown)
    text = _LINK.sub(r" \1 ", text)
    text = _AUTOLINK.sub(" ", text)
    return words(text)


def html_words(html: str) -> Counter[str]:
    """Words of an HTML fragment's visible text, block elements separating words."""
    tree = LexborHTMLParser(html)
    parts: list[str] = []
    if tree.root is not None:
        _visible_text(tree.root, parts)
    return words("".join(parts))


def _visible_text(node: LexborNode, parts: list[str]) -> None:
    for child in node.iter(include_text=True):
        tag = child.tag
        if tag == "-text":
            parts.append(child.text_content or "")
        elif tag in _INVISIBLE:
            continue
        elif tag in _INLINE_TAGS:
            _visible_text(child, parts)
        else:
            parts.append(" ")
            _visible_text(child, parts)
            parts.append(" ")


def word_f1(got: Counter[str], expected: Counter[str]) -> float:
    """Multiset F1 = 2PR/(P+R) over word counts; two empty texts agree perfectly."""
    if not got and not expected:
        return 1.0
    common = sum((got & expected).values())
    if common == 0:
        return 0.0
    precision = common / sum(got.values())
    recall = common / sum(expected.values())
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True, slots=True)
class Page:
    name: str
    source: str
    expected: Counter[str]

    @property
    def size(self) -> int:
        return len(self.source.encode("utf-8"))


def load_corpus(corpus: Path = CORPUS) -> list[Page]:
    """Read every page that has both a source and an expected rendering."""
    pages = []
    for folder in sorted(path for path in corpus.iterdir() if path.is_dir()):
        source, expected = folder / "source.html", folder / "expected.html"
        if source.is_file() and expected.is_file():
            html = source.read_text(encoding="utf-8", errors="replace")
            wanted = html_words(expected.read_text(encoding="utf-8", errors="replace"))
            pages.append(Page(folder.name, html, wanted))
    return pages


# ---------------------------------------------------------------------------------------------
# The renderers.


def webreach_renderer() -> Renderer:
    from webreach.tools.render import render_html

    return lambda html: render_html(html, base_url=BASE_URL)


def markdownify_renderer() -> Renderer:
    from markdownify import markdownify

    return lambda html: str(markdownify(html))


def html2text_renderer() -> Renderer:
    import html2text

    def render(html: str) -> str:
        converter = html2text.HTML2Text(baseurl=BASE_URL, bodywidth=0)
        return str(converter.handle(html))

    return render


def readability_renderer() -> Renderer:
    import html_to_markdown
    from readability import Document

    def render(html: str) -> str:
        summary = Document(html, url=BASE_URL).summary(html_partial=True)
        return str(html_to_markdown.convert(summary).content or "")

    return render


def trafilatura_renderer() -> Renderer:
    import trafilatura

    def render(html: str) -> str:
        found = trafilatura.extract(
            html, url=BASE_URL, output_format="markdown", include_links=True
        )
        return found or ""

    return render


RENDERERS: dict[str, Callable[[], Renderer]] = {
    "webreach": webreach_renderer,
    "markdownify (whole page)": markdownify_renderer,
    "html2text (whole page)": html2text_renderer,
    "readability-lxml + html-to-markdown": readability_renderer,
    "trafilatura": trafilatura_renderer,
}
BASELINE = "markdownify (whole page)"


@dataclass(slots=True)
class Result:
    name: str
    f1: dict[str, float]
    seconds: float
    peak_mb: float | None = None


def measure(renderers: dict[str, Renderer], pages: list[Page], repeat: int) -> list[Result]:
    """Score each renderer's output, then time full passes over the corpus.

    Timing rounds interleave the renderers and keep each one's best pass, so that a change in
    machine load during the run does not favour whichever renderer ran at a quiet moment.
    """
    results = [
        Result(
            name,
            {
                page.name: word_f1(markdown_words(render(page.source)), page.expected)
                for page in pages
            },
            float("inf"),
        )
        for name, render in renderers.items()
    ]
    for _ in range(repeat):
        for result in results:
            render = renderers[result.name]
            gc.collect()
            start = time.perf_counter()
            for page in pages:
                render(page.source)
            result.seconds = min(result.seconds, time.perf_counter() - start)
    return results


def peak_rss_mb(name: str) -> float | None:
    """Extra peak RSS of rendering the corpus once, in a fresh process (Linux only)."""
    done = subprocess.run(
        [sys.executable, __file__, "--memory-child", name], capture_output=True, text=True
    )
    try:
        return float(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def _memory_child(name: str) -> None:
    pages = load_corpus()
    render = RENDERERS[name]()
    render(pages[0].source)
    gc.collect()
    status = Path("/proc/self/status")
    Path("/proc/self/clear_refs").write_text("5")
    before = _status_kb(status.read_text(), "VmRSS")
    for page in pages:
        render(page.source)
    print((_status_kb(status.read_text(), "VmHWM") - before) / 1024)


def _status_kb(status: str, key: str) -> int:
    found = re.search(rf"^{key}:\s+(\d+) kB", status, re.MULTILINE)
    return int(found.group(1)) if found else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=3, help="timed passes per renderer")
    parser.add_argument("--worst", type=int, default=8, help="list webreach's N worst pages")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-RSS children")
    parser.add_argument("--only", action="append", help="run only these renderers")
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}: nothing to measure, skipping")
        return 0
    if args.memory_child:
        _memory_child(args.memory_child)
        return 0

    pages = load_corpus()
    megabytes = sum(page.size for page in pages) / 1e6
    print(f"{len(pages)} pages, {megabytes:.1f} MB of source HTML, best of {args.repeat} passes\n")
    names = [n for n in RENDERERS if not args.only or n in args.only or n == BASELINE]
    results = measure({name: RENDERERS[name]() for name in names}, pages, args.repeat)
    if not args.no_memory:
        for result in results:
            result.peak_mb = peak_rss_mb(result.name)

    baseline = next(r for r in results if r.name == BASELINE)
    header = f"{'renderer':<37} {'F1 mean':>7} {'median':>7} {'min':>6} {'MB/s':>7} {'× mdfy':>7}"
    print(header + f" {'peak RSS':>9}")
    print("-" * (len(header) + 10))
    for result in results:
        f1 = list(result.f1.values())
        rate = megabytes / result.seconds
        memory = f"{result.peak_mb:7.1f}MB" if result.peak_mb is not None else "      n/a"
        print(
            f"{result.name:<37} {statistics.fmean(f1):7.3f} {statistics.median(f1):7.3f} "
            f"{min(f1):6.3f} {rate:7.1f} {baseline.seconds / result.seconds:7.1f} {memory:>9}"
        )
    ours = results[0]
    if args.worst and ours.name == "webreach":
        worst = sorted(ours.f1.items(), key=lambda item: item[1])[: args.worst]
        print("\nwebreach's lowest-F1 pages: " + ", ".join(f"{n} {s:.2f}" for n, s in worst))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
