import unittest

from ledger.formatting import fit, indent, table


class FitTest(unittest.TestCase):
    def test_fit(self):
        self.assertEqual(fit("groceries", 20), "groceries")
        self.assertEqual(fit("groceries", 5), "groc…")
        self.assertEqual(fit("abc", 3), "abc")
        self.assertEqual(fit("abc", 0), "")

    def test_indent(self):
        self.assertEqual(indent("Food", 1), "Food")
        self.assertEqual(indent("Food", 3), "    Food")


class TableTest(unittest.TestCase):
    def test_alignment(self):
        text = table(["name", "amount"], [["rent", "700.00"], ["groceries", "5.20"]], right=[1])
        self.assertEqual(
            text,
            "name       amount\n---------  ------\nrent       700.00\ngroceries    5.20\n",
        )

    def test_cells_of_several_lines(self):
        text = table(["a", "b"], [["x", "1\n22"], ["y", "3"]], right=[1])
        self.assertEqual(text.splitlines(), ["a   b", "-  --", "x   1", "   22", "y   3"])

    def test_limits_cut_long_cells(self):
        text = table(["description"], [["a very long description indeed"]], limits={0: 10})
        self.assertEqual(text.splitlines()[2], "a very lo…")
        self.assertEqual(text.splitlines()[1], "-" * 10)


if __name__ == "__main__":
    unittest.main()
