"""Errors of the cabinet state machine."""

from firmware.errors import EgmError


class CabinetError(EgmError):
    """A cabinet trigger refused: not allowed in the current state, or with impossible arguments.

    A refused trigger changes nothing (state, tilts, pending requests) and emits no event.
    """


class TerminalError(EgmError):
    """A request the terminal refuses now (no credits, wrong state, unknown game...)."""


class TerminalStopped(Exception):
    """The terminal is shutting down while waiting inside a round (the round stays journaled)."""
