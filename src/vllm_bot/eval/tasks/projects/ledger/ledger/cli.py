"""The command line: `python3 -m ledger -f FILE COMMAND ...` (see README.md). Exit codes: 0 done,
1 the journal or another input has an error (one line on stderr says where), 2 bad arguments."""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path
from typing import TextIO

from ledger import __version__
from ledger.budget import budget_report, parse_budget, render_budget
from ledger.csvimport import import_csv, new_only, parse_rules
from ledger.dates import Period, add_months, parse_period
from ledger.errors import LedgerError
from ledger.export import postings_csv, transactions_json
from ledger.ledger import Ledger
from ledger.parser import render_transaction
from ledger.query import parse_query
from ledger.recurring import forecast
from ledger.reports import (
    balance_report,
    monthly_report,
    register_report,
    render_balance,
    render_monthly,
    render_register,
)

DEFAULT_FILE = "ledger.journal"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ledger", description="Plain-text accounting.")
    parser.add_argument("--version", action="version", version=f"ledger {__version__}")
    parser.add_argument("-f", "--file", default=DEFAULT_FILE, help=f"the journal (default {DEFAULT_FILE})")
    commands = parser.add_subparsers(dest="command", required=True)

    balance = commands.add_parser("balance", help="account balances")
    balance.add_argument("query", nargs="*")
    balance.add_argument(
        "--depth", type=int, metavar="N", help="fold accounts below level N into their parent"
    )
    balance.add_argument("--flat", action="store_true", help="full account names, no tree")
    balance.add_argument("--convert", metavar="COMMODITY", help="show every balance in this commodity")

    register = commands.add_parser("register", help="postings with a running total")
    register.add_argument("query", nargs="*")

    monthly = commands.add_parser("monthly", help="totals per account and month")
    monthly.add_argument("query", nargs="*")
    monthly.add_argument("--average", action="store_true", help="add each account's mean per month")

    budget = commands.add_parser("budget", help="spending against a budget")
    budget.add_argument("rules", help="the budget file")
    budget.add_argument("--period", default=None, help="the period (default: the journal's last month)")

    importer = commands.add_parser("import", help="print a CSV's new transactions as journal entries")
    importer.add_argument("csv")
    importer.add_argument("--rules", required=True, help="the rules file")
    importer.add_argument("--write", action="store_true", help="append them to the journal")

    export = commands.add_parser("export", help="postings as CSV or transactions as JSON")
    export.add_argument("query", nargs="*")
    export.add_argument("--format", choices=["csv", "json"], default="csv")

    forecast = commands.add_parser("forecast", help="the recurring transactions due in a period")
    forecast.add_argument(
        "--period", default=None, help="the period (default: the month after the journal's last)"
    )

    check = commands.add_parser("check", help="read the journal and report the first error")
    check.add_argument("--strict", action="store_true", help="every account must be declared")
    return parser


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = build_parser().parse_args(argv)
    try:
        ledger = Ledger.from_file(args.file)
        return COMMANDS[args.command](ledger, args, out)
    except LedgerError as e:
        print(f"ledger: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"ledger: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 1


def chosen_period(text: str | None, month_of: date | None) -> Period:
    """The period given (`--period`), else the calendar month of `month_of`."""
    try:
        return parse_period(text if text is not None else f"{month_of:%Y-%m}")
    except ValueError as e:
        raise LedgerError(str(e)) from None


def run_balance(ledger: Ledger, args: argparse.Namespace, out: TextIO) -> int:
    if args.depth is not None and args.depth < 1:
        raise LedgerError("--depth must be at least 1")
    rows, total = balance_report(ledger, parse_query(args.query), args.depth, args.flat, args.convert)
    out.write(render_balance(rows, total, ledger.commodities))
    return 0


def run_register(ledger: Ledger, args: argparse.Namespace, out: TextIO) -> int:
    out.write(render_register(register_report(ledger, parse_query(args.query)), ledger.commodities))
    return 0


def run_monthly(ledger: Ledger, args: argparse.Namespace, out: TextIO) -> int:
    report = monthly_report(ledger, parse_query(args.query), args.average)
    out.write(render_monthly(report, ledger.commodities))
    return 0


def run_budget(ledger: Ledger, args: argparse.Namespace, out: TextIO) -> int:
    rules = parse_budget(Path(args.rules).read_text(encoding="utf-8"), args.rules)
    last = ledger.last_date()
    if args.period is None and last is None:
        raise LedgerError("the journal has no transactions: give --period")
    period = chosen_period(args.period, last)
    out.write(f"budget for {period}\n")
    out.write(render_budget(budget_report(ledger, rules, period), ledger))
    return 0


def run_import(ledger: Ledger, args: argparse.Namespace, out: TextIO) -> int:
    rules = parse_rules(Path(args.rules).read_text(encoding="utf-8"), args.rules)
    imported = import_csv(Path(args.csv).read_text(encoding="utf-8"), rules, args.csv)
    fresh = new_only(imported, ledger.transactions)
    text = "\n".join(render_transaction(tx, ledger.commodities) for tx in fresh)
    if args.write and fresh:
        with open(args.file, "a", encoding="utf-8") as journal:
            journal.write("\n" + text)
    out.write(text)
    print(f"{len(fresh)} new of {len(imported)} transactions", file=sys.stderr)
    return 0


def run_export(ledger: Ledger, args: argparse.Namespace, out: TextIO) -> int:
    query = parse_query(args.query)
    out.write(postings_csv(ledger, query) if args.format == "csv" else transactions_json(ledger, query))
    return 0


def run_forecast(ledger: Ledger, args: argparse.Namespace, out: TextIO) -> int:
    period = chosen_period(args.period, add_months(ledger.last_date() or date.today(), 1))
    due = forecast(ledger.recurring, period)
    out.write("\n".join(render_transaction(tx, ledger.commodities) for tx in due))
    print(f"{len(due)} transactions due in {period}", file=sys.stderr)
    return 0


def run_check(ledger: Ledger, args: argparse.Namespace, out: TextIO) -> int:
    if args.strict and ledger.undeclared():
        raise LedgerError(f"undeclared accounts: {', '.join(ledger.undeclared())}")
    out.write(f"{len(ledger.transactions)} transactions, {len(ledger.accounts())} accounts: ok\n")
    return 0


COMMANDS = {
    "balance": run_balance,
    "register": run_register,
    "monthly": run_monthly,
    "budget": run_budget,
    "import": run_import,
    "export": run_export,
    "forecast": run_forecast,
    "check": run_check,
}
