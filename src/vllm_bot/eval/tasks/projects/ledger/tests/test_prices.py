import unittest
from datetime import date
from decimal import Decimal

from ledger.errors import CommodityError
from ledger.money import Amount, MixedAmount
from ledger.prices import PriceDB


def db():
    prices = PriceDB()
    prices.add(date(2024, 1, 1), "USD", Amount(Decimal("0.90"), "EUR"))
    prices.add(date(2024, 3, 1), "USD", Amount(Decimal("0.95"), "EUR"))
    prices.add(date(2024, 2, 1), "EUR", Amount(Decimal("160"), "JPY"))
    return prices


class RateTest(unittest.TestCase):
    def test_latest_price_on_or_before_the_day(self):
        prices = db()
        self.assertEqual(prices.rate("USD", "EUR", date(2024, 2, 15)), Decimal("0.90"))
        self.assertEqual(prices.rate("USD", "EUR", date(2024, 3, 1)), Decimal("0.95"))
        self.assertEqual(prices.rate("USD", "EUR", date(2025, 1, 1)), Decimal("0.95"))
        self.assertIsNone(prices.rate("USD", "EUR", date(2023, 12, 31)))

    def test_inverse_and_same(self):
        prices = db()
        self.assertEqual(prices.rate("JPY", "EUR", date(2024, 2, 2)), Decimal(1) / Decimal(160))
        self.assertEqual(prices.rate("EUR", "EUR", date(2000, 1, 1)), Decimal(1))
        self.assertIsNone(prices.rate("USD", "JPY", date(2024, 3, 1)))

    def test_a_later_entry_for_the_same_day_wins(self):
        prices = db()
        prices.add(date(2024, 3, 1), "USD", Amount(Decimal("0.97"), "EUR"))
        self.assertEqual(prices.rate("USD", "EUR", date(2024, 3, 2)), Decimal("0.97"))
        self.assertEqual(len(prices), 3)

    def test_convert(self):
        prices = db()
        self.assertEqual(
            prices.convert(Amount(Decimal(100), "USD"), "EUR", date(2024, 3, 5)),
            Amount(Decimal("95.00"), "EUR"),
        )
        mixed = MixedAmount([Amount(Decimal(100), "USD"), Amount(Decimal(5), "EUR")])
        self.assertEqual(prices.convert_mixed(mixed, "EUR", date(2024, 1, 5)).format(), "95.00 EUR")
        with self.assertRaises(CommodityError):
            prices.convert(Amount(Decimal(1), "BTC"), "EUR", date(2024, 1, 5))
        with self.assertRaises(ValueError):
            prices.add(date(2024, 1, 1), "EUR", Amount(Decimal(1), "EUR"))


if __name__ == "__main__":
    unittest.main()
