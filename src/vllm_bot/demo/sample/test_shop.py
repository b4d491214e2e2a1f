"""Run with `python3 -m unittest -v` (no pytest needed)."""

import unittest

from shop import apply_discount, cart_total, line_total


class ShopTest(unittest.TestCase):
    def test_line_total(self) -> None:
        self.assertEqual(line_total(250, 4), 1000)

    def test_cart_without_discount(self) -> None:
        self.assertEqual(cart_total([(250, 4), (199, 1)]), 1199)

    def test_ten_percent_discount(self) -> None:
        self.assertEqual(apply_discount(1000, 10), 900)

    def test_discount_keeps_whole_cents(self) -> None:
        self.assertEqual(cart_total([(999, 1)], discount_percent=15), 850)


if __name__ == "__main__":
    unittest.main()
