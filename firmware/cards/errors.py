"""Errors of the cards layer."""

from firmware.errors import EgmError


class CardError(EgmError, ValueError):
    """A card string or card list that cannot be read."""


class ShoeExhausted(CardError):
    """A card source has no card left to deal (a stacked list ran out, a physical shoe is empty)."""
