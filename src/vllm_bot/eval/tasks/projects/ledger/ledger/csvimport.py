"""Importing a bank's CSV export: a rules file says which columns hold what, which account the CSV is
for, and which account each transaction goes to (the first `if PATTERN = ACCOUNT` rule whose pattern
the description matches). Transactions already in the journal are left out.

    skip = 1                      # header lines
    separator = ,
    date = 1                      # column numbers, from 1
    date-format = %d/%m/%Y
    description = 2
    amount = 3                    # or: debit = 3 and credit = 4 (debit is money going out)
    commodity = EUR
    account = Assets:Bank:Checking
    default = Expenses:Unsorted   # money out that no rule matched
    income = Income:Unsorted      # money in that no rule matched
    if GROCER|MARKET = Expenses:Food:Groceries
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from ledger import accounts
from ledger.errors import ParseError
from ledger.journal import Posting, Transaction
from ledger.money import Amount, parse_amount

COLUMNS = ("date", "description", "amount", "debit", "credit")


@dataclass
class Rules:
    account: str = ""
    commodity: str = ""
    skip: int = 0
    separator: str = ","
    date_format: str = "%Y-%m-%d"
    columns: dict[str, int] = field(default_factory=dict)
    default: str = "Expenses:Unsorted"
    income: str = "Income:Unsorted"
    matches: list[tuple[re.Pattern[str], str]] = field(default_factory=list)

    def account_for(self, description: str, quantity: Decimal) -> str:
        for pattern, account in self.matches:
            if pattern.search(description):
                return account
        return self.income if quantity > 0 else self.default


def parse_rules(text: str, source: str | None = None) -> Rules:
    rules = Rules()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip()
        try:
            if not sep or not value:
                raise ValueError("a rule is KEY = VALUE")
            _rule(rules, key, value)
        except (ValueError, re.error) as e:
            raise ParseError(str(e), number, source) from None
    if not rules.account or "date" not in rules.columns or "description" not in rules.columns:
        raise ParseError("the rules need `account`, `date` and `description`", None, source)
    if "amount" not in rules.columns and not {"debit", "credit"} <= set(rules.columns):
        raise ParseError("the rules need `amount`, or `debit` and `credit`", None, source)
    return rules


def _rule(rules: Rules, key: str, value: str) -> None:
    if key.startswith("if "):
        rules.matches.append((re.compile(key[3:].strip(), re.IGNORECASE), accounts.validate(value)))
    elif key in COLUMNS:
        rules.columns[key] = int(value)
        if rules.columns[key] < 1:
            raise ValueError("columns are numbered from 1")
    elif key == "skip":
        rules.skip = int(value)
    elif key == "separator":
        rules.separator = {"tab": "\t", "semicolon": ";"}.get(value, value)
    elif key == "date-format":
        rules.date_format = value
    elif key == "commodity":
        rules.commodity = value
    elif key in ("account", "default", "income"):
        setattr(rules, key, accounts.validate(value))
    else:
        raise ValueError(f"unknown rule {key!r}")


def parse_number(text: str) -> Decimal:
    """A bank's number: `1,234.56`, `-12.00`, `(12.00)` (negative), `` (zero)."""
    text = text.strip()
    if not text:
        return Decimal(0)
    negative = text.startswith("(") and text.endswith(")")
    quantity = parse_amount(text.strip("()")).quantity
    return -quantity if negative else quantity


def import_csv(text: str, rules: Rules, source: str | None = None) -> list[Transaction]:
    """The CSV's rows as balanced transactions, in the file's order."""
    found = []
    reader = csv.reader(io.StringIO(text), delimiter=rules.separator)
    for number, row in enumerate(reader, 1):
        if number <= rules.skip or not any(cell.strip() for cell in row):
            continue
        try:
            found.append(_transaction(row, rules))
        except (ValueError, IndexError) as e:
            raise ParseError(f"cannot import this row: {e}", number, source) from None
    return found


def _transaction(row: list[str], rules: Rules) -> Transaction:
    def cell(name: str) -> str:
        return row[rules.columns[name] - 1]

    day = datetime.strptime(cell("date").strip(), rules.date_format).date()
    description = " ".join(cell("description").split())
    if "amount" in rules.columns:
        quantity = parse_number(cell("amount"))
    else:
        quantity = parse_number(cell("credit")) - parse_number(cell("debit"))
    bank = Amount(quantity, rules.commodity)
    tx = Transaction(
        day,
        description,
        [Posting(rules.account_for(description, quantity), -bank), Posting(rules.account, bank)],
    )
    tx.balance()
    return tx


def new_only(imported: list[Transaction], existing: list[Transaction]) -> list[Transaction]:
    """The imported transactions not in `existing` (two identical ones in the journal cover two)."""
    seen = Counter(tx.fingerprint() for tx in existing)
    fresh = []
    for tx in imported:
        key = tx.fingerprint()
        if seen[key] > 0:
            seen[key] -= 1
        else:
            fresh.append(tx)
    return fresh
