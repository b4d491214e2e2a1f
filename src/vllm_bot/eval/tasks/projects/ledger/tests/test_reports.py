import unittest
from datetime import date

from ledger.ledger import Ledger
from ledger.query import parse_query
from ledger.reports import (
    balance_report,
    monthly_report,
    register_report,
    render_balance,
    render_monthly,
    render_register,
)

from tests.fixtures import household


def shown(rows, ledger):
    return [(row.label, row.amount.format(ledger.commodities)) for row in rows]


class BalanceReportTest(unittest.TestCase):
    def test_tree_with_subtotals(self):
        ledger = household()
        rows, total = balance_report(ledger, parse_query(["Expenses"]))
        self.assertEqual(
            shown(rows, ledger),
            [
                ("Expenses", "1,487.70 EUR, 10.00 USD"),
                ("  Food", "87.70 EUR, 10.00 USD"),
                ("    Groceries", "55.20 EUR, 10.00 USD"),
                ("    Restaurants", "32.50 EUR"),
                ("  Rent", "1,400.00 EUR"),
            ],
        )
        self.assertEqual(total.format(ledger.commodities), "1,487.70 EUR, 10.00 USD")

    def test_flat_and_depth(self):
        ledger = household()
        rows, _ = balance_report(ledger, parse_query(["Expenses"]), depth=2, flat=True)
        self.assertEqual(
            shown(rows, ledger),
            [("Expenses:Food", "87.70 EUR, 10.00 USD"), ("Expenses:Rent", "1,400.00 EUR")],
        )
        rows, _ = balance_report(ledger, parse_query(["Expenses"]), depth=1)
        self.assertEqual(shown(rows, ledger), [("Expenses", "1,487.70 EUR, 10.00 USD")])

    def test_zero_balances_are_left_out(self):
        ledger = Ledger.from_text(
            "2024-01-01 A\n"
            "  X:Y  5 EUR\n"
            "  Z\n"
            "\n"
            "2024-01-02 B\n"
            "  X:Y  -5 EUR\n"
            "  Z\n"
            "\n"
            "2024-01-03 C\n"
            "  Q  1 EUR\n"
            "  Z\n"
        )
        rows, _ = balance_report(ledger)
        self.assertEqual([r.account for r in rows], ["Q", "Z"])

    def test_converted(self):
        ledger = household()
        rows, total = balance_report(ledger, parse_query(["Food"]), flat=True, convert="EUR")
        self.assertEqual(
            shown(rows, ledger),
            [("Expenses:Food:Groceries", "64.70 EUR"), ("Expenses:Food:Restaurants", "32.50 EUR")],
        )
        self.assertEqual(total.format(ledger.commodities), "97.20 EUR")

    def test_render(self):
        ledger = household()
        rows, total = balance_report(ledger, parse_query(["Liabilities"]))
        self.assertEqual(
            render_balance(rows, total, ledger.commodities),
            "account         balance\n"
            "-----------  ----------\n"
            "Liabilities  -32.50 EUR\n"
            "             -10.00 USD\n"
            "  Card       -32.50 EUR\n"
            "             -10.00 USD\n"
            "total        -32.50 EUR\n"
            "             -10.00 USD\n",
        )


class RegisterReportTest(unittest.TestCase):
    def test_running_total(self):
        ledger = household()
        rows = register_report(ledger, parse_query(["Expenses"]))
        self.assertEqual(
            [r.date for r in rows],
            [date(2024, 1, 3), date(2024, 1, 10), date(2024, 1, 20), date(2024, 2, 3), date(2024, 2, 14)],
        )
        self.assertEqual(
            [r.running.format(ledger.commodities) for r in rows],
            ["700.00 EUR", "755.20 EUR", "787.70 EUR", "1,487.70 EUR", "1,487.70 EUR, 10.00 USD"],
        )

    def test_render_cuts_long_descriptions(self):
        ledger = Ledger.from_text(
            "2024-01-01 A description far longer than thirty characters\n  X  1 EUR\n  Y\n"
        )
        lines = render_register(register_report(ledger), ledger.commodities).splitlines()
        self.assertEqual(lines[2], "2024-01-01  A description far longer than…  X         1.00 EUR  1.00 EUR")
        self.assertEqual(lines[3], "2024-01-01  A description far longer than…  Y        -1.00 EUR         0")


class MonthlyReportTest(unittest.TestCase):
    def test_months_and_totals(self):
        ledger = household()
        report = monthly_report(ledger, parse_query(["Expenses", "not:Groceries"]))
        self.assertEqual(report.months, ["2024-01", "2024-02"])
        self.assertEqual([r.account for r in report.rows], ["Expenses:Food:Restaurants", "Expenses:Rent"])
        self.assertEqual(
            [m.format(ledger.commodities) for m in report.rows[1].months], ["700.00 EUR", "700.00 EUR"]
        )
        self.assertEqual(report.totals.total.format(ledger.commodities), "1,432.50 EUR")
        self.assertIsNone(report.totals.average)

    def test_empty_months_in_between(self):
        ledger = Ledger.from_text("2024-01-15 A\n  X  1 EUR\n  Y\n\n2024-04-02 B\n  X  2 EUR\n  Y\n")
        report = monthly_report(ledger, parse_query(["X"]))
        self.assertEqual(report.months, ["2024-01", "2024-02", "2024-03", "2024-04"])
        self.assertEqual([m.format() for m in report.rows[0].months], ["1.00 EUR", "0", "0", "2.00 EUR"])

    def test_average(self):
        ledger = household()
        report = monthly_report(ledger, parse_query(["Rent", "Restaurants"]), average=True)
        self.assertEqual(report.rows[1].average.format(ledger.commodities), "700.00 EUR")
        self.assertEqual(report.rows[0].average.format(ledger.commodities), "16.25 EUR")
        text = render_monthly(report, ledger.commodities)
        self.assertEqual(text.splitlines()[0].split(), ["account", "2024-01", "2024-02", "total", "average"])
        self.assertEqual(
            text.splitlines()[-1].split(),
            ["total", "732.50", "EUR", "700.00", "EUR", "1,432.50", "EUR", "716.25", "EUR"],
        )

    def test_nothing_matches(self):
        report = monthly_report(household(), parse_query(["Nowhere"]))
        self.assertEqual((report.months, report.rows), ([], []))


if __name__ == "__main__":
    unittest.main()
