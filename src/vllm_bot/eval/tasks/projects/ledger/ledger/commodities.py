"""Commodities (currencies, shares, coins): how many decimal places each shows, whether its symbol
goes before the number, and whether thousands are grouped. A journal declares its own with
`commodity 1,000.00 EUR`; the others use the defaults below."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

DEFAULT_PRECISION = 2
EXAMPLE = re.compile(
    r"^(?P<pre>[^\d\s.,-]+)?\s*(?P<number>[\d,]*(?:\.(?P<decimals>\d*))?)\s*(?P<post>[^\d\s.,-]+)?$"
)


@dataclass(frozen=True)
class Commodity:
    symbol: str
    precision: int = DEFAULT_PRECISION
    prefix: bool = False  # "$12.00" rather than "12.00 USD"
    thousands: bool = False  # "1,000.00" rather than "1000.00"


DEFAULTS = {
    c.symbol: c
    for c in (
        Commodity("USD"),
        Commodity("EUR"),
        Commodity("GBP"),
        Commodity("CHF"),
        Commodity("JPY", 0),
        Commodity("BTC", 8),
        Commodity("$", prefix=True),
        Commodity("€", prefix=True),
        Commodity("£", prefix=True),
        Commodity("¥", 0, prefix=True),
    )
}


class Commodities:
    """The commodities one journal knows: the defaults and its own declarations."""

    def __init__(self) -> None:
        self._known: dict[str, Commodity] = dict(DEFAULTS)

    def get(self, symbol: str) -> Commodity:
        """The commodity named `symbol` (an undeclared one shows two decimals, symbol after)."""
        return self._known.get(symbol) or Commodity(symbol)

    def declare(self, commodity: Commodity) -> None:
        self._known[commodity.symbol] = commodity

    def declare_example(self, text: str) -> Commodity:
        """Declare a commodity from an example amount (`1,000.00 EUR`, `$1000.00`, `JPY`)."""
        text = text.strip()
        if re.fullmatch(r"[A-Za-z]+", text):
            commodity = Commodity(text)
        else:
            match = EXAMPLE.match(text)
            if not match or bool(match["pre"]) == bool(match["post"]):
                raise ValueError(f"a commodity example needs one symbol and a number, not {text!r}")
            decimals = match["decimals"]
            commodity = Commodity(
                symbol=match["pre"] or match["post"],
                precision=len(decimals) if decimals is not None else 0,
                prefix=bool(match["pre"]),
                thousands="," in match["number"],
            )
        self.declare(commodity)
        return commodity

    def precision(self, symbol: str) -> int:
        return self.get(symbol).precision

    def quantize(self, symbol: str, quantity: Decimal) -> Decimal:
        """`quantity` rounded to the commodity's precision (half up, as a bank does)."""
        step = Decimal(1).scaleb(-self.precision(symbol))
        return quantity.quantize(step, rounding=ROUND_HALF_UP)

    def symbols(self) -> list[str]:
        return sorted(self._known)


DEFAULT = Commodities()  # for amounts shown outside any journal
