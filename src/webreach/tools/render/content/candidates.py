"""Readability's candidate scoring: each paragraph gives its score to its ancestors, and the
best-scoring ancestor, with the siblings that score near it, is the page's content.

The expensive walks (selector matching, text gathering) stay inside lexbor; Python only touches
the elements that carry a class/id or take part in scoring, which is what keeps this fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from selectolax.lexbor import LexborNode

from .. import patterns
from ..budget import check
from ..dom import ancestor_ids, class_weight, element_children, has_descendant, inner_text, tags
from .density import NestedDensities, link_density, text_length
from .reading import Reading, Widening

# A paragraph's score goes to five ancestors, divided by 1, 2, then 3 per level.
_DIVIDERS: Final = (1, 2, 6, 9, 12)
_ABOVE_BODY: Final = frozenset({"html", "-document"})
# Divs without block content: Readability turns them into paragraphs. lexbor's `:has` searches
# the subtree once per name in turn, so `div` comes first: a div around divs is answered by its
# first child, and only divs without a div inside (which do not nest) are searched through.
_LEAF_DIVS: Final = "div:not(:has(div,{}))".format(
    ",".join(name for name in patterns.BLOCK_INSIDE_DIV.split(",") if name != "div")
)
_ROOTS: Final = frozenset({"body", "html", "-document"})
# The declared main region replaces the choice inside it when it holds this many times its text.
_MAIN_MORE: Final = 1.5
_BLOCK_INSIDE_DIV: Final = tags(patterns.BLOCK_INSIDE_DIV)


@dataclass(frozen=True, slots=True)
class Choice:
    """The blocks chosen as the content, in document order, and the divs read as paragraphs
    (which the cleaning keeps)."""

    nodes: list[LexborNode]
    paragraph_divs: set[int]


def choose_content(body: LexborNode, weight_classes: bool, reading: Reading) -> Choice | None:
    """The content's blocks by ``reading``'s rules; None when no paragraph scored."""
    scoring = _Scoring(weight_classes)
    _score_paragraphs(body, scoring)
    if not scoring.candidates:
        return None
    top = _top_candidate(body, scoring, reading.widening)
    nodes = [body] if top is None else _with_siblings(top, scoring)
    if top is not None:
        nodes = _main_region(top, nodes, reading.main_link_density)
    return Choice(nodes, scoring.paragraph_divs)


@dataclass(slots=True)
class _Candidate:
    node: LexborNode
    score: float
    scaled: bool = False


@dataclass(slots=True)
class _Scoring:
    weight_classes: bool
    candidates: dict[int, _Candidate] = field(default_factory=dict)
    paragraph_divs: set[int] = field(default_factory=set)
    densities: NestedDensities = field(default_factory=NestedDensities)

    def candidate(self, node: LexborNode) -> _Candidate:
        key = node.mem_id
        found = self.candidates.get(key)
        if found is None:
            score = float(patterns.TAG_SCORE.get(node.tag or "", 0))
            if self.weight_classes:
                score += class_weight(node)
            found = self.candidates[key] = _Candidate(node, score)
        return found

    def final_score(self, candidate: _Candidate) -> float:
        """Scale by (1 - link density) lazily: most candidates never need it.

        Only called once the tree is final, as the densities are remembered.
        """
        if not candidate.scaled:
            candidate.score *= 1.0 - self.densities.link_density(candidate.node)
            candidate.scaled = True
        return candidate.score


def _score_paragraphs(body: LexborNode, scoring: _Scoring) -> None:
    """Give each paragraph's score to its ancestors, nearer ones getting more."""
    leaf_divs = {div.mem_id for div in body.css(_LEAF_DIVS)}
    br_parents = {br.parent.mem_id for br in body.css("br + br") if br.parent is not None}

    paragraphs: list[LexborNode] = []
    for div in body.css("div"):
        check()
        key = div.mem_id
        leaf = key in leaf_divs
        if key not in br_parents:
            if leaf:
                scoring.paragraph_divs.add(key)
                paragraphs.append(div)
                continue
            if _holds_only_blocks(div):
                continue
        shape = _normalise_div(div, not leaf)
        if shape is _Shape.PARAGRAPH:
            scoring.paragraph_divs.add(key)
            paragraphs.append(div)
    paragraphs.extend(body.css(patterns.TAGS_TO_SCORE))

    candidates = scoring.candidates
    for paragraph in paragraphs:
        check()
        raw = paragraph.text()
        if len(raw) < 25:
            continue
        if len(raw) >= 300 and len(raw) - raw.count(" ") - raw.count("\n") >= 300:
            length = 300
        else:
            length = len(" ".join(raw.split()))
            if length < 25:
                continue
        commas = raw.count(",") if raw.isascii() else sum(map(raw.count, patterns.COMMAS))
        score = 2 + commas + min(length // 100, 3)
        ancestor = paragraph.parent
        for divider in _DIVIDERS:
            if ancestor is None or ancestor.tag in _ABOVE_BODY:
                break
            known = candidates.get(ancestor.mem_id)
            if known is None:
                known = scoring.candidate(ancestor)
            known.score += score / divider
            ancestor = ancestor.parent


class _Shape(Enum):
    PARAGRAPH = "paragraph"
    CONTAINER = "container"
    UNWRAPPED = "unwrapped"


def _holds_only_blocks(div: LexborNode) -> bool:
    """Tell whether a div holds just blocks, besides whitespace, comments and lone `<br>`s.

    Such a div is no paragraph and has nothing for `_normalise_div` to wrap; telling so skips
    the whitespace between its blocks without turning each into a Python string. A lone `<p>`
    does not count, as that div gives way to it.
    """
    text = div.text(deep=False, skip_empty=True)
    if text and not text.isspace():
        return False
    tags: list[str | None] = []
    for child in div.iter():
        tag = child.tag
        if tag == "-comment":
            continue
        if tag in patterns.PHRASING_TAGS and tag != "br":
            return False
        tags.append(tag)
    return tags != ["p"]


def _normalise_div(div: LexborNode, has_block: bool) -> _Shape:
    """Reshape a div the way Readability does before scoring, in one pass over its children.

    A div holding only one `<p>` gives way to it; loose inline content next to blocks is wrapped
    in `<p>` (split at `<br><br>`) so that text written straight into a layout div gets scored;
    a div that is really one paragraph is left alone and scored as one.
    """
    runs, breaks, elements, only_p = _inline_runs(div)
    if only_p and elements == 1 and not runs and link_density(div) < 0.25:
        div.unwrap()
        return _Shape.UNWRAPPED
    if not has_block and not breaks:
        return _Shape.PARAGRAPH
    for br in breaks:
        br.decompose(recursive=False)
    for members in runs:
        wrapper = div.parser.create_node("p")
        members[0].insert_before(wrapper, move=True)
        for member in members:
            wrapper.insert_child(member, move=True)
    return _Shape.CONTAINER


def _inline_runs(
    div: LexborNode,
) -> tuple[list[list[LexborNode]], list[LexborNode], int, bool]:
    """The div's runs of loose inline content (each to become a paragraph), the `<br><br>`
    pairs that separate them, its number of child elements, and whether the only one is `<p>`."""
    runs: list[list[LexborNode]] = []
    breaks: list[LexborNode] = []
    run: list[LexborNode] = []
    has_text = False
    elements = 0
    only_p = False
    pending_br: int | None = None
    for child in div.iter(include_text=True):
        tag = child.tag
        if tag == "-text":
            if (child.text_content or "").isspace():
                if run:
                    run.append(child)
                continue
            has_text = True
            pending_br = None
            run.append(child)
            continue
        if tag == "-comment":
            continue
        elements += 1
        only_p = elements == 1 and tag == "p"
        if tag == "br":
            if pending_br is not None:
                breaks.extend((run.pop(pending_br), child))
                pending_br = None
                if has_text:
                    runs.append(run)
                run, has_text = [], False
                continue
            pending_br = len(run)
        elif tag in patterns.PHRASING_TAGS and not (
            tag in ("a", "del", "ins") and has_descendant(child, _BLOCK_INSIDE_DIV)
        ):
            has_text = has_text or bool(child.text(strip=True))
            pending_br = None
        else:
            pending_br = None
            if has_text:
                runs.append(run)
            run, has_text = [], False
            continue
        run.append(child)
    if has_text:
        runs.append(run)
    return runs, breaks, elements, only_p


def _top_candidate(body: LexborNode, scoring: _Scoring, widening: Widening) -> LexborNode | None:
    """Pick the best candidate, then widen it the way Readability does; None means "whole body"."""
    ranked = sorted(scoring.candidates.values(), key=lambda c: c.score, reverse=True)
    top: list[_Candidate] = []
    for candidate in ranked:
        if len(top) == widening.ranked and candidate.score <= top[-1].score:
            break
        if top and _out_of_reach(candidate.score, top[0].score, widening.share):
            # Scaling only lowers a positive score: neither this candidate nor any after it can
            # be the best or an alternative to it, so their link densities are not needed.
            break
        scoring.final_score(candidate)
        top.append(candidate)
        top.sort(key=lambda c: c.score, reverse=True)
        del top[widening.ranked :]
    if not top or top[0].node.tag in _ROOTS:
        return None
    best = top[0]
    node = best.node
    best_score = best.score

    similar = [c for c in top[1:] if best_score and c.score / best_score >= widening.share]
    alternatives = [ancestor_ids(c.node) for c in similar]
    if widening.disjoint:
        # Other blocks, not the best one's own wrappers or parts: those are the same block.
        around = ancestor_ids(node)
        alternatives = [
            ids
            for c, ids in zip(similar, alternatives, strict=True)
            if node.mem_id not in ids and c.node.mem_id not in around
        ]
    if len(alternatives) >= widening.needed:
        parent = node.parent
        while parent is not None and parent.tag not in _ROOTS:
            key = parent.mem_id
            if sum(key in ids for ids in alternatives) >= widening.needed:
                node = parent
                break
            parent = parent.parent

    last_score = scoring.final_score(scoring.candidate(node))
    threshold = last_score / 3
    parent = node.parent
    while parent is not None and parent.tag not in _ROOTS:
        known = scoring.candidates.get(parent.mem_id)
        if known is not None:
            parent_score = scoring.final_score(known)
            if parent_score < threshold:
                break
            if parent_score > last_score:
                node = parent
                break
            last_score = parent_score
        parent = parent.parent

    parent = node.parent
    while parent is not None and parent.tag not in _ROOTS and len(element_children(parent)) == 1:
        node = parent
        parent = node.parent
    return node


def _main_region(top: LexborNode, nodes: list[LexborNode], most_links: float) -> list[LexborNode]:
    """The page's declared main region, when the chosen block is one part of it.

    An intro paragraph outscores the short items of a listing, one section of a landing page
    the others: a `<main>` (or `role="main"`) around the choice that holds much more text,
    mostly not links, is the content the page itself names.
    """
    parent = top.parent
    while parent is not None and parent.tag not in _ROOTS:
        if parent.tag == "main" or parent.attrs.sget("role") == "main":
            chosen = sum(map(text_length, nodes))
            if text_length(parent) >= _MAIN_MORE * chosen and (
                most_links >= 1 or link_density(parent) < most_links
            ):
                return [parent]
            return nodes
        parent = parent.parent
    return nodes


def _out_of_reach(score: float, best: float, share: float) -> bool:
    """Tell whether a score, once scaled, stays below an alternative's share of a positive best.

    The margin keeps float rounding from ever deciding it.
    """
    return best > 0 and max(score, 0.0) < share * best * (1 - 1e-9)


def _with_siblings(top: LexborNode, scoring: _Scoring) -> list[LexborNode]:
    """Add the top candidate's siblings that look like part of the same content."""
    parent = top.parent
    if parent is None:
        return [top]
    top_score = scoring.final_score(scoring.candidate(top))
    threshold = max(10.0, top_score * 0.2)
    top_class = top.attrs.sget("class")
    top_id = top.mem_id
    nodes: list[LexborNode] = []
    for sibling in element_children(parent):
        if sibling.mem_id == top_id:
            nodes.append(sibling)
            continue
        bonus = top_score * 0.2 if top_class and sibling.attrs.sget("class") == top_class else 0.0
        known = scoring.candidates.get(sibling.mem_id)
        if known is not None and scoring.final_score(known) + bonus >= threshold:
            nodes.append(sibling)
        elif sibling.tag == "p" or sibling.mem_id in scoring.paragraph_divs:
            text = inner_text(sibling)
            if len(text) > 80:
                if link_density(sibling) < 0.25:
                    nodes.append(sibling)
            elif text and patterns.SENTENCE_END.search(text) and link_density(sibling) == 0:
                nodes.append(sibling)
    return nodes
