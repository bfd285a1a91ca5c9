"""Where a wave's turns spend their time, from the server's debug log: for each phase, when the
turns reached it, in seconds after the wave's first model step.

A turn's lines carry its request id; a search that reads pages logs how long the reads took and
then the ranking, so the reads' start and end follow from that line's time. Under a wave that
saturates the server these say which phase the p50 is lost in: the turns' first steps, the page
reads waiting out their deadline, or the answer after it.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

__all__ = ["timeline_lines"]

_LINE = re.compile(r"^(\S+)Z DEBUG (.*)\[(?:.* )?id=(\w+)\]\s*$")
_PHASES = {
    "step 1 to the upstream": "first model step sent",
    "step 2 to the upstream": "second model step sent",
    "turn stopped": "turn ended",
}
_READS = re.compile(r"seconds=([\d.]+) .*ranking_s=([\d.]+)")
_ORDER = (
    "first model step sent",
    "page reads started",
    "page reads ended",
    "second model step sent",
    "turn ended",
)


def _times(log: Path, skip: int) -> dict[str, dict[str, float]]:
    """Per request id, the time each phase was first logged."""
    with log.open("rb") as file:
        file.seek(skip)
        text = file.read().decode(errors="replace")
    turns: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        found = _LINE.match(line)
        if not found:
            continue
        at = datetime.fromisoformat(found[1]).timestamp()
        message, turn = found[2], turns.setdefault(found[3], {})
        for start, phase in _PHASES.items():
            if message.startswith(start):
                turn.setdefault(phase, at)
        reads = _READS.search(line) if message.startswith("passages:") else None
        if reads and "page reads ended" not in turn:
            ended = at - float(reads[2])
            turn["page reads ended"] = ended
            turn["page reads started"] = ended - float(reads[1])
    return turns


def timeline_lines(log: Path, skip: int = 0) -> list[str]:
    """The phases' p10 / p50 / max over the wave's turns; no lines without debug lines."""
    turns = [t for t in _times(log, skip).values() if "first model step sent" in t]
    if not turns:
        return []
    began = min(t["first model step sent"] for t in turns)
    lines = [f"  where the turns were, s after the wave's first model step ({len(turns)} turns):"]
    for phase in _ORDER:
        seen = sorted(t[phase] - began for t in turns if phase in t)
        if seen:
            p10, p50 = seen[len(seen) // 10], seen[len(seen) // 2]
            lines.append(
                f"    {phase:<24} p10 {p10:6.2f}   p50 {p50:6.2f}   max {seen[-1]:6.2f}"
                f"   ({len(seen)} turns)"
            )
    return lines
