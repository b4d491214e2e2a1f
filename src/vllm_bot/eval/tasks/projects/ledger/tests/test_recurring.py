import unittest
from datetime import date

from ledger.dates import parse_period
from ledger.errors import ParseError
from ledger.ledger import Ledger
from ledger.recurring import forecast

JOURNAL = """\
~ monthly from 2024-01-31  Landlord | rent
    Expenses:Rent        700 EUR
    Assets:Bank

~ weekly from 2024-01-01 to 2024-01-20  Cleaner
    Expenses:Home         30 EUR
    Assets:Cash

~ quarterly from 2023-11-15  Insurance
    Expenses:Insurance    90 EUR
    Assets:Bank

2024-01-05 Shop
    Expenses:Food         10 EUR
    Assets:Cash
"""


class RecurringTest(unittest.TestCase):
    def setUp(self):
        self.ledger = Ledger.from_text(JOURNAL)

    def test_parsed_apart_from_transactions(self):
        self.assertEqual(len(self.ledger.transactions), 1)
        self.assertEqual([r.every for r in self.ledger.recurring], ["monthly", "weekly", "quarterly"])
        rent = self.ledger.recurring[0]
        self.assertEqual(rent.template.postings[1].amount.format(), "-700.00 EUR")

    def test_month_ends_come_back(self):
        rent = self.ledger.recurring[0]
        days = rent.dates(parse_period("2024-01-01..2024-06-01"))
        self.assertEqual(
            days,
            [date(2024, 1, 31), date(2024, 2, 29), date(2024, 3, 31), date(2024, 4, 30), date(2024, 5, 31)],
        )

    def test_an_end_date_stops_it(self):
        cleaner = self.ledger.recurring[1]
        self.assertEqual(
            cleaner.dates(parse_period("2024")), [date(2024, 1, 1), date(2024, 1, 8), date(2024, 1, 15)]
        )

    def test_forecast(self):
        due = forecast(self.ledger.recurring, parse_period("2024-02"))
        self.assertEqual(
            [(str(tx.date), tx.description) for tx in due],
            [("2024-02-15", "Insurance"), ("2024-02-29", "Landlord | rent")],
        )
        self.assertEqual(self.ledger.recurring[0].template.date, date(2024, 1, 31))

    def test_errors(self):
        for text in (
            "~ fortnightly from 2024-01-01  X\n  A  1 EUR\n  B\n",
            "~ monthly  X\n  A  1 EUR\n  B\n",
            "~ monthly from 2024-01-01  X\n  A  1 EUR\n  B  1 EUR\n",
        ):
            with self.assertRaises(ParseError, msg=text) as caught:
                Ledger.from_text(text)
            self.assertEqual(caught.exception.line, 1)


if __name__ == "__main__":
    unittest.main()
