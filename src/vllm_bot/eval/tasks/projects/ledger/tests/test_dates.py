import unittest
from datetime import date

from ledger.dates import Period, add_months, days_in_month, parse_date, parse_period, span


class ParseDateTest(unittest.TestCase):
    def test_formats(self):
        self.assertEqual(parse_date("2024-03-05"), date(2024, 3, 5))
        self.assertEqual(parse_date("2024/3/5"), date(2024, 3, 5))
        self.assertEqual(parse_date("2024.03.05"), date(2024, 3, 5))

    def test_errors(self):
        for text in ("2024-02-30", "24-01-01", "2024-13-01", "yesterday"):
            with self.assertRaises(ValueError, msg=text):
                parse_date(text)


class MonthsTest(unittest.TestCase):
    def test_days_in_month(self):
        self.assertEqual(days_in_month(2024, 2), 29)
        self.assertEqual(days_in_month(2023, 2), 28)
        self.assertEqual(days_in_month(2024, 12), 31)

    def test_add_months_clamps_to_the_month_end(self):
        self.assertEqual(add_months(date(2024, 1, 31), 1), date(2024, 2, 29))
        self.assertEqual(add_months(date(2023, 1, 31), 1), date(2023, 2, 28))
        self.assertEqual(add_months(date(2024, 3, 31), -1), date(2024, 2, 29))
        self.assertEqual(add_months(date(2024, 11, 15), 3), date(2025, 2, 15))
        self.assertEqual(add_months(date(2024, 1, 15), -13), date(2022, 12, 15))


class PeriodTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(parse_period("2024"), Period(date(2024, 1, 1), date(2025, 1, 1), "2024"))
        self.assertEqual(parse_period("2024-q2"), Period(date(2024, 4, 1), date(2024, 7, 1), "2024-Q2"))
        self.assertEqual(parse_period("2024-12"), Period(date(2024, 12, 1), date(2025, 1, 1), "2024-12"))
        self.assertEqual(parse_period("2024-02-29").days, 1)
        ranged = parse_period("2024-01-15..2024-02-15")
        self.assertEqual((ranged.start, ranged.end), (date(2024, 1, 15), date(2024, 2, 15)))

    def test_errors(self):
        for text in ("2024-13", "2024-Q5", "2024-02-01..2024-01-01", "soon"):
            with self.assertRaises(ValueError, msg=text):
                parse_period(text)

    def test_the_end_is_excluded(self):
        march = parse_period("2024-03")
        self.assertTrue(march.contains(date(2024, 3, 1)))
        self.assertTrue(march.contains(date(2024, 3, 31)))
        self.assertFalse(march.contains(date(2024, 4, 1)))
        self.assertFalse(march.contains(date(2024, 2, 29)))

    def test_months(self):
        months = parse_period("2024-01-15..2024-03-10").months()
        self.assertEqual([m.label for m in months], ["2024-01", "2024-02", "2024-03"])
        self.assertEqual(months[0].start, date(2024, 1, 15))
        self.assertEqual(months[-1].end, date(2024, 3, 10))
        self.assertEqual(len(parse_period("2024").months()), 12)

    def test_month_count(self):
        self.assertEqual(parse_period("2024-Q1").month_count(), 3)
        self.assertEqual(parse_period("2024").month_count(), 12)
        self.assertAlmostEqual(parse_period("2024-02-01..2024-02-15").month_count(), 14 / 29, places=5)

    def test_span(self):
        self.assertIsNone(span([]))
        whole = span([date(2024, 3, 9), date(2024, 1, 31)])
        self.assertEqual((whole.start, whole.end), (date(2024, 1, 1), date(2024, 4, 1)))


if __name__ == "__main__":
    unittest.main()
