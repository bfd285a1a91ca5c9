"""How good and how fast is webreach's HTML→Markdown renderer next to the usual choices?

Four sets of real pages, every renderer in one process, side by side:

* ``readability``: the 130 pages of Mozilla Readability's test suite (``../shared/corpus/pages/``),
  scored against the visible text of each ``expected.html``;
* ``cleaneval``, ``cleanportaleval``, ``l3s-gn1``: the human-labelled sets of the web content
  extraction benchmark (``../shared/corpus/extraction/``, see its README), scored against
  each page's labelled plain text;
* ``wcxb-dev``: WCXB's development split, 1,497 pages of seven types, scored with that
  benchmark's own word F1 (``benchmark_words``), per page type and on both halves of a fixed
  hash split (``held_out``), with the number of pages each renderer left empty. No ROUGE.

Quality, per page and averaged per set: precision, recall and F1 of ROUGE-LSum (the extraction
benchmark's metric: whitespace tokens, punkt sentences; ``rouge_lsum``) and of words
(``word_scores``), both on the output's plain text (``markdown_text``), plus the cheap 4-gram
shingle F1 the tests use (``shingle_f1``). Speed: MB of source HTML per second (best of
``--repeat`` interleaved passes) and the ratios to markdownify and trafilatura. Memory: extra
peak RSS while rendering every selected page, each renderer in a fresh child process.

    python bench/fetch_render.py [--sets cleaneval,wcxb-dev] [--limit 100] [--repeat 2]
                                 [--only webreach] [--no-rouge] [--no-memory] [--worst 8]

Renderers: webreach, trafilatura (Markdown with links, no comments), readability-lxml with
html-to-markdown, and markdownify on the whole page; html2text runs when named with ``--only``.
The measures and the page sets are defined once, in ``fetch_render_metrics.py``; the
bench-only libraries are imported inside their runners.
"""

from __future__ import annotations

import argparse
import gc
import logging
import re
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from math import nan
from pathlib import Path

from fetch_render_metrics import (
    CORPUS,
    LABELLED_SETS,
    SETS,
    WCXB,
    WCXB_KINDS,
    Page,
    Scores,
    available_sets,
    benchmark_words,
    held_out,
    load_set,
    markdown_text,
    rouge_lsum,
    shingle_f1,
    word_scores,
    words,
)

BASE_URL = "http://fakehost/test/page.html"

Renderer = Callable[[str], str]

# ---------------------------------------------------------------------------------------------
# The renderers.


def webreach_renderer() -> Renderer:
    from webreach.tools.render import render_html

    return lambda html: render_html(html, base_url=BASE_URL)


def markdownify_renderer() -> Renderer:
    from markdownify import markdownify

    warnings.filterwarnings("ignore", module="bs4")  # "looks like XML" on a few pages

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

    logging.getLogger("readability").setLevel(logging.CRITICAL)  # it logs each page it fails

    def render(html: str) -> str:
        summary = Document(html, url=BASE_URL).summary(html_partial=True)
        return str(html_to_markdown.convert(summary).content or "")

    return render


def trafilatura_renderer() -> Renderer:
    import trafilatura

    def render(html: str) -> str:
        found = trafilatura.extract(
            html, url=BASE_URL, output_format="markdown", include_links=True,
            include_comments=False,
        )  # fmt: skip
        return found or ""

    return render


RENDERERS: dict[str, Callable[[], Renderer]] = {
    "webreach": webreach_renderer,
    "trafilatura": trafilatura_renderer,
    "readability-lxml + html-to-markdown": readability_renderer,
    "markdownify (whole page)": markdownify_renderer,
    "html2text (whole page)": html2text_renderer,
}
DEFAULT = tuple(name for name in RENDERERS if not name.startswith("html2text"))
BASELINE, TRAFILATURA = "markdownify (whole page)", "trafilatura"


# ---------------------------------------------------------------------------------------------
# Measuring.


