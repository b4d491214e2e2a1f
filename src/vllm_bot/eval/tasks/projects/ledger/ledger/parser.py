"""Reading a journal: transactions, recurring transactions (`~ monthly from 2024-01-01  Rent`), and
the directives `account NAME`, `commodity EXAMPLE` and `P DATE COMMODITY PRICE`. Errors name the line.

    2024-01-05 * (1042) Grocer | weekly shop  ; food:
        Expenses:Food:Groceries      42.10 EUR  ; receipt:yes
        Assets:Bank:Checking

A transaction starts at a line beginning with a date and ends at the next line that is not
indented. A posting is an indented account name, then (after two spaces or a tab) its amount; a
comment starts with `;`. Lines starting with `;` or `#` are comments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ledger import accounts
from ledger.commodities import Commodities
from ledger.dates import parse_date
from ledger.errors import BalanceError, ParseError
from ledger.journal import Posting, Transaction
from ledger.money import parse_amount
from ledger.prices import PriceDB
from ledger.recurring import Recurring

HEADER = re.compile(
    r"^(?P<date>\S+)(?:\s+(?P<status>[*!]))?(?:\s+\((?P<code>[^)]*)\))?(?:\s+(?P<description>[^;]*?))?"
    r"\s*(?:;(?P<comment>.*))?$"
)
RECURRING = re.compile(
    r"^~\s+(?P<every>\w+)\s+from\s+(?P<start>\S+)(?:\s+to\s+(?P<end>\S+))?"
    r"(?:(?:\t|  )\s*(?P<description>.*))?$"
)
POSTING = re.compile(r"^(?P<account>[^;\t]+?)(?:(?:\t|  )\s*(?P<amount>[^;]+?))?\s*(?:;(?P<comment>.*))?$")


@dataclass
class Journal:
    transactions: list[Transaction] = field(default_factory=list)
    declared: list[str] = field(default_factory=list)  # accounts named by `account` directives
    commodities: Commodities = field(default_factory=Commodities)
    prices: PriceDB = field(default_factory=PriceDB)
    recurring: list[Recurring] = field(default_factory=list)


def parse_journal(text: str, source: str | None = None) -> Journal:
    """Every transaction and directive of `text`; ParseError at the first problem."""
    journal = Journal()
    current: Transaction | Recurring | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        try:
            if not line.strip():
                _finish(current, journal)
                current = None
            elif line.lstrip().startswith("#") or line.startswith(";"):
                continue
            elif line[0] in " \t":
                if current is None:
                    raise ParseError("an indented line outside a transaction", number, source)
                _indented(
                    line.strip(), current.template if isinstance(current, Recurring) else current, number
                )
            else:
                _finish(current, journal)
                current = _directive(line, number, journal)
        except ParseError as e:
            raise ParseError(e.message, number if e.line is None else e.line, source) from None
        except ValueError as e:
            raise ParseError(str(e), number, source) from None
    try:
        _finish(current, journal)
    except ParseError as e:
        raise ParseError(e.message, e.line, source) from None
    return journal


def _finish(current: Transaction | Recurring | None, journal: Journal) -> None:
    """Balance the transaction (or recurring one) being read and keep it."""
    if current is None:
        return
    tx = current.template if isinstance(current, Recurring) else current
    try:
        tx.balance(journal.commodities)
    except BalanceError as e:
        raise ParseError(str(e), tx.line) from None
    if isinstance(current, Recurring):
        journal.recurring.append(current)
    else:
        journal.transactions.append(current)


def _directive(line: str, number: int, journal: Journal) -> Transaction | Recurring | None:
    """A line at the start: a transaction or recurring header (returned) or a directive."""
    word, _, rest = line.partition(" ")
    if word == "~":
        match = RECURRING.match(line)
        if not match:
            raise ValueError(
                "a recurring transaction starts with ~ INTERVAL from DATE [to DATE]  DESCRIPTION"
            )
        template = Transaction(parse_date(match["start"]), (match["description"] or "").strip(), line=number)
        end = parse_date(match["end"]) if match["end"] else None
        return Recurring(match["every"].lower(), template, end)
    if word == "account":
        journal.declared.append(accounts.validate(rest.split(";")[0].strip()))
        return None
    if word == "commodity":
        journal.commodities.declare_example(rest.split(";")[0])
        return None
    if word == "P":
        day, symbol, price = [*rest.split(None, 2), "", "", ""][:3]
        if not price:
            raise ValueError("a price needs a date, a commodity and a price: P 2024-01-01 BTC 40000 USD")
        journal.prices.add(parse_date(day), symbol, parse_amount(price))
        return None
    if not line[0].isdigit():
        raise ValueError(f"not a transaction or a directive: {line[:40]!r}")
    match = HEADER.match(line)
    if not match:
        raise ValueError(f"cannot read the transaction line {line[:40]!r}")
    return Transaction(
        date=parse_date(match["date"]),
        description=(match["description"] or "").strip(),
        status=match["status"] or "",
        code=match["code"] or "",
        comment=(match["comment"] or "").strip(),
        line=number,
    )


def _indented(text: str, current: Transaction, number: int) -> None:
    """A posting, or a comment line that belongs to the transaction or its last posting."""
    if text.startswith(";"):
        comment = text[1:].strip()
        if current.postings:
            last = current.postings[-1]
            last.comment = f"{last.comment}, {comment}" if last.comment else comment
        else:
            current.comment = f"{current.comment}, {comment}" if current.comment else comment
        return
    match = POSTING.match(text)
    if not match:
        raise ValueError(f"cannot read the posting {text[:40]!r}")
    amount = parse_amount(match["amount"]) if match["amount"] else None
    current.postings.append(
        Posting(
            account=accounts.validate(match["account"].strip()),
            amount=amount,
            comment=(match["comment"] or "").strip(),
            line=number,
        )
    )


def render_transaction(tx: Transaction, commodities: Commodities | None = None, width: int = 40) -> str:
    """A transaction as journal text (amounts aligned at `width`)."""
    head = [str(tx.date)]
    if tx.status:
        head.append(tx.status)
    if tx.code:
        head.append(f"({tx.code})")
    if tx.description:
        head.append(tx.description)
    lines = [" ".join(head) + (f"  ; {tx.comment}" if tx.comment else "")]
    for p in tx.postings:
        line = f"    {p.account}"
        if p.amount is not None and not p.inferred:
            line = f"{line:<{width}}  {p.amount.format(commodities)}"
        if p.comment:
            line += f"  ; {p.comment}"
        lines.append(line)
    return "\n".join(lines) + "\n"
