import unittest

from ledger.errors import QueryError
from ledger.query import parse_query

from tests.fixtures import household


def matched(*words):
    ledger = household()
    return [(str(tx.date), p.account) for tx, p in ledger.postings(parse_query(list(words)))]


class QueryTest(unittest.TestCase):
    def test_empty_matches_everything(self):
        self.assertEqual(len(matched()), 15)

    def test_accounts(self):
        self.assertEqual(
            matched("food"),
            [
                ("2024-01-10", "Expenses:Food:Groceries"),
                ("2024-01-20", "Expenses:Food:Restaurants"),
                ("2024-02-14", "Expenses:Food:Groceries"),
            ],
        )
        self.assertEqual(matched("acct:^Income"), [("2024-01-31", "Income:Salary")])

    def test_same_kind_is_or_other_kinds_are_and(self):
        self.assertEqual(len(matched("Rent", "Salary")), 3)
        self.assertEqual(matched("Rent", "date:2024-02"), [("2024-02-03", "Expenses:Rent")])

    def test_description_and_payee(self):
        self.assertEqual(len(matched("desc:rent")), 4)
        self.assertEqual(len(matched("payee:rent")), 0)
        self.assertEqual(len(matched("payee:^landlord$")), 4)
        self.assertEqual(len(matched("payee:bookshop")), 2)

    def test_amount(self):
        self.assertEqual(matched("amt:>1000"), [("2024-01-31", "Assets:Bank:Checking")])
        self.assertEqual(
            matched("amt:<=-1000"), [("2024-01-01", "Equity:Opening"), ("2024-01-31", "Income:Salary")]
        )
        self.assertEqual(matched("amt:=10"), [("2024-02-14", "Expenses:Food:Groceries")])
        self.assertEqual(matched("amt:10"), matched("amt:=10"))

    def test_tags(self):
        self.assertEqual(len(matched("tag:food")), 5)
        self.assertEqual(
            matched("tag:with=ann"),
            [("2024-01-20", "Expenses:Food:Restaurants"), ("2024-01-20", "Liabilities:Card")],
        )
        self.assertEqual(matched("tag:note"), [("2024-02-14", "Expenses:Food:Groceries")])
        self.assertEqual(len(matched("tag:gift")), 2)

    def test_status(self):
        self.assertEqual(len(matched("status:!")), 2)
        self.assertEqual(len(matched("status:cleared")), 13)
        self.assertEqual(len(matched("status:")), 0)

    def test_not(self):
        self.assertEqual(len(matched("not:Assets")), 9)
        self.assertEqual(matched("food", "not:tag:food"), [("2024-02-14", "Expenses:Food:Groceries")])
        self.assertEqual(
            matched("Expenses", "not:date:2024-01"),
            [("2024-02-03", "Expenses:Rent"), ("2024-02-14", "Expenses:Food:Groceries")],
        )

    def test_errors(self):
        for words in (["amt:>lots"], ["date:someday"], ["acct:("], ["status:maybe"]):
            with self.assertRaises(QueryError, msg=words):
                parse_query(words)

    def test_unknown_prefix_is_an_account_pattern(self):
        self.assertEqual(
            matched("Liabilities:Card"),
            [("2024-01-20", "Liabilities:Card"), ("2024-02-14", "Liabilities:Card")],
        )


if __name__ == "__main__":
    unittest.main()
