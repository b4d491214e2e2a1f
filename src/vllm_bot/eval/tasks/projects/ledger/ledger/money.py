"""Amounts: a quantity of one commodity (`Amount`), and several commodities at once (`MixedAmount`,
what a balance of accounts in two currencies is). Quantities are Decimals, never floats."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from ledger.commodities import DEFAULT, Commodities
from ledger.errors import CommodityError

AMOUNT = re.compile(
    r"^(?P<neg1>-)?\s*(?P<pre>[A-Za-z]+(?=\s)|[^\w\s.,+-])?\s*(?P<neg2>-)?\s*"
    r"(?P<number>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)"
    r"\s*(?P<post>[A-Za-z]+|[^\w\s.,+-])?$"
)


@dataclass(frozen=True)
class Amount:
    quantity: Decimal
    commodity: str = ""

    def _same(self, other: Amount) -> None:
        if other.commodity != self.commodity:
            raise CommodityError(f"cannot combine {self.commodity or 'no commodity'} with {other.commodity}")

    def __add__(self, other: Amount) -> Amount:
        self._same(other)
        return Amount(self.quantity + other.quantity, self.commodity)

    def __sub__(self, other: Amount) -> Amount:
        self._same(other)
        return Amount(self.quantity - other.quantity, self.commodity)

    def __neg__(self) -> Amount:
        return Amount(-self.quantity, self.commodity)

    def __mul__(self, factor: Decimal | int) -> Amount:
        return Amount(self.quantity * Decimal(factor), self.commodity)

    def is_zero(self, commodities: Commodities | None = None) -> bool:
        return (commodities or DEFAULT).quantize(self.commodity, self.quantity) == 0

    def rounded(self, commodities: Commodities | None = None) -> Amount:
        return Amount((commodities or DEFAULT).quantize(self.commodity, self.quantity), self.commodity)

    def format(self, commodities: Commodities | None = None) -> str:
        """As a person writes it: `-$1,204.50`, `12.00 EUR`, `¥1200`."""
        known = commodities or DEFAULT
        style = known.get(self.commodity)
        number = format_quantity(
            known.quantize(self.commodity, self.quantity), style.precision, style.thousands
        )
        if not self.commodity:
            return number
        if style.prefix:
            sign, digits = ("-", number[1:]) if number.startswith("-") else ("", number)
            return f"{sign}{self.commodity}{digits}"
        return f"{number} {self.commodity}"

    def __str__(self) -> str:
        return self.format()


def format_quantity(quantity: Decimal, precision: int, thousands: bool = False) -> str:
    """`quantity` with exactly `precision` decimals, thousands grouped by commas when asked."""
    text = f"{abs(quantity):,.{precision}f}" if thousands else f"{abs(quantity):.{precision}f}"
    return ("-" if quantity < 0 else "") + text


def parse_amount(text: str) -> Amount:
    """`12.50 EUR`, `EUR 12.50`, `$-3`, `-$1,000.00`, `42` -> Amount; ValueError otherwise."""
    match = AMOUNT.match(text.strip())
    if not match or (match["pre"] and match["post"]) or (match["neg1"] and match["neg2"]):
        raise ValueError(f"not an amount: {text.strip()!r}")
    try:
        quantity = Decimal(match["number"].replace(",", ""))
    except InvalidOperation:
        raise ValueError(f"not an amount: {text.strip()!r}") from None
    if match["neg1"] or match["neg2"]:
        quantity = -quantity
    return Amount(quantity, match["pre"] or match["post"] or "")


class MixedAmount:
    """A sum of amounts in any number of commodities. Adding never changes an existing value."""

    def __init__(self, amounts: Iterable[Amount] = ()) -> None:
        self._by: dict[str, Decimal] = {}
        for amount in amounts:
            self._by[amount.commodity] = self._by.get(amount.commodity, Decimal(0)) + amount.quantity

    def __add__(self, other: Amount | MixedAmount) -> MixedAmount:
        added = other.amounts(keep_zero=True) if isinstance(other, MixedAmount) else [other]
        return MixedAmount([*self.amounts(keep_zero=True), *added])

    def __sub__(self, other: Amount | MixedAmount) -> MixedAmount:
        return self + (-other)

    def __neg__(self) -> MixedAmount:
        return MixedAmount(-a for a in self.amounts(keep_zero=True))

    def __truediv__(self, count: int) -> MixedAmount:
        """Each commodity's quantity divided by `count` (a mean over `count` months, say)."""
        if count <= 0:
            raise ValueError(f"cannot divide an amount into {count} parts")
        return MixedAmount(Amount(a.quantity / count, a.commodity) for a in self.amounts(keep_zero=True))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Amount):
            other = MixedAmount([other])
        if not isinstance(other, MixedAmount):
            return NotImplemented
        return self.amounts() == other.amounts()

    def __hash__(self) -> int:
        return hash(tuple(self.amounts()))

    def amounts(self, keep_zero: bool = False) -> list[Amount]:
        """The amounts by commodity, in the commodities' order (zero ones only when asked)."""
        return [Amount(q, c) for c, q in sorted(self._by.items()) if keep_zero or q != 0]

    def get(self, commodity: str) -> Decimal:
        return self._by.get(commodity, Decimal(0))

    def commodities(self) -> list[str]:
        return [a.commodity for a in self.amounts()]

    def is_zero(self, commodities: Commodities | None = None) -> bool:
        return all(a.is_zero(commodities) for a in self.amounts())

    def rounded(self, commodities: Commodities | None = None) -> MixedAmount:
        return MixedAmount(a.rounded(commodities) for a in self.amounts())

    def single(self) -> Amount:
        """The one amount this holds (zero without commodity when empty); CommodityError for several."""
        amounts = self.amounts()
        if len(amounts) > 1:
            raise CommodityError(f"expected one commodity, got {', '.join(a.commodity for a in amounts)}")
        return amounts[0] if amounts else Amount(Decimal(0))

    def format(self, commodities: Commodities | None = None, separator: str = ", ") -> str:
        shown = [a.format(commodities) for a in self.amounts() if not a.is_zero(commodities)]
        return separator.join(shown) if shown else "0"

    def __str__(self) -> str:
        return self.format()

    def __repr__(self) -> str:
        return f"MixedAmount({self.amounts()!r})"