@dataclass(slots=True)
class Run:
    """One renderer on one set: its outputs, scores, and best pass time."""

    outputs: list[str]
    seconds: float
    failures: int = 0
    rouge: list[Scores] = field(default_factory=list)
    words: list[Scores] = field(default_factory=list)
    shingles: list[float] = field(default_factory=list)


def render_all(
    renderers: dict[str, Renderer], sets: dict[str, list[Page]], repeat: int
) -> dict[tuple[str, str], Run]:
    """Render every set with every renderer; keep the first pass's outputs and the best time.

    Rounds interleave the renderers, so that a change in machine load during the run does not
    favour whichever renderer ran at a quiet moment.
    """
    runs: dict[tuple[str, str], Run] = {}
    for round_ in range(max(repeat, 1)):
        for name, render in renderers.items():
            for set_name, pages in sets.items():
                gc.collect()
                start = time.perf_counter()
                outputs = [_render_or_fail(render, page.source) for page in pages]
                seconds = time.perf_counter() - start
                if round_ == 0:
                    failed = sum(output is None for output in outputs)
                    runs[name, set_name] = Run([o or "" for o in outputs], seconds, failed)
                else:
                    runs[name, set_name].seconds = min(runs[name, set_name].seconds, seconds)
    return runs


def _render_or_fail(render: Renderer, html: str) -> str | None:
    """A renderer that raises on a page has produced nothing for it."""
    try:
        return render(html)
    except Exception:
        return None


def _rouge_job(pair: tuple[str, str]) -> Scores:
    return rouge_lsum(*pair)


def score(runs: dict[tuple[str, str], Run], sets: dict[str, list[Page]], jobs: int) -> None:
    """Score every output; ROUGE (the slow part) in `jobs` processes, unless `jobs` is 0."""
    texts = {key: [markdown_text(output) for output in run.outputs] for key, run in runs.items()}
    for (name, set_name), run in runs.items():
        pages = sets[set_name]
        got = texts[name, set_name]
        count = benchmark_words if set_name == WCXB else words
        run.words = [word_scores(count(t), p.expected) for t, p in zip(got, pages, strict=True)]
        run.shingles = [shingle_f1(t, p.expected_text) for t, p in zip(got, pages, strict=True)]
    if not jobs:
        return
    rouged = [key for key in texts if key[1] != WCXB]
    pairs = [
        (page.expected_text, text)
        for key in rouged
        for page, text in zip(sets[key[1]], texts[key], strict=True)
    ]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        results = iter(pool.map(_rouge_job, pairs, chunksize=8))
        for key in rouged:
            runs[key].rouge = [next(results) for _ in runs[key].outputs]


