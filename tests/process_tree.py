"""The live process tree from /proc, for tests that check no process outlives what started it."""

from __future__ import annotations

import os
from pathlib import Path


def parents() -> dict[int, int]:
    """Every live process's parent (zombies, which have exited, left out)."""
    found: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z":
            found[int(entry.name)] = int(fields[1])
    return found


def descendants(pid: int | None = None) -> set[int]:
    """Every live process below ``pid`` (this one by default): a fork server's workers too."""
    tree = parents()
    found: set[int] = set()
    frontier = {os.getpid() if pid is None else pid}
    while frontier:
        frontier = {child for child, parent in tree.items() if parent in frontier} - found
        found |= frontier
    return found


def ancestors(pid: int) -> set[int]:
    """Every process above ``pid``, up to init."""
    tree = parents()
    found: set[int] = set()
    while (pid := tree.get(pid, 0)) > 1:
        found.add(pid)
    return found


def command_line(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


def name(pid: int) -> str:
    """The process's command name (``chromium``, ``node``), or "" once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat[stat.index("(") + 1 : stat.rindex(")")]
