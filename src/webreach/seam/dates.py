"""Reading a source's date as providers send it, once, for every face.

Providers send ISO 8601 (``2024-10-07T00:00:00``), RFC 2822 (``Tue, 14 Oct 2025 08:00:00 GMT``),
ages (``6 days ago``, ``3 hrs ago``, ``yesterday``, ``3天前``), English dates (``December 21,
2015``, ``21 Dec 2015``) and CJK dates (``2025年3月28日``, ``2025년 3월 28일``). Month names are
matched here rather than with ``strptime``, whose ``%B`` follows the process's locale. A string
none of these reads, or a date that does not exist, is no date: the source stays undated.
Dates without a zone are UTC; an age counts a month as 30 days and a year as 365.
"""

from __future__ import annotations

import email.utils
import re
from datetime import UTC, datetime, timedelta

__all__ = ["parse_date"]

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<month>[a-z]{3,9})\.?"
_WEEKDAY = r"(?:(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)[a-z]*\.?,?\s+)?"
_TIME = (
    r"(?:,?\s+(?:at\s+)?(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::\d{2})?\s*(?P<half>[ap]\.?m\.?)?)?"
)
_ENGLISH = (
    re.compile(
        rf"{_WEEKDAY}{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<year>\d{{4}}){_TIME}"
    ),
    re.compile(
        rf"{_WEEKDAY}(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+(?P<year>\d{{4}}){_TIME}"
    ),
    re.compile(rf"{_MONTH},?\s+(?P<year>\d{{4}})"),
)
_CJK = re.compile(
    r"(?P<year>\d{4})\s*[年년]\s*(?P<month>\d{1,2})\s*[月월]\s*(?:(?P<day>\d{1,2})\s*[日일号])?"
    r"(?:\s*(?P<hour>\d{1,2})[:時时시]\s*(?P<minute>\d{1,2})?)?"
)
_NUMERIC = (
    re.compile(r"(?P<year>\d{4})[/.](?P<month>\d{1,2})[/.](?P<day>\d{1,2})"),
    re.compile(r"(?P<day>\d{1,2})\.(?P<month>\d{1,2})\.(?P<year>\d{4})"),
)
"""Only the unambiguous numeric layouts: ``2015/12/21`` and ``21.12.2015`` (``12/05/2024`` is
May or December depending on the reader, so it stays undated)."""
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

_UNITS = {
    "second": 1,
    "minute": 60,
    "hour": 3600,
    "day": 86400,
    "week": 7 * 86400,
    "month": 30 * 86400,
    "year": 365 * 86400,
}
_UNIT_SPELLINGS = {
    "second": ("seconds", "second", "secs", "sec", "s"),
    "minute": ("minutes", "minute", "mins", "min", "m"),
    "hour": ("hours", "hour", "hrs", "hr", "h"),
    "day": ("days", "day", "d"),
    "week": ("weeks", "week", "wks", "wk", "w"),
    "month": ("months", "month", "mos", "mo"),
    "year": ("years", "year", "yrs", "yr", "y"),
}
_UNIT_OF = {spelling: unit for unit, spellings in _UNIT_SPELLINGS.items() for spelling in spellings}
_AGO = re.compile(
    r"(?:about\s+|over\s+|almost\s+)?(?P<count>\d+|an?|one)\s*(?P<unit>[a-z]+)\.?\s+ago"
)
_CJK_UNITS = {
    "秒": "second",
    "초": "second",
    "分钟": "minute",
    "分鐘": "minute",
    "分": "minute",
    "분": "minute",
    "小时": "hour",
    "小時": "hour",
    "時間": "hour",
    "시간": "hour",
    "天": "day",
    "日": "day",
    "일": "day",
    "周": "week",
    "週間": "week",
    "週": "week",
    "주": "week",
    "个月": "month",
    "個月": "month",
    "ヶ月": "month",
    "か月": "month",
    "カ月": "month",
    "개월": "month",
    "年": "year",
    "년": "year",
}
_CJK_AGO = re.compile(
    r"(?P<count>\d+)\s*(?P<unit>"
    + "|".join(sorted(_CJK_UNITS, key=len, reverse=True))
    + r")\s*(?:前|전)"
)
_DAYS_BACK = {
    "now": 0,
    "just now": 0,
    "today": 0,
    "yesterday": 1,
    "今天": 0,
    "今日": 0,
    "오늘": 0,
    "昨天": 1,
    "昨日": 1,
    "어제": 1,
}


def parse_date(value: str | None, now: datetime | None = None) -> datetime | None:
    """``value`` as an aware datetime, or None when it is not a date this reads.

    ``now`` (aware) is what an age counts back from; by default the current time.
    """
    text = " ".join((value or "").split())
    if not text or len(text) > 200:
        return None
    lower = text.lower()
    try:
        moment = (
            _iso(text) or _written(lower) or _mail(text) or _age(lower, now or datetime.now(UTC))
        )
    except OverflowError:  # an age of a million years
        return None
    if moment is None:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _iso(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        pass
    if match := _ISO_DATE.match(text):
        try:
            return datetime.fromisoformat(match.group())
        except ValueError:
            return None
    return None


def _mail(text: str) -> datetime | None:
    try:
        return email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _written(text: str) -> datetime | None:
    for layout in _ENGLISH:
        if (match := layout.fullmatch(text)) and match.group("month") in _MONTHS:
            parts = match.groupdict()
            return _made(
                parts["year"],
                _MONTHS[parts["month"]],
                parts.get("day") or 1,
                parts.get("hour"),
                parts.get("minute"),
                parts.get("half"),
            )
    if match := _CJK.fullmatch(text):
        return _made(
            match["year"], match["month"], match["day"] or 1, match["hour"], match["minute"]
        )
    for layout in _NUMERIC:
        if match := layout.fullmatch(text):
            return _made(match["year"], match["month"], match["day"])
    return None


def _made(
    year: str | int,
    month: str | int,
    day: str | int,
    hour: str | None = None,
    minute: str | None = None,
    half: str | None = None,
) -> datetime | None:
    """The date, or None when it does not exist (``February 30``)."""
    hours = int(hour) if hour else 0
    if half and hours <= 12:
        hours = hours % 12 + (12 if half.startswith("p") else 0)
    try:
        return datetime(int(year), int(month), int(day), hours, int(minute or 0), tzinfo=UTC)
    except ValueError:
        return None


def _age(text: str, now: datetime) -> datetime | None:
    if text in _DAYS_BACK:
        return now - timedelta(days=_DAYS_BACK[text])
    if match := _AGO.fullmatch(text):
        unit = _UNIT_OF.get(match["unit"])
        count = match["count"]
        if unit is None:
            return None
        return now - timedelta(seconds=_UNITS[unit] * (int(count) if count.isdigit() else 1))
    if match := _CJK_AGO.fullmatch(text):
        return now - timedelta(seconds=_UNITS[_CJK_UNITS[match["unit"]]] * int(match["count"]))
    return None
