"""ledger: plain-text accounting."""

__version__ = "0.9.0"
