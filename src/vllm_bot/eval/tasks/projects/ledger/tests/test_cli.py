import contextlib
import io
import tempfile
import unittest
from pathlib import Path

from ledger.cli import main

from tests.fixtures import HOUSEHOLD


class CliTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = Path(self.dir.name)
        self.journal = self.root / "household.journal"
        self.journal.write_text(HOUSEHOLD, encoding="utf-8")

    def tearDown(self):
        self.dir.cleanup()

    def run_cli(self, *args, journal=None):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                code = main(["-f", str(journal or self.journal), *args], out=out)
            except SystemExit as e:
                code = e.code
        return code, out.getvalue(), err.getvalue()

    def test_balance(self):
        code, out, _ = self.run_cli("balance", "Rent")
        self.assertEqual(code, 0)
        self.assertEqual(
            out.splitlines()[2:],
            ["Expenses  1,400.00 EUR", "  Rent    1,400.00 EUR", "total     1,400.00 EUR"],
        )

    def test_balance_options(self):
        code, out, _ = self.run_cli("balance", "Expenses", "--depth", "2", "--flat", "--convert", "EUR")
        self.assertEqual(code, 0)
        self.assertEqual(
            [line.split() for line in out.splitlines()[2:]],
            [
                ["Expenses:Food", "97.20", "EUR"],
                ["Expenses:Rent", "1,400.00", "EUR"],
                ["total", "1,497.20", "EUR"],
            ],
        )
        self.assertEqual(self.run_cli("balance", "--depth", "0")[0], 1)

    def test_register_and_monthly(self):
        code, out, _ = self.run_cli("register", "Restaurants")
        self.assertEqual((code, out.splitlines()[2].split()[0]), (0, "2024-01-20"))
        code, out, _ = self.run_cli("monthly", "Rent", "--average")
        self.assertEqual(
            out.splitlines()[2].split(),
            ["Expenses:Rent", "700.00", "EUR", "700.00", "EUR", "1,400.00", "EUR", "700.00", "EUR"],
        )

    def test_budget(self):
        rules = self.root / "budget.txt"
        rules.write_text("Expenses:Food  100 EUR\n")
        code, out, _ = self.run_cli("budget", str(rules))
        self.assertEqual(code, 0)
        self.assertEqual(out.splitlines()[0], "budget for 2024-02")
        code, out, _ = self.run_cli("budget", str(rules), "--period", "2024-01")
        self.assertEqual(out.splitlines()[3].split()[:4], ["Expenses:Food", "100.00", "EUR", "87.70"])

    def test_import(self):
        rules = self.root / "bank.rules"
        rules.write_text(
            "account = Assets:Bank:Checking\n"
            "date = 1\n"
            "description = 2\n"
            "amount = 3\n"
            "commodity = EUR\n"
            "if landlord = Expenses:Rent\n"
        )
        bank = self.root / "bank.csv"
        bank.write_text("2024-02-03,Landlord | rent,-700.00\n2024-02-20,Landlord | rent,-700.00\n")
        code, out, err = self.run_cli("import", str(bank), "--rules", str(rules), "--write")
        self.assertEqual(code, 0)
        self.assertIn("1 new of 2 transactions", err)
        self.assertTrue(out.startswith("2024-02-20 Landlord | rent\n"))
        code, out, err = self.run_cli("import", str(bank), "--rules", str(rules))
        self.assertIn("0 new of 2 transactions", err)
        self.assertEqual(self.run_cli("check")[1], "8 transactions, 8 accounts: ok\n")

    def test_export(self):
        code, out, _ = self.run_cli("export", "Salary", "--format", "json")
        self.assertEqual(code, 0)
        self.assertIn('"description": "Employer | salary"', out)

    def test_forecast(self):
        journal = self.root / "rent.journal"
        journal.write_text(
            "~ monthly from 2024-01-31  Landlord\n"
            "  Expenses:Rent  700 EUR\n"
            "  Assets:Bank\n"
            "\n"
            "2024-03-02 Shop\n"
            "  A  1 EUR\n"
            "  B\n"
        )
        code, out, err = self.run_cli("forecast", journal=journal)
        self.assertEqual(code, 0)
        self.assertTrue(out.startswith("2024-04-30 Landlord\n"), out)
        self.assertIn("1 transactions due in 2024-04", err)
        code, out, err = self.run_cli("forecast", "--period", "2024-Q1", journal=journal)
        self.assertEqual(
            [line[:10] for line in out.splitlines() if line[:1].isdigit()],
            ["2024-01-31", "2024-02-29", "2024-03-31"],
        )

    def test_check(self):
        self.assertEqual(self.run_cli("check", "--strict"), (0, "7 transactions, 8 accounts: ok\n", ""))
        loose = self.root / "loose.journal"
        loose.write_text("2024-01-01 A\n  Expenses:X  1 EUR\n  Assets:Y\n")
        code, _, err = self.run_cli("check", "--strict", journal=loose)
        self.assertEqual(code, 1)
        self.assertEqual(err, "ledger: error: undeclared accounts: Assets:Y, Expenses:X\n")

    def test_errors(self):
        broken = self.root / "broken.journal"
        broken.write_text("2024-01-01 A\n  X  1 EUR\n  Y  2 EUR\n")
        code, _, err = self.run_cli("balance", journal=broken)
        self.assertEqual(code, 1)
        self.assertEqual(err, f"ledger: error: {broken}:1: 2024-01-01 A: does not balance: off by 3.00 EUR\n")
        code, _, err = self.run_cli("balance", journal=self.root / "missing.journal")
        self.assertEqual(code, 1)
        self.assertIn("No such file", err)
        self.assertEqual(self.run_cli("balance", "amt:>x")[0], 1)
        self.assertEqual(self.run_cli("frobnicate")[0], 2)


if __name__ == "__main__":
    unittest.main()
