import unittest
from datetime import date

from ledger.ledger import Ledger
from ledger.query import parse_query

from tests.fixtures import household


class LedgerTest(unittest.TestCase):
    def test_date_order_is_stable(self):
        ledger = Ledger.from_text(
            "2024-02-01 B\n"
            "  X  1 EUR\n"
            "  Y\n"
            "\n"
            "2024-01-01 A\n"
            "  X  1 EUR\n"
            "  Y\n"
            "\n"
            "2024-02-01 C\n"
            "  X  1 EUR\n"
            "  Y\n"
        )
        self.assertEqual([tx.description for tx in ledger.transactions], ["A", "B", "C"])
        self.assertEqual((ledger.first_date(), ledger.last_date()), (date(2024, 1, 1), date(2024, 2, 1)))

    def test_balances(self):
        ledger = household()
        balances = ledger.balances()
        self.assertEqual(balances["Assets:Bank:Checking"].format(ledger.commodities), "1,554.80 EUR")
        self.assertEqual(balances["Liabilities:Card"].format(), "-32.50 EUR, -10.00 USD")
        self.assertEqual(balances["Expenses:Food:Groceries"].format(), "55.20 EUR, 10.00 USD")

    def test_balances_of_a_query(self):
        balances = household().balances(parse_query(["date:2024-02"]))
        self.assertEqual(
            sorted(balances),
            ["Assets:Bank:Checking", "Expenses:Food:Groceries", "Expenses:Rent", "Liabilities:Card"],
        )

    def test_converted_balances_use_the_last_days_prices(self):
        balances = household().balances(convert="EUR")
        self.assertEqual(balances["Expenses:Food:Groceries"].format(), "64.70 EUR")
        self.assertEqual(balances["Liabilities:Card"].format(), "-42.00 EUR")
        early = household().balances(convert="EUR", on=date(2024, 1, 15))
        self.assertEqual(early["Expenses:Food:Groceries"].format(), "64.20 EUR")

    def test_accounts(self):
        ledger = Ledger.from_text(
            "account Assets:Unused\n\n2024-01-01 A\n  Expenses:X  1 EUR\n  Assets:Cash\n"
        )
        self.assertEqual(ledger.accounts(), ["Assets:Cash", "Assets:Unused", "Expenses:X"])
        self.assertEqual(ledger.undeclared(), ["Assets:Cash", "Expenses:X"])
        self.assertEqual(household().undeclared(), [])


if __name__ == "__main__":
    unittest.main()
