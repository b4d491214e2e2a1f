"""The errors of the ledger package: each says what went wrong and, when it comes from a file, where."""


class LedgerError(Exception):
    """Base class of every error the ledger reports to its user."""


class ParseError(LedgerError):
    """A journal, price or rules file could not be read."""

    def __init__(self, message: str, line: int | None = None, source: str | None = None) -> None:
        self.message = message
        self.line = line
        self.source = source
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ""
        if self.source is not None:
            where = self.source
        if self.line is not None:
            where = f"{where}:{self.line}" if where else f"line {self.line}"
        return f"{where}: {self.message}" if where else self.message


class BalanceError(LedgerError):
    """A transaction whose postings do not add up to zero."""


class QueryError(LedgerError):
    """A query term that cannot be understood."""


class CommodityError(LedgerError):
    """Amounts of different commodities where one was needed."""
