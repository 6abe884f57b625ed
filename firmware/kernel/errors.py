"""Errors of the round kernel."""

from firmware.errors import EgmError


class KernelError(EgmError):
    """A round driven out of order (a trigger in the wrong state, a decision when none is awaited)."""
