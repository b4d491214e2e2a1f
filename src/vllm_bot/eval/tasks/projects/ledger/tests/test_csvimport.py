import unittest
from datetime import date
from decimal import Decimal

from ledger.csvimport import import_csv, new_only, parse_number, parse_rules
from ledger.errors import ParseError
from ledger.money import Amount

from tests.fixtures import household

RULES = """\
skip = 1
date = 1
date-format = %d/%m/%Y
description = 2
amount = 3
commodity = EUR
account = Assets:Bank:Checking
if GROCER|MARKET = Expenses:Food:Groceries
if ^LANDLORD = Expenses:Rent
income = Income:Other
"""

CSV = """\
Date,Description,Amount
03/01/2024,LANDLORD   rent,-700.00
10/01/2024,"GROCER, weekly",-45.20
11/01/2024,Refund from shop,"1,012.50"
12/01/2024,Coffee,(3.10)
"""


class RulesTest(unittest.TestCase):
    def test_parse(self):
        rules = parse_rules(RULES)
        self.assertEqual(rules.columns, {"date": 1, "description": 2, "amount": 3})
        self.assertEqual(rules.account_for("Farmers MARKET", Decimal(-1)), "Expenses:Food:Groceries")
        self.assertEqual(rules.account_for("Coffee", Decimal(-1)), "Expenses:Unsorted")
        self.assertEqual(rules.account_for("Refund", Decimal(1)), "Income:Other")

    def test_errors(self):
        for text in (
            "date = 1\n",
            "account = A\ndate = 1\ndescription = 2\n",
            "wat = 3\n",
            "date = 0\n",
            "if ( = A\n",
        ):
            with self.assertRaises(ParseError, msg=text):
                parse_rules(text)

    def test_numbers(self):
        self.assertEqual(parse_number("1,234.56"), Decimal("1234.56"))
        self.assertEqual(parse_number("(12.00)"), Decimal("-12.00"))
        self.assertEqual(parse_number(" "), Decimal(0))


class ImportTest(unittest.TestCase):
    def test_rows_become_transactions(self):
        found = import_csv(CSV, parse_rules(RULES))
        self.assertEqual(
            [tx.date for tx in found],
            [date(2024, 1, 3), date(2024, 1, 10), date(2024, 1, 11), date(2024, 1, 12)],
        )
        rent = found[0]
        self.assertEqual(rent.description, "LANDLORD rent")
        self.assertEqual(
            [(p.account, p.amount) for p in rent.postings],
            [
                ("Expenses:Rent", Amount(Decimal("700.00"), "EUR")),
                ("Assets:Bank:Checking", Amount(Decimal("-700.00"), "EUR")),
            ],
        )
        self.assertEqual(found[2].postings[0].account, "Income:Other")
        self.assertEqual(found[2].postings[1].amount, Amount(Decimal("1012.50"), "EUR"))
        self.assertEqual(found[3].postings[0].amount, Amount(Decimal("3.10"), "EUR"))

    def test_debit_and_credit_columns(self):
        rules = parse_rules(
            "account = Assets:Bank\ndate = 1\ndescription = 2\ndebit = 3\ncredit = 4\ncommodity = USD\n"
        )
        found = import_csv("2024-02-01;Shop;12.00;\n2024-02-02;Pay;;100\n".replace(";", ","), rules)
        self.assertEqual(
            [tx.postings[1].amount.quantity for tx in found], [Decimal("-12.00"), Decimal("100")]
        )

    def test_a_bad_row_names_its_line(self):
        with self.assertRaises(ParseError) as caught:
            import_csv(CSV + "31/02/2024,Bad day,1\n", parse_rules(RULES), "bank.csv")
        self.assertEqual(caught.exception.line, 6)

    def test_only_new_transactions(self):
        existing = import_csv(CSV, parse_rules(RULES))[:2]
        again = import_csv(CSV, parse_rules(RULES))
        self.assertEqual([tx.description for tx in new_only(again, existing)], ["Refund from shop", "Coffee"])
        twice = again + again[:1]
        self.assertEqual(len(new_only(twice, existing)), 3)

    def test_transactions_written_by_hand_count_as_the_same(self):
        rules = parse_rules(
            "account = Assets:Bank:Checking\n"
            "date = 1\n"
            "description = 2\n"
            "amount = 3\n"
            "commodity = EUR\n"
            "if landlord = Expenses:Rent\n"
        )
        imported = import_csv("2024-01-03,Landlord | rent,-700\n2024-01-04,Landlord | rent,-700\n", rules)
        self.assertEqual(
            [str(tx.date) for tx in new_only(imported, household().transactions)], ["2024-01-04"]
        )


if __name__ == "__main__":
    unittest.main()
