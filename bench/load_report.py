"""How ``bench/load.py`` prints: percentiles, targets with PASS/FAIL, error summaries."""

from __future__ import annotations

from collections import Counter
from typing import Any

from load_client import Outcome
from load_rig import ProcSample

MAX_RATIO = 3.0
"""p50 under load, and the search after abandoned ones, at most this x one request alone."""
MAX_IDLE_CPU = 0.05
"""Not one of the issue's targets: an idle server should not burn CPU after the clients left."""


# --- reporting ----------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else float("nan")


def median(values: list[float]) -> float:
    return pct(values, 0.5)


def target(ok: bool, text: str, figure: str) -> None:
    print(f"  {'PASS' if ok else 'FAIL'}  {text:<56} {figure}")


def idle_cpu(start: ProcSample, end: ProcSample, seconds: float) -> None:
    share = (end.cpu_seconds - start.cpu_seconds) / seconds
    target(
        share <= MAX_IDLE_CPU,
        f"(extra) idle afterwards: CPU ≤ {MAX_IDLE_CPU:.0%} of one core",
        f"{share:.0%} over {seconds:g} s",
    )


def spread(label: str, values: list[float]) -> str:
    if not values:
        return f"  {label:<12} n/a"
    return f"  {label:<12} p50 {pct(values, 0.5):>8.0f} ms   p99 {pct(values, 0.99):>8.0f} ms"


def error_summary(outcomes: list[Outcome]) -> list[str]:
    kinds = Counter(o.kind for o in outcomes if o.kind)
    lines = [
        "  errors: "
        + str(sum(kinds.values()))
        + " ("
        + ", ".join(f"{k} {kinds.get(k, 0)}" for k in ("http", "connection", "in-stream"))
        + f", unfinished {kinds.get('unfinished', 0)})"
        + f"; searches that came back failed: {sum(o.search_failed for o in outcomes)}"
    ]
    samples = Counter(f"{o.protocol}: {o.kind}: {o.error}" for o in outcomes if o.kind)
    lines += [f"    {n}x {text}" for text, n in samples.most_common(5)]
    return lines


def fake_line(name: str, unit: str, before: dict[str, Any], after: dict[str, Any]) -> str:
    """What a fake served during the load, and how long it took inside (its own latency)."""
    served = [ms / 1000 for ms in after["served_ms"]]
    return (
        f"  {name}: {after['total'] - before['total']} {unit}, peak {after['peak']} in flight, "
        f"each served in p50 {pct(served, 0.5):.0f} ms, max {pct(served, 1.0):.0f} ms"
    )
