"""Exporting postings for a spreadsheet (CSV) or another program (JSON)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from ledger.ledger import Ledger
from ledger.query import Query


def postings_csv(ledger: Ledger, query: Query | None = None) -> str:
    """One row per matching posting: date, status, payee, note, account, amount, commodity."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["date", "status", "payee", "note", "account", "amount", "commodity"])
    for tx, posting in ledger.postings(query):
        assert posting.amount is not None
        amount = posting.amount.rounded(ledger.commodities)
        row = [tx.date, tx.status, tx.payee, tx.note, posting.account, amount.quantity, amount.commodity]
        writer.writerow(row)
    return out.getvalue()


def transactions_json(ledger: Ledger, query: Query | None = None) -> str:
    """The transactions with a matching posting, each with all its postings."""
    query = query or Query()
    data: list[dict[str, Any]] = []
    for tx in ledger.transactions:
        if not query.matches_transaction(tx):
            continue
        data.append(
            {
                "date": tx.date.isoformat(),
                "status": tx.status,
                "description": tx.description,
                "tags": tx.tags,
                "postings": [
                    {
                        "account": p.account,
                        "amount": str(p.amount.rounded(ledger.commodities).quantity) if p.amount else None,
                        "commodity": p.amount.commodity if p.amount else None,
                    }
                    for p in tx.postings
                ],
            }
        )
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
