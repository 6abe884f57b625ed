"""Errors of critical memory."""

from firmware.errors import EgmError


class LedgerError(EgmError):
    """Base of the critical-memory layer's errors."""


class CriticalMemoryError(LedgerError):
    """Critical memory cannot be trusted or written: the cabinet locks up (tilt) and pays nothing.

    Raised when both copies of a record are bad or disagree, when the per-machine key is missing,
    and when a write fails (disk full, I/O error).
    """


class LedgerStateError(LedgerError):
    """An operation that the ledger's state does not allow (not enough credits, a round in progress)."""
