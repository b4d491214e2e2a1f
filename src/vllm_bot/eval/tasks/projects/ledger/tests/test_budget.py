import unittest
from decimal import Decimal

from ledger.budget import BudgetRule, allowed, budget_report, parse_budget, render_budget
from ledger.dates import parse_period
from ledger.errors import ParseError
from ledger.money import Amount

from tests.fixtures import household

RULES = """\
# what we may spend
Expenses:Food     100 EUR
Expenses:Rent     2,100 EUR   quarterly
Expenses:Travel   1200 EUR    yearly  ; holidays
"""


class ParseBudgetTest(unittest.TestCase):
    def test_rules(self):
        rules = parse_budget(RULES)
        self.assertEqual(
            rules,
            [
                BudgetRule("Expenses:Food", Amount(Decimal(100), "EUR"), "monthly"),
                BudgetRule("Expenses:Rent", Amount(Decimal(2100), "EUR"), "quarterly"),
                BudgetRule("Expenses:Travel", Amount(Decimal(1200), "EUR"), "yearly"),
            ],
        )

    def test_errors_name_the_line(self):
        for text, line in (
            ("Expenses:Food\n", 1),
            ("\nExpenses:Food  100 EUR  weekly\n", 2),
            ("Expenses:Food  lots\n", 1),
        ):
            with self.assertRaises(ParseError) as caught:
                parse_budget(text, "budget.txt")
            self.assertEqual(caught.exception.line, line, text)


class AllowedTest(unittest.TestCase):
    def test_share_of_the_rule_period(self):
        monthly = BudgetRule("E", Amount(Decimal(100), "EUR"))
        quarterly = BudgetRule("E", Amount(Decimal(300), "EUR"), "quarterly")
        yearly = BudgetRule("E", Amount(Decimal(1200), "EUR"), "yearly")
        self.assertEqual(
            allowed(monthly, parse_period("2024-Q1")).rounded(), Amount(Decimal("300.00"), "EUR")
        )
        self.assertEqual(
            allowed(quarterly, parse_period("2024-02")).rounded(), Amount(Decimal("100.00"), "EUR")
        )
        self.assertEqual(allowed(yearly, parse_period("2024")).rounded(), Amount(Decimal("1200.00"), "EUR"))
        half = parse_period("2024-04-01..2024-04-16")
        self.assertEqual(allowed(monthly, half).rounded(), Amount(Decimal("50.00"), "EUR"))


class BudgetReportTest(unittest.TestCase):
    def test_january(self):
        ledger = household()
        lines = budget_report(ledger, parse_budget(RULES), parse_period("2024-01"))
        self.assertEqual(
            [(line.account, line.actual.format(), line.budget.rounded().format()) for line in lines],
            [
                ("Expenses:Food", "87.70 EUR", "100.00 EUR"),
                ("Expenses:Rent", "700.00 EUR", "700.00 EUR"),
                ("Expenses:Travel", "0.00 EUR", "100.00 EUR"),
            ],
        )
        self.assertEqual(round(lines[0].used, 1), Decimal("87.7"))

    def test_other_commodities_are_converted(self):
        ledger = household()
        [food] = budget_report(ledger, parse_budget("Expenses:Food  100 EUR\n"), parse_period("2024-02"))
        self.assertEqual(food.actual.rounded(), Amount(Decimal("9.50"), "EUR"))

    def test_render(self):
        ledger = household()
        text = render_budget(budget_report(ledger, parse_budget(RULES), parse_period("2024-Q1")), ledger)
        self.assertEqual(
            text.splitlines()[2].split(),
            ["Expenses:Food", "300.00", "EUR", "97.20", "EUR", "32%", "202.80", "EUR"],
        )
        self.assertEqual(
            text.splitlines()[4].split(),
            ["Expenses:Travel", "300.00", "EUR", "0.00", "EUR", "0%", "300.00", "EUR"],
        )


if __name__ == "__main__":
    unittest.main()
