import unittest
from decimal import Decimal

from ledger.commodities import Commodities, Commodity


class CommoditiesTest(unittest.TestCase):
    def test_defaults(self):
        known = Commodities()
        self.assertEqual(known.precision("EUR"), 2)
        self.assertEqual(known.precision("JPY"), 0)
        self.assertEqual(known.precision("BTC"), 8)
        self.assertTrue(known.get("$").prefix)
        self.assertEqual(known.get("XYZ"), Commodity("XYZ"))

    def test_declare_from_an_example(self):
        known = Commodities()
        self.assertEqual(known.declare_example("1,000.000 CHF"), Commodity("CHF", 3, thousands=True))
        self.assertEqual(known.declare_example("$1000"), Commodity("$", 0, prefix=True))
        self.assertEqual(known.declare_example("ACME"), Commodity("ACME"))
        self.assertEqual(known.precision("CHF"), 3)
        with self.assertRaises(ValueError):
            known.declare_example("1.00")

    def test_quantize(self):
        known = Commodities()
        self.assertEqual(known.quantize("EUR", Decimal("2.345")), Decimal("2.35"))
        self.assertEqual(known.quantize("JPY", Decimal("99.5")), Decimal("100"))
        self.assertEqual(known.quantize("BTC", Decimal("1")), Decimal("1.00000000"))


if __name__ == "__main__":
    unittest.main()
