"""A ledger: a journal's transactions in date order, with the questions reports ask of them: which
postings match a query, and what each account's balance is (optionally converted at market prices)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from ledger.commodities import Commodities
from ledger.journal import Posting, Transaction
from ledger.money import MixedAmount
from ledger.parser import Journal, parse_journal
from ledger.prices import PriceDB
from ledger.query import Query
from ledger.recurring import Recurring


class Ledger:
    def __init__(self, journal: Journal) -> None:
        # Stable: transactions of the same day keep the order they were written in.
        self.transactions: list[Transaction] = sorted(journal.transactions, key=lambda tx: tx.date)
        self.declared = list(journal.declared)
        self.commodities: Commodities = journal.commodities
        self.prices: PriceDB = journal.prices
        self.recurring: list[Recurring] = list(journal.recurring)

    @classmethod
    def from_text(cls, text: str, source: str | None = None) -> Ledger:
        return cls(parse_journal(text, source))

    @classmethod
    def from_file(cls, path: str | Path) -> Ledger:
        path = Path(path)
        return cls.from_text(path.read_text(encoding="utf-8"), str(path))

    def postings(self, query: Query | None = None) -> list[tuple[Transaction, Posting]]:
        """The postings matching `query`, in date order, each with its transaction."""
        query = query or Query()
        return [(tx, p) for tx in self.transactions for p in tx.postings if query.matches(tx, p)]

    def balances(
        self, query: Query | None = None, convert: str | None = None, on: date | None = None
    ) -> dict[str, MixedAmount]:
        """Each account's sum of matching postings; with `convert`, in that commodity at the prices of
        `on` (default: the last transaction's day)."""
        found: dict[str, MixedAmount] = {}
        for _, posting in self.postings(query):
            assert posting.amount is not None  # balanced transactions have every amount
            found[posting.account] = found.get(posting.account, MixedAmount()) + posting.amount
        if convert:
            day = on or self.last_date() or date.today()
            found = {name: self.prices.convert_mixed(amount, convert, day) for name, amount in found.items()}
        return found

    def accounts(self) -> list[str]:
        """Every account used or declared, sorted."""
        used = {p.account for tx in self.transactions for p in tx.postings}
        return sorted(used | set(self.declared))

    def undeclared(self) -> list[str]:
        """Accounts used by postings but never declared with `account`."""
        used = {p.account for tx in self.transactions for p in tx.postings}
        return sorted(used - set(self.declared))

    def first_date(self) -> date | None:
        return self.transactions[0].date if self.transactions else None

    def last_date(self) -> date | None:
        return self.transactions[-1].date if self.transactions else None
