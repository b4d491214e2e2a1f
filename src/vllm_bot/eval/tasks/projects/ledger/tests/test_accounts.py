import unittest
from decimal import Decimal

from ledger import accounts
from ledger.accounts import AccountTree
from ledger.money import Amount, MixedAmount


def eur(value):
    return MixedAmount([Amount(Decimal(value), "EUR")])


class NamesTest(unittest.TestCase):
    def test_parts(self):
        name = "Assets:Bank:Checking"
        self.assertEqual(accounts.depth(name), 3)
        self.assertEqual(accounts.parent(name), "Assets:Bank")
        self.assertIsNone(accounts.parent("Assets"))
        self.assertEqual(accounts.ancestors(name), ["Assets", "Assets:Bank"])
        self.assertEqual(accounts.ancestors("Assets"), [])
        self.assertEqual(accounts.leaf(name), "Checking")
        self.assertEqual(accounts.truncate(name, 2), "Assets:Bank")
        self.assertEqual(accounts.truncate(name, 5), name)

    def test_is_under(self):
        self.assertTrue(accounts.is_under("Expenses:Food:Groceries", "Expenses:Food"))
        self.assertTrue(accounts.is_under("Expenses:Food", "Expenses:Food"))
        self.assertFalse(accounts.is_under("Expenses:Foodstuff", "Expenses:Food"))

    def test_types(self):
        self.assertEqual(accounts.account_type("Expenses:Food"), "expense")
        self.assertEqual(accounts.account_type("revenue:Sales"), "income")
        self.assertIsNone(accounts.account_type("Misc"))

    def test_validate(self):
        self.assertEqual(accounts.validate("Assets:Bank"), "Assets:Bank")
        for bad in ("", " Assets", "Assets::Bank", "Assets  Bank", "Assets:"):
            with self.assertRaises(ValueError, msg=bad):
                accounts.validate(bad)


class TreeTest(unittest.TestCase):
    def test_totals_include_sub_accounts(self):
        tree = AccountTree(
            {
                "Expenses:Food:Groceries": eur(10),
                "Expenses:Food": eur(1),
                "Expenses:Rent": eur(100),
                "Assets:Bank": eur(-111),
            }
        )
        self.assertEqual(tree.find("Expenses").total, eur(111))
        self.assertEqual(tree.find("Expenses:Food").total, eur(11))
        self.assertEqual(tree.find("Expenses:Food").own, eur(1))
        self.assertTrue(tree.total.is_zero())
        self.assertIsNone(tree.find("Expenses:Travel"))

    def test_walk_is_sorted_and_limited(self):
        tree = AccountTree({"B:Y": eur(1), "B:X:Z": eur(2), "A": eur(3)})
        self.assertEqual(
            [(n.name, level) for n, level in tree.walk()],
            [("A", 1), ("B", 1), ("B:X", 2), ("B:X:Z", 3), ("B:Y", 2)],
        )
        self.assertEqual([n.name for n, _ in tree.walk(limit=1)], ["A", "B"])


if __name__ == "__main__":
    unittest.main()