def peak_rss_mb(name: str, argv: Sequence[str]) -> float | None:
    """Extra peak RSS of rendering the selected pages once, in a fresh process (Linux only)."""
    command = [sys.executable, __file__, *argv, "--memory-child", name]
    done = subprocess.run(command, capture_output=True, text=True)
    try:
        return float(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def _memory_child(name: str, pages: list[Page]) -> None:
    render = RENDERERS[name]()
    _render_or_fail(render, pages[0].source)
    gc.collect()
    status = Path("/proc/self/status")
    Path("/proc/self/clear_refs").write_text("5")
    before = _status_kb(status.read_text(), "VmRSS")
    for page in pages:
        _render_or_fail(render, page.source)
    print((_status_kb(status.read_text(), "VmHWM") - before) / 1024)


def _status_kb(status: str, key: str) -> int:
    found = re.search(rf"^{key}:\s+(\d+) kB", status, re.MULTILINE)
    return int(found.group(1)) if found else 0


# ---------------------------------------------------------------------------------------------
# Reporting.


def _mean(values: Iterable[float]) -> float:
    found = list(values)
    return statistics.fmean(found) if found else float("nan")


def _ratio(runs: dict[tuple[str, str], Run], name: str, other: str, sets: Iterable[str]) -> str:
    chosen = list(sets)
    if not all((other, s) in runs for s in chosen):
        return "    -"
    ours = sum(runs[name, s].seconds for s in chosen)
    return f"{sum(runs[other, s].seconds for s in chosen) / ours:5.1f}"


def report_set(runs: dict[tuple[str, str], Run], set_name: str, pages: list[Page]) -> None:
    megabytes = sum(page.size for page in pages) / 1e6
    print(f"\n{set_name}: {len(pages)} pages, {megabytes:.1f} MB")
    print(
        f"{'renderer':<36} {'ROUGE-LSum P/R/F1':>19} {'words P/R/F1':>19} {'sh.F1':>6}"
        f" {'MB/s':>6} {'×mdfy':>5} {'×traf':>5}"
    )
    failures: list[str] = []
    for (name, found_set), run in runs.items():
        if found_set != set_name:
            continue
        if run.failures:
            failures.append(f"{name} raised on {run.failures} pages (scored as empty)")
        rouge = "  ".join(f"{_mean(s[k] for s in run.rouge):.3f}" for k in range(3))
        word = "  ".join(f"{_mean(s[k] for s in run.words):.3f}" for k in range(3))
        print(
            f"{name:<36} {rouge if run.rouge else '-':>19} {word:>19} {_mean(run.shingles):6.3f}"
            f" {megabytes / run.seconds:6.1f} {_ratio(runs, name, BASELINE, [set_name])}"
            f" {_ratio(runs, name, TRAFILATURA, [set_name])}"
        )
    for failure in failures:
        print(failure)


def report_kinds(runs: dict[tuple[str, str], Run], pages: list[Page]) -> None:
    """WCXB per page type: each renderer's word F1 on both halves, and its empty outputs."""
    names = [name for name, set_name in runs if set_name == WCXB]
    print(f"\n{WCXB} by page type (word F1 as evaluate.py; A: tuned on, B: held out)")
    print(f"{'type':<14} {'pages':>5} " + " ".join(f"{name[:21]:>21}" for name in names))
    print(f"{'':<14} {'':>5} " + " ".join(f"{'all     A     B':>21}" for _ in names))
    for kind in (*WCXB_KINDS, "all"):
        chosen = [i for i, page in enumerate(pages) if kind in ("all", page.kind)]
        cells = []
        for name in names:
            f1 = [runs[name, WCXB].words[i].f1 for i in chosen]
            halves = [
                _mean(f for f, i in zip(f1, chosen, strict=True) if held_out(pages[i]) is side)
                for side in (False, True)
            ]
            cells.append(f"{_mean(f1):.3f} {halves[0]:.3f} {halves[1]:.3f}")
        print(f"{kind:<14} {len(chosen):>5} " + " ".join(f"{cell:>21}" for cell in cells))
    for name in names:
        empty = [
            page.name
            for page, output in zip(pages, runs[name, WCXB].outputs, strict=True)
            if not benchmark_words(markdown_text(output))
        ]
        shown = ", ".join(empty[:12]) + (", …" if len(empty) > 12 else "")
        print(f"{name}: {len(empty)} empty outputs{': ' + shown if empty else ''}")


def report_overall(
    runs: dict[tuple[str, str], Run], sets: dict[str, list[Page]], memory: dict[str, float | None]
) -> None:
    labelled = [name for name in sets if name in LABELLED_SETS]
    megabytes = sum(page.size for pages in sets.values() for page in pages) / 1e6
    print(f"\nall sets: {sum(map(len, sets.values()))} pages, {megabytes:.1f} MB")
    print(
        f"{'renderer':<36} {'ROUGE F1':>8} {'words F1':>8} {'readab.':>7} {'MB/s':>6}"
        f" {'×mdfy':>5} {'×traf':>5} {'peak RSS':>9}"
    )
    for name in dict.fromkeys(name for name, _ in runs):
        mine = {s: runs[name, s] for s in sets}
        rouge = _mean(_mean(s.f1 for s in mine[s].rouge) for s in labelled if mine[s].rouge)
        word = _mean(_mean(s.f1 for s in mine[s].words) for s in labelled)
        readability = (
            _mean(s.f1 for s in mine["readability"].words) if "readability" in mine else nan
        )
        seconds = sum(run.seconds for run in mine.values())
        peak = memory.get(name)
        print(
            f"{name:<36} {rouge:8.3f} {word:8.3f} {readability:7.3f} {megabytes / seconds:6.1f}"
            f" {_ratio(runs, name, BASELINE, sets)} {_ratio(runs, name, TRAFILATURA, sets)}"
            f" {f'{peak:7.1f}MB' if peak is not None else 'n/a':>9}"
        )
    print(
        "\nROUGE F1 and words F1: mean of the labelled sets' means; readab.: words F1 on the"
        " Readability pages"
    )


def report_text_path(runs: dict[tuple[str, str], Run], sets: dict[str, list[Page]]) -> None:
    """webreach's own plain text of each rendering (``markdown_to_text``, what its text format
    and a search's passages show) scored as its Markdown stripped is: the Markdown path must
    lose nothing the text path keeps."""
    from webreach.tools.render.markdown.plain import markdown_to_text

    print("\nwebreach's text path against its Markdown stripped (word F1, same renderings)")
    for set_name, pages in sets.items():
        run = runs.get(("webreach", set_name))
        if run is None:
            continue
        count = benchmark_words if set_name == WCXB else words
        text = [
            word_scores(count(markdown_to_text(output)), page.expected).f1
            for output, page in zip(run.outputs, pages, strict=True)
        ]
        stripped = _mean(s.f1 for s in run.words)
        print(f"  {set_name:<16} text {_mean(text):.4f}   Markdown stripped {stripped:.4f}")


def report_worst(runs: dict[tuple[str, str], Run], sets: dict[str, list[Page]], count: int) -> None:
    for set_name, pages in sets.items():
        run = runs.get(("webreach", set_name))
        if run is None:
            continue
        f1 = [s.f1 for s in run.rouge] if run.rouge else [s.f1 for s in run.words]
        worst = sorted(zip(f1, (page.name for page in pages), strict=True))[:count]
        print(f"webreach's lowest on {set_name}: " + ", ".join(f"{n} {s:.2f}" for s, n in worst))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--sets", help=f"comma-separated, of {', '.join((*SETS, WCXB))} (default all)"
    )
    parser.add_argument("--limit", type=int, help="first N pages of each set")
    parser.add_argument("--repeat", type=int, default=2, help="timed passes per renderer")
    parser.add_argument(
        "--only", action="append", help="run only these renderers (repeatable; ratios need theirs)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="processes scoring ROUGE")
    parser.add_argument("--no-rouge", action="store_true", help="skip ROUGE (the slow metric)")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-RSS children")
    parser.add_argument("--worst", type=int, default=0, help="list webreach's N worst pages")
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    wanted = args.sets.split(",") if args.sets else [*SETS, WCXB]
    unknown = set(wanted) - {*SETS, WCXB}
    if unknown:
        parser.error(f"unknown sets: {', '.join(sorted(unknown))}")
    chosen = [name for name in wanted if name in available_sets()]
    if not chosen:
        print(f"no corpus found under {CORPUS.parent}: nothing to measure, skipping")
        return 0
    sets = {name: load_set(name, args.limit) for name in chosen}
    if args.memory_child:
        _memory_child(args.memory_child, [page for pages in sets.values() for page in pages])
        return 0

    names = [n for n in RENDERERS if n in (args.only or DEFAULT)]
    print(f"sets: {', '.join(chosen)}; best of {args.repeat} passes; renderers: {len(names)}")
    runs = render_all({name: RENDERERS[name]() for name in names}, sets, args.repeat)
    score(runs, sets, 0 if args.no_rouge else args.jobs)
    memory: dict[str, float | None] = {}
    if not args.no_memory:
        argv = [f"--sets={','.join(chosen)}"] + ([f"--limit={args.limit}"] if args.limit else [])
        memory = {name: peak_rss_mb(name, argv) for name in names}
    for set_name, pages in sets.items():
        report_set(runs, set_name, pages)
        if set_name == WCXB:
            report_kinds(runs, pages)
    report_overall(runs, sets, memory)
    report_text_path(runs, sets)
    if args.worst:
        print()
        report_worst(runs, sets, args.worst)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
