"""The one rule that chooses a call's providers: what the runtime runs and ``webreach config``
shows are both this function's answer."""

from __future__ import annotations

import pytest

from webreach.seam.selection import AUTO, OTHERS, Candidate, Refusal, Selection, select

READY = [Candidate("b", True), Candidate("a", True), Candidate("s", True, shared=True)]
IDLE = [Candidate("a", False), Candidate("b", True)]
ORDER = ("b", OTHERS, "a")


@pytest.mark.parametrize(
    ("configured", "exclude", "candidates", "expected"),
    [
        ((), (), [Candidate("a", True)], Selection(("a",))),
        ((), (), READY, Selection((), Refusal.AMBIGUOUS, ("a", "b"))),
        ((), ("a",), READY, Selection(("b",))),
        ((), (), [Candidate("s", True, shared=True)], Selection((), Refusal.NONE_AVAILABLE)),
        (("s",), (), READY, Selection(("s",))),
        (("a", "b"), (), IDLE, Selection((), Refusal.UNAVAILABLE, ("a",))),
        (("b", "a"), ("a",), IDLE, Selection(("b",))),
        (("x",), (), READY, Selection((), Refusal.UNKNOWN, ("x",))),
        (("a",), ("a",), READY, Selection((), Refusal.ALL_EXCLUDED)),
        ((), ("x",), READY, Selection((), Refusal.UNKNOWN_EXCLUDED, ("x",))),
        ((AUTO,), (), READY, Selection(("b", "s", "a"))),
        ((AUTO,), (), IDLE, Selection(("b",))),
        ((AUTO,), ("b",), IDLE, Selection((), Refusal.NONE_AVAILABLE)),
        ((AUTO, "a"), (), READY, Selection((), Refusal.AUTO_NOT_ALONE)),
    ],
)
def test_the_choice(
    configured: tuple[str, ...],
    exclude: tuple[str, ...],
    candidates: list[Candidate],
    expected: Selection,
) -> None:
    assert select(configured, exclude, ORDER, candidates) == expected


def test_without_an_order_auto_is_an_id_like_any_other() -> None:
    chosen = select((AUTO,), (), None, READY)
    assert chosen == Selection((), Refusal.UNKNOWN, (AUTO,))


def test_only_the_settings_own_refusals_are_of_the_settings() -> None:
    assert {r for r in Refusal if not r.of_settings} == {Refusal.NONE_AVAILABLE, Refusal.AMBIGUOUS}
