"""Transactions and their postings: the balancing rule (every transaction adds up to zero in each
commodity; one posting may leave its amount out and gets what balances the others), payees, tags,
and the fingerprint that tells an imported transaction already in the journal."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from ledger.commodities import DEFAULT, Commodities
from ledger.errors import BalanceError
from ledger.money import Amount, MixedAmount

TAG = re.compile(r"(?:^|,)\s*([A-Za-z][\w-]*):([^,]*)")
STATUSES = {"": "unmarked", "!": "pending", "*": "cleared"}
Fingerprint = tuple[date, str, tuple[tuple[str, str, Decimal], ...]]


def parse_tags(comment: str) -> dict[str, str]:
    """The `name:value` tags of a comment, comma separated (`food:, trip:paris`); names in lowercase."""
    return {name.lower(): value.strip() for name, value in TAG.findall(comment)}


@dataclass
class Posting:
    account: str
    amount: Amount | None = None  # None: left out, the transaction fills it in
    comment: str = ""
    line: int | None = None
    inferred: bool = False  # the amount was filled in by `Transaction.balance`

    @property
    def tags(self) -> dict[str, str]:
        return parse_tags(self.comment)


@dataclass
class Transaction:
    date: date
    description: str
    postings: list[Posting] = field(default_factory=list)
    status: str = ""  # "", "!" (pending) or "*" (cleared)
    code: str = ""
    comment: str = ""
    line: int | None = None

    @property
    def payee(self) -> str:
        """The part of the description before ` | ` (all of it when there is none)."""
        return self.description.split(" | ", 1)[0].strip()

    @property
    def note(self) -> str:
        """The part of the description after ` | ` ("" when there is none)."""
        parts = self.description.split(" | ", 1)
        return parts[1].strip() if len(parts) > 1 else ""

    @property
    def tags(self) -> dict[str, str]:
        return parse_tags(self.comment)

    def posting_tags(self, posting: Posting) -> dict[str, str]:
        """A posting's tags: the transaction's, and the posting's own on top."""
        return {**self.tags, **posting.tags}

    def total(self) -> MixedAmount:
        """The sum of the postings' amounts (zero in every commodity once balanced)."""
        return MixedAmount(p.amount for p in self.postings if p.amount is not None)

    def balance(self, commodities: Commodities | None = None) -> None:
        """Fill in a left-out amount and check that the postings add up to zero; BalanceError if not."""
        known = commodities or DEFAULT
        if len(self.postings) < 2:
            raise BalanceError(f"{self.where()}needs at least two postings")
        missing = [p for p in self.postings if p.amount is None]
        if len(missing) > 1:
            raise BalanceError(f"{self.where()}only one posting may leave its amount out")
        rest = self.total()
        if missing:
            amounts = rest.amounts()
            if len(amounts) != 1:
                raise BalanceError(
                    f"{self.where()}cannot fill in the amount of {missing[0].account}: the other postings "
                    f"are in {len(amounts)} commodities"
                )
            missing[0].amount = -amounts[0]
            missing[0].inferred = True
            return
        if not rest.is_zero(known):
            raise BalanceError(f"{self.where()}does not balance: off by {rest.format(known)}")

    def where(self) -> str:
        return f"{self.date} {self.description}: "

    def fingerprint(self) -> Fingerprint:
        """What makes two transactions the same one (for imports): date, description ignoring case
        and spacing, and the postings' accounts and amounts in any order."""
        postings = tuple(
            sorted(
                (p.account, p.amount.commodity, p.amount.quantity)
                for p in self.postings
                if p.amount is not None
            )
        )
        return self.date, " ".join(self.description.lower().split()), postings
