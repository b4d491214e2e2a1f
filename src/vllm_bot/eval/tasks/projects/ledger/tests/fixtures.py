"""Journals the tests share."""

from ledger.ledger import Ledger

HOUSEHOLD = """\
account Assets:Bank:Checking
account Assets:Cash
account Expenses:Food:Groceries
account Expenses:Food:Restaurants
account Expenses:Rent
account Income:Salary
account Liabilities:Card
account Equity:Opening

commodity 1,000.00 EUR
P 2024-01-01 USD 0.90 EUR
P 2024-02-01 USD 0.95 EUR

2024-01-01 * Opening
    Assets:Bank:Checking      1,000.00 EUR
    Equity:Opening

2024-01-03 * Landlord | rent
    Expenses:Rent               700.00 EUR
    Assets:Bank:Checking

2024-01-10 * Grocer | weekly shop  ; food:
    Expenses:Food:Groceries      55.20 EUR
    Assets:Cash                 -10.00 EUR
    Assets:Bank:Checking

2024-01-20 ! Bistro | dinner  ; food:, with:anna
    Expenses:Food:Restaurants    32.50 EUR
    Liabilities:Card

2024-01-31 * Employer | salary
    Assets:Bank:Checking      2,000.00 EUR
    Income:Salary

2024-02-03 * Landlord | rent
    Expenses:Rent               700.00 EUR
    Assets:Bank:Checking

2024-02-14 * Bookshop  ; gift:
    Expenses:Food:Groceries      10.00 USD  ; note: chocolate
    Liabilities:Card
"""


def household() -> Ledger:
    return Ledger.from_text(HOUSEHOLD, "household.journal")
