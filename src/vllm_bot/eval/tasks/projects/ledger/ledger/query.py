"""Queries: which postings a report looks at. A query is a list of terms:

    acct:REGEX (or a bare word)   the posting's account
    desc:REGEX                    the transaction's description
    payee:REGEX                   the description's part before ` | `
    date:PERIOD                   the transaction's date (see dates.parse_period)
    amt:>100, amt:<=-5, amt:=0    the posting's amount (its quantity, sign included)
    tag:NAME or tag:NAME=REGEX    a tag of the posting or of its transaction
    status:* / status:! / status: cleared, pending, unmarked
    not:TERM                      any of the above, negated

Terms of the same kind match when any of them matches; terms of different kinds must all match;
every negated term must not match. Regular expressions ignore case and may match anywhere.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from ledger.dates import parse_period
from ledger.errors import QueryError
from ledger.journal import Posting, Transaction

COMPARISONS: dict[str, Callable[[Decimal, Decimal], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "=": operator.eq,
}
Matcher = Callable[[Transaction, Posting], bool]


@dataclass(frozen=True)
class Term:
    kind: str
    value: str
    negated: bool
    match: Matcher


def _regex(value: str) -> re.Pattern[str]:
    try:
        return re.compile(value, re.IGNORECASE)
    except re.error as e:
        raise QueryError(f"bad regular expression {value!r}: {e}") from None


def _amount(value: str) -> Matcher:
    symbol = next((s for s in COMPARISONS if value.startswith(s)), "")
    compare, number = COMPARISONS.get(symbol, operator.eq), value[len(symbol) :]
    try:
        limit = Decimal(number)
    except InvalidOperation:
        raise QueryError(f"amt: needs a comparison and a number, like amt:>100, not {value!r}") from None
    return lambda tx, p: p.amount is not None and compare(p.amount.quantity, limit)


def _tag(value: str) -> Matcher:
    name, _, wanted = value.partition("=")
    pattern = _regex(wanted) if wanted else None

    def match(tx: Transaction, p: Posting) -> bool:
        tags = tx.posting_tags(p)
        if name.lower() not in tags:
            return False
        return pattern is None or bool(pattern.search(tags[name.lower()]))

    return match


def _status(value: str) -> Matcher:
    wanted = {"*": "*", "cleared": "*", "!": "!", "pending": "!", "": "", "unmarked": ""}.get(value.lower())
    if wanted is None:
        raise QueryError(f"status: takes *, !, cleared, pending or unmarked, not {value!r}")
    return lambda tx, p: tx.status == wanted


def _search(text_of: Callable[[Transaction, Posting], str]) -> Callable[[str], Matcher]:
    def factory(value: str) -> Matcher:
        pattern = _regex(value)
        return lambda tx, p: bool(pattern.search(text_of(tx, p)))

    return factory


def _date(value: str) -> Matcher:
    try:
        period = parse_period(value)
    except ValueError as e:
        raise QueryError(str(e)) from None
    return lambda tx, p: period.contains(tx.date)


FACTORIES: dict[str, Callable[[str], Matcher]] = {
    "acct": _search(lambda tx, p: p.account),
    "desc": _search(lambda tx, p: tx.description),
    "payee": _search(lambda tx, p: tx.payee),
    "date": _date,
    "amt": _amount,
    "tag": _tag,
    "status": _status,
}


def make_term(text: str) -> Term:
    """One query word as a term; QueryError for a value that cannot be understood."""
    negated = text.startswith("not:")
    body = text[4:] if negated else text
    kind, sep, value = body.partition(":")
    if not sep or kind not in FACTORIES:
        kind, value = "acct", body
    return Term(kind, value, negated, FACTORIES[kind](value))


class Query:
    """A parsed query; an empty one matches every posting."""

    def __init__(self, terms: list[Term] | None = None) -> None:
        self.terms = terms or []

    def matches(self, tx: Transaction, posting: Posting) -> bool:
        by_kind: dict[str, list[Term]] = {}
        for term in self.terms:
            if term.negated:
                if term.match(tx, posting):
                    return False
            else:
                by_kind.setdefault(term.kind, []).append(term)
        return all(any(t.match(tx, posting) for t in group) for group in by_kind.values())

    def matches_transaction(self, tx: Transaction) -> bool:
        """Does any posting of `tx` match?"""
        return any(self.matches(tx, p) for p in tx.postings)

    def __bool__(self) -> bool:
        return bool(self.terms)


def parse_query(words: list[str]) -> Query:
    return Query([make_term(word) for word in words if word.strip()])
