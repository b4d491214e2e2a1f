import unittest
from datetime import date
from decimal import Decimal

from ledger.errors import ParseError
from ledger.money import Amount
from ledger.parser import parse_journal, render_transaction


class ParseTest(unittest.TestCase):
    def test_a_transaction(self):
        journal = parse_journal(
            "2024-01-05 * (42) Grocer | weekly shop  ; food:\n"
            "    Expenses:Food:Groceries    42.10 EUR  ; receipt:yes\n"
            "    Assets:Bank\n"
        )
        [tx] = journal.transactions
        self.assertEqual((tx.date, tx.status, tx.code), (date(2024, 1, 5), "*", "42"))
        self.assertEqual(tx.description, "Grocer | weekly shop")
        self.assertEqual(tx.tags, {"food": ""})
        self.assertEqual(tx.postings[0].amount, Amount(Decimal("42.10"), "EUR"))
        self.assertEqual(tx.postings[0].tags, {"receipt": "yes"})
        self.assertEqual(tx.postings[1].amount, Amount(Decimal("-42.10"), "EUR"))
        self.assertEqual(tx.line, 1)

    def test_account_names_with_spaces_and_tabs(self):
        journal = parse_journal(
            "2024-01-05 Shop\n  Expenses:Home and Garden\t3 EUR\n  Assets:Petty Cash  -3 EUR\n"
        )
        self.assertEqual(
            [p.account for p in journal.transactions[0].postings],
            ["Expenses:Home and Garden", "Assets:Petty Cash"],
        )

    def test_comment_lines(self):
        journal = parse_journal(
            "; a comment\n"
            "# another\n"
            "2024-01-05 Shop\n"
            "    ; trip:rome\n"
            "    A  1 EUR\n"
            "    ; extra:1\n"
            "    B\n"
            "\n"
            "2024-01-06 Two\n"
            "  A  2 EUR\n"
            "  B\n"
        )
        first, second = journal.transactions
        self.assertEqual(first.tags, {"trip": "rome"})
        self.assertEqual(first.postings[0].tags, {"extra": "1"})
        self.assertEqual(second.description, "Two")

    def test_directives(self):
        journal = parse_journal(
            "account Assets:Bank  ; main\ncommodity 1,000.0 EUR\nP 2024-01-01 USD 0.9 EUR\n"
        )
        self.assertEqual(journal.declared, ["Assets:Bank"])
        self.assertEqual(journal.commodities.precision("EUR"), 1)
        self.assertEqual(journal.prices.rate("USD", "EUR", date(2024, 2, 1)), Decimal("0.9"))

    def test_errors_name_the_line(self):
        cases = {
            "2024-01-05 Shop\n  A  1 EUR\n  B  1 EUR\n": 1,
            "\n\n2024-01-05 Shop\n  A  1 EUR\n  B  -1 EUR\n\n2024-02-30 Later\n  A  1 EUR\n  B\n": 7,
            "2024-01-05 Shop\n  A  1 EUR\n  B  lots\n": 3,
            "   A  1 EUR\n": 1,
            "hello\n": 1,
            "\nP 2024-01-01 USD\n": 2,
            "2024-01-05 Shop\n  A  1 EUR\n  B\n\n2024-01-06 Again\n  A  1 EUR\n": 5,
        }
        for text, line in cases.items():
            with self.assertRaises(ParseError, msg=text) as caught:
                parse_journal(text, "j.journal")
            self.assertEqual(caught.exception.line, line, text)
            self.assertTrue(str(caught.exception).startswith(f"j.journal:{line}: "), str(caught.exception))

    def test_render_round_trip(self):
        text = (
            "2024-01-05 * (7) Grocer | shop  ; food:\n    Expenses:Food  12.00 EUR  ; a:b\n    Assets:Bank\n"
        )
        [tx] = parse_journal(text).transactions
        rendered = render_transaction(tx)
        self.assertTrue(rendered.startswith("2024-01-05 * (7) Grocer | shop  ; food:\n"))
        [again] = parse_journal(rendered).transactions
        self.assertEqual(again.fingerprint(), tx.fingerprint())
        self.assertEqual(again.postings[0].comment, "a:b")


if __name__ == "__main__":
    unittest.main()
