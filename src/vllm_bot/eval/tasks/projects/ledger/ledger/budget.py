"""Budgets: how much each account may spend per month, quarter or year, and how much it did.

A budget file has one rule per line, fields separated by two spaces or a tab:

    Expenses:Food          400 EUR   monthly
    Expenses:Travel       1200 EUR   yearly

The period is `monthly` when left out. A rule covers the account and its sub-accounts; over a report
period it allows its amount times the share of its own period that the report period spans."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from ledger import accounts
from ledger.dates import Period
from ledger.errors import ParseError
from ledger.formatting import table
from ledger.ledger import Ledger
from ledger.money import Amount, parse_amount

EVERY = {"monthly": 1, "quarterly": 3, "yearly": 12}  # months per budget period
FIELDS = re.compile(r"\t+|\s{2,}")


@dataclass(frozen=True)
class BudgetRule:
    account: str
    amount: Amount
    every: str = "monthly"


@dataclass
class BudgetLine:
    account: str
    budget: Amount
    actual: Amount

    @property
    def remaining(self) -> Amount:
        return self.budget - self.actual

    @property
    def used(self) -> Decimal | None:
        """The share of the budget spent, in percent (None for a zero budget)."""
        if self.budget.quantity == 0:
            return None
        return self.actual.quantity * 100 / self.budget.quantity


def parse_budget(text: str, source: str | None = None) -> list[BudgetRule]:
    rules = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].split(";", 1)[0].strip()
        if not line:
            continue
        fields = FIELDS.split(line)
        if len(fields) not in (2, 3):
            raise ParseError("a budget rule is ACCOUNT  AMOUNT  [monthly|quarterly|yearly]", number, source)
        every = fields[2].lower() if len(fields) == 3 else "monthly"
        if every not in EVERY:
            raise ParseError(f"unknown budget period {fields[2]!r}", number, source)
        try:
            rules.append(BudgetRule(accounts.validate(fields[0]), parse_amount(fields[1]), every))
        except ValueError as e:
            raise ParseError(str(e), number, source) from None
    return rules


def allowed(rule: BudgetRule, period: Period) -> Amount:
    """What `rule` allows over `period`."""
    share = Decimal(str(period.month_count())) / EVERY[rule.every]
    return rule.amount * share


def budget_report(ledger: Ledger, rules: list[BudgetRule], period: Period) -> list[BudgetLine]:
    """One line per rule: its budget over `period` and the postings to its accounts in that period
    (in the rule's commodity; others converted at the prices of the period's last day)."""
    lines = []
    last_day = period.end - timedelta(days=1)
    for rule in rules:
        spent = Decimal(0)
        for tx, posting in ledger.postings():
            if not period.contains(tx.date) or not accounts.is_under(posting.account, rule.account):
                continue
            assert posting.amount is not None
            amount = posting.amount
            if amount.commodity != rule.amount.commodity:
                amount = ledger.prices.convert(amount, rule.amount.commodity, last_day)
            spent += amount.quantity
        lines.append(BudgetLine(rule.account, allowed(rule, period), Amount(spent, rule.amount.commodity)))
    return lines


def render_budget(lines: list[BudgetLine], ledger: Ledger) -> str:
    known = ledger.commodities
    cells = [
        [
            line.account,
            line.budget.format(known),
            line.actual.format(known),
            "-" if line.used is None else f"{line.used:.0f}%",
            line.remaining.format(known),
        ]
        for line in lines
    ]
    return table(["account", "budget", "actual", "used", "remaining"], cells, right=[1, 2, 3, 4])
