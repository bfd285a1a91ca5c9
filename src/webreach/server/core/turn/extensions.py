"""DeepSeek's top-level extension fields, read the same way in every protocol:
``title`` (a conversation title) and ``safety_check`` (model content safety)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .errors import RequestError

__all__ = ["BAD_SAFETY_LEVEL", "Extensions", "SafetyLevel", "parse_extensions"]

SafetyLevel = Literal["low", "high"]

BAD_SAFETY_LEVEL = "safety_check: `level` must be `low` or `high`"
_LEVELS: dict[object, SafetyLevel] = {"low": "low", "high": "high"}
_BAD_TITLE = 'title: must be a boolean or an object {"enabled": boolean}'


@dataclass(frozen=True, slots=True)
class Extensions:
    title: bool = False
    """The client asked for a conversation title."""
    safety: SafetyLevel | None = None
    """The review level of model content safety; None when it is off."""


def parse_extensions(body: dict[str, object]) -> Extensions:
    """``title: true`` or ``{"enabled": true}``; ``safety_check: {"level": "low" | "high"}``.
    A null field is off; anything else that is not one of these is DeepSeek's 400."""
    return Extensions(title=_title(body.get("title")), safety=_safety(body.get("safety_check")))


def _title(value: object) -> bool:
    if value is None or isinstance(value, bool):
        return value is True
    if isinstance(value, dict) and set(value) <= {"enabled"}:
        enabled = value.get("enabled", True)
        if isinstance(enabled, bool):
            return enabled
    raise RequestError(_BAD_TITLE, param="title")


def _safety(value: object) -> SafetyLevel | None:
    if value is None:
        return None
    level = _LEVELS.get(value.get("level")) if isinstance(value, dict) else None
    if level is not None:
        return level
    raise RequestError(BAD_SAFETY_LEVEL, param="safety_check")
