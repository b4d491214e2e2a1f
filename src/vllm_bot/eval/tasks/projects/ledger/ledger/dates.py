"""Dates and periods: reading them, months of different lengths, and the periods reports group by.
A period's end is excluded: the month 2024-02 is 2024-02-01 up to, not including, 2024-03-01."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

DATE = re.compile(r"^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$")
MONTH = re.compile(r"^(\d{4})[-/](\d{1,2})$")
QUARTER = re.compile(r"^(\d{4})-?[Qq]([1-4])$")
YEAR = re.compile(r"^(\d{4})$")


def parse_date(text: str) -> date:
    """`2024-03-15`, `2024/3/15` or `2024.03.15` -> date; ValueError otherwise."""
    match = DATE.match(text.strip())
    if not match:
        raise ValueError(f"not a date: {text.strip()!r} (write it as YYYY-MM-DD)")
    year, month, day = (int(g) for g in match.groups())
    try:
        return date(year, month, day)
    except ValueError:
        raise ValueError(f"no such day: {text.strip()!r}") from None


def days_in_month(year: int, month: int) -> int:
    return calendar.monthrange(year, month)[1]


def add_months(day: date, months: int) -> date:
    """The same day `months` later (or earlier), on the month's last day when it is shorter:
    2024-01-31 plus one month is 2024-02-29."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(day.day, days_in_month(year, month + 1)))


def month_start(day: date) -> date:
    return day.replace(day=1)


def quarter_of(day: date) -> int:
    return (day.month - 1) // 3 + 1


@dataclass(frozen=True)
class Period:
    start: date
    end: date  # excluded
    label: str = ""

    def contains(self, day: date) -> bool:
        return self.start <= day < self.end

    @property
    def days(self) -> int:
        return (self.end - self.start).days

    def months(self) -> list[Period]:
        """The calendar months this period touches, each cut to the period."""
        found = []
        start = month_start(self.start)
        while start < self.end:
            following = add_months(start, 1)
            found.append(Period(max(start, self.start), min(following, self.end), f"{start:%Y-%m}"))
            start = following
        return found

    def month_count(self) -> float:
        """Calendar months in the period (a part of a month counts as its share of the month)."""
        total = 0.0
        for month in self.months():
            total += month.days / days_in_month(month.start.year, month.start.month)
        return round(total, 6)

    def __str__(self) -> str:
        return self.label or f"{self.start}..{self.end}"


def parse_period(text: str) -> Period:
    """`2024`, `2024-Q2`, `2024-03`, `2024-03-15` or `2024-01-01..2024-02-15` -> Period."""
    text = text.strip()
    if ".." in text:
        first, _, last = text.partition("..")
        start, end = parse_date(first), parse_date(last)
        if end <= start:
            raise ValueError(f"the period {text!r} ends before it starts")
        return Period(start, end, text)
    if match := YEAR.match(text):
        year = int(match[1])
        return Period(date(year, 1, 1), date(year + 1, 1, 1), text)
    if match := QUARTER.match(text):
        year, quarter = int(match[1]), int(match[2])
        start = date(year, 3 * quarter - 2, 1)
        return Period(start, add_months(start, 3), f"{year}-Q{quarter}")
    if match := MONTH.match(text):
        year, month = int(match[1]), int(match[2])
        if not 1 <= month <= 12:
            raise ValueError(f"no such month: {text!r}")
        start = date(year, month, 1)
        return Period(start, add_months(start, 1), f"{start:%Y-%m}")
    try:
        day = parse_date(text)
    except ValueError:
        raise ValueError(f"not a period: {text!r} (a year, 2024-Q2, a month, a day or A..B)") from None
    return Period(day, day + timedelta(days=1), text)


def span(days: list[date]) -> Period | None:
    """The whole months from the first to the last of `days` (None for none)."""
    if not days:
        return None
    start = month_start(min(days))
    return Period(start, add_months(month_start(max(days)), 1))
