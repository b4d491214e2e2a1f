"""Market prices (`P 2024-01-01 BTC 40000 USD`) and converting amounts with them: the latest price on
or before the day, or the inverse of a price quoted the other way round."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from ledger.errors import CommodityError
from ledger.money import Amount, MixedAmount


@dataclass
class PriceDB:
    # (commodity, in commodity) -> sorted [(day, price per unit)]
    _prices: dict[tuple[str, str], list[tuple[date, Decimal]]] = field(default_factory=dict)

    def add(self, day: date, commodity: str, price: Amount) -> None:
        """One unit of `commodity` cost `price` on `day` (a later entry for the same day wins)."""
        if price.commodity == commodity:
            raise ValueError(f"a price of {commodity} in {commodity} says nothing")
        entries = self._prices.setdefault((commodity, price.commodity), [])
        index = bisect.bisect_left(entries, (day,))
        if index < len(entries) and entries[index][0] == day:
            entries[index] = (day, price.quantity)
        else:
            entries.insert(index, (day, price.quantity))

    def _latest(self, source: str, target: str, day: date) -> Decimal | None:
        entries = self._prices.get((source, target), [])
        index = bisect.bisect_right(entries, (day, Decimal("Infinity")))
        return entries[index - 1][1] if index else None

    def rate(self, source: str, target: str, day: date) -> Decimal | None:
        """How many `target` one `source` was worth on `day`; None when no price says."""
        if source == target:
            return Decimal(1)
        direct = self._latest(source, target, day)
        if direct is not None:
            return direct
        inverse = self._latest(target, source, day)
        if inverse is not None and inverse != 0:
            return 1 / inverse
        return None

    def convert(self, amount: Amount, target: str, day: date) -> Amount:
        rate = self.rate(amount.commodity, target, day)
        if rate is None:
            raise CommodityError(f"no price of {amount.commodity} in {target} on or before {day}")
        return Amount(amount.quantity * rate, target)

    def convert_mixed(self, mixed: MixedAmount, target: str, day: date) -> MixedAmount:
        return MixedAmount(self.convert(a, target, day) for a in mixed.amounts())

    def __len__(self) -> int:
        return sum(len(entries) for entries in self._prices.values())
