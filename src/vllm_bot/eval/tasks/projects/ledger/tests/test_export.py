import csv
import io
import json
import unittest

from ledger.export import postings_csv, transactions_json
from ledger.query import parse_query

from tests.fixtures import household


class ExportTest(unittest.TestCase):
    def test_csv(self):
        rows = list(csv.reader(io.StringIO(postings_csv(household(), parse_query(["Card"])))))
        self.assertEqual(rows[0], ["date", "status", "payee", "note", "account", "amount", "commodity"])
        self.assertEqual(
            rows[1:],
            [
                ["2024-01-20", "!", "Bistro", "dinner", "Liabilities:Card", "-32.50", "EUR"],
                ["2024-02-14", "*", "Bookshop", "", "Liabilities:Card", "-10.00", "USD"],
            ],
        )

    def test_json(self):
        data = json.loads(transactions_json(household(), parse_query(["tag:with"])))
        self.assertEqual(
            data,
            [
                {
                    "date": "2024-01-20",
                    "status": "!",
                    "description": "Bistro | dinner",
                    "tags": {"food": "", "with": "anna"},
                    "postings": [
                        {"account": "Expenses:Food:Restaurants", "amount": "32.50", "commodity": "EUR"},
                        {"account": "Liabilities:Card", "amount": "-32.50", "commodity": "EUR"},
                    ],
                }
            ],
        )

    def test_json_of_everything(self):
        data = json.loads(transactions_json(household()))
        self.assertEqual(len(data), 7)
        self.assertEqual(
            data[2]["postings"][1], {"account": "Assets:Cash", "amount": "-10.00", "commodity": "EUR"}
        )


if __name__ == "__main__":
    unittest.main()
