"""Errors of the games layer."""

from firmware.errors import EgmError


class GameError(EgmError):
    """Base of the games layer's errors."""


class OptionError(GameError):
    """A game option that is unknown, malformed or impossible; the message names the option."""


class WagerError(GameError):
    """A wager refused before any card is dealt (unknown wager, limits, credits, required pairs)."""


class DecisionError(GameError):
    """A player decision that is not allowed now (wrong seat, unknown action, illegal hand setting)."""
