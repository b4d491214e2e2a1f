"""The reports: balances (as a tree with subtotals, or flat), a register (each posting with a running
total) and monthly totals per account. Each report returns plain rows; `render_*` draws them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from ledger import accounts
from ledger.accounts import AccountTree
from ledger.commodities import Commodities
from ledger.dates import span
from ledger.formatting import indent, table
from ledger.ledger import Ledger
from ledger.money import Amount, MixedAmount
from ledger.query import Query


@dataclass
class BalanceRow:
    account: str  # the full name
    label: str  # as shown: indented last part (tree) or the full name (flat)
    amount: MixedAmount


def fold(balances: dict[str, MixedAmount], depth: int) -> dict[str, MixedAmount]:
    """Balances of accounts deeper than `depth` added to their ancestor at that depth."""
    folded: dict[str, MixedAmount] = {}
    for name, amount in balances.items():
        key = accounts.truncate(name, depth)
        folded[key] = folded.get(key, MixedAmount()) + amount
    return folded


def balance_report(
    ledger: Ledger,
    query: Query | None = None,
    depth: int | None = None,
    flat: bool = False,
    convert: str | None = None,
) -> tuple[list[BalanceRow], MixedAmount]:
    """(rows, grand total): every account whose balance is not zero; in a tree, parents carry the
    totals of their sub-accounts."""
    balances = ledger.balances(query, convert)
    if depth is not None:
        balances = fold(balances, depth)
    known = ledger.commodities
    total = sum(balances.values(), MixedAmount())
    if flat:
        rows = [BalanceRow(name, name, balances[name]) for name in sorted(balances)]
        return [r for r in rows if not r.amount.is_zero(known)], total
    tree = AccountTree(balances)
    rows = [
        BalanceRow(node.name, indent(accounts.leaf(node.name), level), node.total)
        for node, level in tree.walk(depth)
        if not node.total.is_zero(known)
    ]
    return rows, total


def render_balance(rows: list[BalanceRow], total: MixedAmount, commodities: Commodities) -> str:
    cells = [[row.label, row.amount.format(commodities, "\n")] for row in rows]
    cells.append(["total", total.format(commodities, "\n")])
    return table(["account", "balance"], cells, right=[1])


@dataclass
class RegisterRow:
    date: date
    description: str
    account: str
    amount: Amount
    running: MixedAmount  # the total of this and every earlier row


def register_report(ledger: Ledger, query: Query | None = None) -> list[RegisterRow]:
    rows = []
    running = MixedAmount()
    for tx, posting in ledger.postings(query):
        assert posting.amount is not None
        running = running + posting.amount
        rows.append(RegisterRow(tx.date, tx.description, posting.account, posting.amount, running))
    return rows


def render_register(rows: list[RegisterRow], commodities: Commodities) -> str:
    cells = [
        [
            str(r.date),
            r.description,
            r.account,
            r.amount.format(commodities),
            r.running.format(commodities, "\n"),
        ]
        for r in rows
    ]
    return table(
        ["date", "description", "account", "amount", "total"], cells, right=[3, 4], limits={1: 30, 2: 30}
    )


@dataclass
class MonthlyRow:
    account: str
    months: list[MixedAmount]
    total: MixedAmount
    average: MixedAmount | None = None


@dataclass
class MonthlyReport:
    months: list[str]  # labels, `2024-01`
    rows: list[MonthlyRow]
    totals: MonthlyRow


def monthly_report(ledger: Ledger, query: Query | None = None, average: bool = False) -> MonthlyReport:
    """Each matching account's total per calendar month, from the first month with a posting to the
    last; with `average`, each row's mean per month too."""
    postings = ledger.postings(query)
    period = span([tx.date for tx, _ in postings])
    months = period.months() if period else []
    sums: dict[str, list[MixedAmount]] = {}
    for tx, posting in postings:
        assert posting.amount is not None
        row = sums.setdefault(posting.account, [MixedAmount() for _ in months])
        index = next(i for i, m in enumerate(months) if m.contains(tx.date))
        row[index] = row[index] + posting.amount
    rows = [_monthly_row(name, sums[name], average) for name in sorted(sums)]
    column_totals = [sum((r.months[i] for r in rows), MixedAmount()) for i in range(len(months))]
    totals = _monthly_row("total", column_totals, average)
    return MonthlyReport([m.label for m in months], rows, totals)


def _monthly_row(name: str, months: list[MixedAmount], average: bool) -> MonthlyRow:
    total = sum(months, MixedAmount())
    mean = None
    if average and months:
        mean = total / len(months)
    return MonthlyRow(name, months, total, mean)


def render_monthly(report: MonthlyReport, commodities: Commodities) -> str:
    average = report.totals.average is not None
    headers = ["account", *report.months, "total"] + (["average"] if average else [])
    cells = []
    for row in [*report.rows, report.totals]:
        amounts = [*row.months, row.total] + ([row.average] if row.average is not None else [])
        cells.append([row.account, *(a.format(commodities, "\n") for a in amounts)])
    return table(headers, cells, right=list(range(1, len(headers))))
