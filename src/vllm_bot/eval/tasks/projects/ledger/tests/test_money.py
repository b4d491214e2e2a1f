import unittest
from decimal import Decimal

from ledger.commodities import Commodities, Commodity
from ledger.errors import CommodityError
from ledger.money import Amount, MixedAmount, format_quantity, parse_amount


class ParseAmountTest(unittest.TestCase):
    def test_symbol_after_and_before(self):
        self.assertEqual(parse_amount("12.50 EUR"), Amount(Decimal("12.50"), "EUR"))
        self.assertEqual(parse_amount("EUR 12.50"), Amount(Decimal("12.50"), "EUR"))
        self.assertEqual(parse_amount("$3"), Amount(Decimal(3), "$"))

    def test_signs(self):
        self.assertEqual(parse_amount("-$1,000.00"), Amount(Decimal("-1000.00"), "$"))
        self.assertEqual(parse_amount("$-5"), Amount(Decimal(-5), "$"))
        self.assertEqual(parse_amount("-7 USD"), Amount(Decimal(-7), "USD"))

    def test_thousands_and_plain_numbers(self):
        self.assertEqual(parse_amount("1,234,567.5 JPY").quantity, Decimal("1234567.5"))
        self.assertEqual(parse_amount("42"), Amount(Decimal(42), ""))
        self.assertEqual(parse_amount(".5 BTC").quantity, Decimal("0.5"))

    def test_rejects_nonsense(self):
        for text in ("", "EUR", "12,34 EUR", "$5 USD", "--5", "1.2.3"):
            with self.assertRaises(ValueError, msg=text):
                parse_amount(text)


class AmountTest(unittest.TestCase):
    def test_arithmetic_needs_one_commodity(self):
        a, b = Amount(Decimal("1.5"), "EUR"), Amount(Decimal("2.25"), "EUR")
        self.assertEqual(a + b, Amount(Decimal("3.75"), "EUR"))
        self.assertEqual(a - b, Amount(Decimal("-0.75"), "EUR"))
        self.assertEqual(-a, Amount(Decimal("-1.5"), "EUR"))
        self.assertEqual(a * 3, Amount(Decimal("4.5"), "EUR"))
        with self.assertRaises(CommodityError):
            a + Amount(Decimal(1), "USD")

    def test_format_by_commodity(self):
        self.assertEqual(Amount(Decimal("1204.5"), "EUR").format(), "1204.50 EUR")
        self.assertEqual(Amount(Decimal("-3"), "$").format(), "-$3.00")
        self.assertEqual(Amount(Decimal("1200.4"), "¥").format(), "¥1200")
        self.assertEqual(Amount(Decimal("0.000123456"), "BTC").format(), "0.00012346 BTC")
        self.assertEqual(Amount(Decimal("2.5")).format(), "2.50")

    def test_format_with_declared_commodities(self):
        known = Commodities()
        known.declare(Commodity("EUR", 2, thousands=True))
        self.assertEqual(Amount(Decimal("-1234567.891"), "EUR").format(known), "-1,234,567.89 EUR")

    def test_rounding_is_half_up(self):
        self.assertEqual(Amount(Decimal("0.125"), "EUR").format(), "0.13 EUR")
        self.assertEqual(Amount(Decimal("-0.125"), "EUR").format(), "-0.13 EUR")
        self.assertEqual(Amount(Decimal("2.5"), "JPY").format(), "3 JPY")

    def test_is_zero_after_rounding(self):
        self.assertTrue(Amount(Decimal("0.004"), "EUR").is_zero())
        self.assertFalse(Amount(Decimal("0.005"), "EUR").is_zero())

    def test_format_quantity(self):
        self.assertEqual(format_quantity(Decimal("1234.5"), 2, thousands=True), "1,234.50")
        self.assertEqual(format_quantity(Decimal("-0.5"), 0), "-0")
        self.assertEqual(format_quantity(Decimal("7"), 3), "7.000")


class MixedAmountTest(unittest.TestCase):
    def test_sums_by_commodity(self):
        mixed = MixedAmount([Amount(Decimal(5), "EUR"), Amount(Decimal(2), "USD"), Amount(Decimal(1), "EUR")])
        self.assertEqual(mixed.get("EUR"), Decimal(6))
        self.assertEqual(mixed.commodities(), ["EUR", "USD"])
        self.assertEqual(mixed.format(), "6.00 EUR, 2.00 USD")

    def test_adding_leaves_both_sides_alone(self):
        first = MixedAmount([Amount(Decimal(1), "EUR")])
        second = first + Amount(Decimal(2), "EUR")
        third = second + MixedAmount([Amount(Decimal(3), "USD")])
        self.assertEqual(first.get("EUR"), Decimal(1))
        self.assertEqual(second.format(), "3.00 EUR")
        self.assertEqual(third.format(), "3.00 EUR, 3.00 USD")

    def test_zero_and_equality(self):
        empty = MixedAmount()
        self.assertTrue(empty.is_zero())
        self.assertEqual(empty.format(), "0")
        back = MixedAmount([Amount(Decimal(4), "EUR")]) - Amount(Decimal(4), "EUR")
        self.assertTrue(back.is_zero())
        self.assertEqual(back, MixedAmount())
        self.assertEqual(MixedAmount([Amount(Decimal(2), "EUR")]), Amount(Decimal(2), "EUR"))

    def test_divide(self):
        mixed = MixedAmount([Amount(Decimal(10), "EUR"), Amount(Decimal(3), "USD")]) / 4
        self.assertEqual(mixed.get("EUR"), Decimal("2.5"))
        self.assertEqual(mixed.get("USD"), Decimal("0.75"))
        self.assertEqual((MixedAmount() / 3).format(), "0")
        with self.assertRaises(ValueError):
            mixed / 0

    def test_single(self):
        self.assertEqual(MixedAmount([Amount(Decimal(2), "EUR")]).single(), Amount(Decimal(2), "EUR"))
        with self.assertRaises(CommodityError):
            MixedAmount([Amount(Decimal(2), "EUR"), Amount(Decimal(1), "USD")]).single()


if __name__ == "__main__":
    unittest.main()
