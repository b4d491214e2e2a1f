"""Account names (`Assets:Bank:Checking`): their parts, parents and types, and the tree a balance
report draws, where each account's total includes its sub-accounts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ledger.money import MixedAmount

SEPARATOR = ":"
TYPES = {
    "assets": "asset",
    "asset": "asset",
    "liabilities": "liability",
    "liability": "liability",
    "equity": "equity",
    "income": "income",
    "revenue": "income",
    "revenues": "income",
    "expenses": "expense",
    "expense": "expense",
}


def validate(name: str) -> str:
    """`name` if it is a usable account name; ValueError saying why not."""
    if not name or name != name.strip():
        raise ValueError(f"an account name cannot be empty or start or end with a space: {name!r}")
    if "  " in name or "\t" in name:
        raise ValueError(f"an account name cannot hold two spaces or a tab: {name!r}")
    if any(not part.strip() for part in name.split(SEPARATOR)):
        raise ValueError(f"an account name cannot have an empty part: {name!r}")
    return name


def parts(name: str) -> list[str]:
    return name.split(SEPARATOR)


def depth(name: str) -> int:
    return len(parts(name))


def parent(name: str) -> str | None:
    """`Assets:Bank` for `Assets:Bank:Checking`; None for a top-level account."""
    head, sep, _ = name.rpartition(SEPARATOR)
    return head if sep else None


def ancestors(name: str) -> list[str]:
    """Every account above `name`, from the top: `Assets`, `Assets:Bank` for `Assets:Bank:Checking`."""
    names = parts(name)
    return [SEPARATOR.join(names[:i]) for i in range(1, len(names))]


def leaf(name: str) -> str:
    return parts(name)[-1]


def truncate(name: str, limit: int) -> str:
    """`name` cut to its first `limit` parts."""
    return SEPARATOR.join(parts(name)[:limit])


def is_under(name: str, other: str) -> bool:
    """Is `name` the account `other` or one of its sub-accounts?"""
    return name == other or name.startswith(other + SEPARATOR)


def account_type(name: str) -> str | None:
    """`asset`, `liability`, `equity`, `income` or `expense` by the top-level name, else None."""
    return TYPES.get(parts(name)[0].lower())


@dataclass
class Node:
    name: str
    own: MixedAmount = field(default_factory=MixedAmount)
    total: MixedAmount = field(default_factory=MixedAmount)
    children: dict[str, Node] = field(default_factory=dict)


class AccountTree:
    """Accounts with their own balances and their totals including sub-accounts."""

    def __init__(self, balances: dict[str, MixedAmount]) -> None:
        self.root = Node("")
        for name, amount in balances.items():
            node = self._node(name)
            node.own = node.own + amount
            for above in [self.root, *(self._node(a) for a in ancestors(name)), node]:
                above.total = above.total + amount

    def _node(self, name: str) -> Node:
        node = self.root
        for i, part in enumerate(parts(name)):
            key = SEPARATOR.join(parts(name)[: i + 1])
            node = node.children.setdefault(part, Node(key))
        return node

    def find(self, name: str) -> Node | None:
        node = self.root
        for part in parts(name):
            if part not in node.children:
                return None
            node = node.children[part]
        return node

    def walk(self, limit: int | None = None) -> Iterator[tuple[Node, int]]:
        """Every node depth first, sub-accounts sorted by name, with its depth (1 = top level)."""

        def visit(node: Node, level: int) -> Iterator[tuple[Node, int]]:
            for key in sorted(node.children):
                child = node.children[key]
                yield child, level
                if limit is None or level < limit:
                    yield from visit(child, level + 1)

        yield from visit(self.root, 1)

    @property
    def total(self) -> MixedAmount:
        return self.root.total
