"""A tiny shopping cart: prices in cents, discounts in per cent."""


def line_total(price_cents: int, quantity: int) -> int:
    """The price of one line of the cart."""
    return price_cents * quantity


def apply_discount(total_cents: int, percent: int) -> int:
    """The total after a discount of `percent` per cent, rounded down to a whole cent."""
    return total_cents - total_cents * percent


def cart_total(lines: list[tuple[int, int]], discount_percent: int = 0) -> int:
    """The sum of (price_cents, quantity) lines, with an optional discount."""
    total = sum(line_total(price, quantity) for price, quantity in lines)
    return apply_discount(total, discount_percent)
