import unittest
from datetime import date
from decimal import Decimal

from ledger.errors import BalanceError
from ledger.journal import Posting, Transaction, parse_tags
from ledger.money import Amount


def eur(value):
    return Amount(Decimal(value), "EUR")


class BalanceTest(unittest.TestCase):
    def test_a_left_out_amount_is_filled_in(self):
        tx = Transaction(
            date(2024, 1, 1), "shop", [Posting("Expenses:Food", eur("12.30")), Posting("Assets:Cash")]
        )
        tx.balance()
        self.assertEqual(tx.postings[1].amount, eur("-12.30"))
        self.assertTrue(tx.postings[1].inferred)
        self.assertTrue(tx.total().is_zero())

    def test_several_postings_fill_in_their_sum(self):
        tx = Transaction(
            date(2024, 1, 1),
            "split",
            [Posting("A", eur("10")), Posting("B", eur("-2.50")), Posting("C")],
        )
        tx.balance()
        self.assertEqual(tx.postings[2].amount, eur("-7.50"))

    def test_unbalanced(self):
        tx = Transaction(date(2024, 1, 1), "oops", [Posting("A", eur("10")), Posting("B", eur("-9"))])
        with self.assertRaisesRegex(BalanceError, "off by 1.00 EUR"):
            tx.balance()

    def test_balanced_after_rounding(self):
        tx = Transaction(
            date(2024, 1, 1), "thirds", [Posting("A", eur("0.333")), Posting("B", eur("-0.334"))]
        )
        tx.balance()

    def test_problems(self):
        one = Transaction(date(2024, 1, 1), "one", [Posting("A", eur("1"))])
        with self.assertRaisesRegex(BalanceError, "at least two"):
            one.balance()
        two_missing = Transaction(
            date(2024, 1, 1), "two", [Posting("A", eur("1")), Posting("B"), Posting("C")]
        )
        with self.assertRaisesRegex(BalanceError, "only one"):
            two_missing.balance()
        mixed = Transaction(
            date(2024, 1, 1),
            "fx",
            [Posting("A", eur("1")), Posting("B", Amount(Decimal(1), "USD")), Posting("C")],
        )
        with self.assertRaisesRegex(BalanceError, "2 commodities"):
            mixed.balance()


class DescriptionTest(unittest.TestCase):
    def test_payee_and_note(self):
        tx = Transaction(date(2024, 1, 1), "Grocer | weekly shop")
        self.assertEqual((tx.payee, tx.note), ("Grocer", "weekly shop"))
        plain = Transaction(date(2024, 1, 1), "Cash withdrawal")
        self.assertEqual((plain.payee, plain.note), ("Cash withdrawal", ""))

    def test_tags(self):
        self.assertEqual(parse_tags("food:, trip:paris, Note: x"), {"food": "", "trip": "paris", "note": "x"})
        self.assertEqual(parse_tags("just words"), {})
        tx = Transaction(date(2024, 1, 1), "x", comment="trip:rome, food:")
        posting = Posting("A", eur("1"), comment="trip:milan")
        self.assertEqual(tx.posting_tags(posting), {"trip": "milan", "food": ""})


class FingerprintTest(unittest.TestCase):
    def test_same_transaction_written_differently(self):
        a = Transaction(date(2024, 1, 2), "Grocer  shop", [Posting("A", eur("5")), Posting("B", eur("-5"))])
        b = Transaction(date(2024, 1, 2), "grocer shop", [Posting("B", eur("-5.00")), Posting("A", eur("5"))])
        self.assertEqual(a.fingerprint(), b.fingerprint())

    def test_different_transactions(self):
        a = Transaction(date(2024, 1, 2), "shop", [Posting("A", eur("5")), Posting("B", eur("-5"))])
        later = Transaction(date(2024, 1, 3), "shop", [Posting("A", eur("5")), Posting("B", eur("-5"))])
        more = Transaction(date(2024, 1, 2), "shop", [Posting("A", eur("6")), Posting("B", eur("-6"))])
        elsewhere = Transaction(date(2024, 1, 2), "shop", [Posting("C", eur("5")), Posting("B", eur("-5"))])
        self.assertEqual(
            len({a.fingerprint(), later.fingerprint(), more.fingerprint(), elsewhere.fingerprint()}), 4
        )


if __name__ == "__main__":
    unittest.main()
