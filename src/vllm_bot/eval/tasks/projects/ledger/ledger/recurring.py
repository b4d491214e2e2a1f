"""Recurring transactions: a journal entry that repeats (`~ monthly from 2024-01-31  Rent`), and the
forecast of its occurrences in a period. Months are counted from the first date each time, so an
entry on the 31st lands on each month's last day and comes back to the 31st when it can."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import date, timedelta

from ledger.dates import Period, add_months
from ledger.journal import Transaction

EVERY = {  # interval -> (days, months)
    "daily": (1, 0),
    "weekly": (7, 0),
    "biweekly": (14, 0),
    "monthly": (0, 1),
    "quarterly": (0, 3),
    "yearly": (0, 12),
}
LIMIT = 100_000  # occurrences looked at before giving up (a daily entry over centuries)


@dataclass
class Recurring:
    every: str
    template: Transaction  # its date is the first occurrence
    end: date | None = None  # excluded

    def __post_init__(self) -> None:
        if self.every not in EVERY:
            raise ValueError(f"unknown interval {self.every!r} (one of {', '.join(EVERY)})")

    def nth(self, n: int) -> date:
        """The date of occurrence `n` (0 is the first)."""
        days, months = EVERY[self.every]
        start = self.template.date
        return start + timedelta(days=days * n) if days else add_months(start, months * n)

    def dates(self, period: Period) -> list[date]:
        found = []
        for n in range(LIMIT):
            day = self.nth(n)
            if day >= period.end or (self.end is not None and day >= self.end):
                break
            if period.contains(day):
                found.append(day)
        return found

    def occurrences(self, period: Period) -> list[Transaction]:
        found = []
        for day in self.dates(period):
            tx = copy.deepcopy(self.template)
            tx.date = day
            found.append(tx)
        return found


def forecast(recurring: list[Recurring], period: Period) -> list[Transaction]:
    """Every occurrence in `period`, in date order (entries of one day in the journal's order)."""
    found = [tx for entry in recurring for tx in entry.occurrences(period)]
    return sorted(found, key=lambda tx: tx.date)
