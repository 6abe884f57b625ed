"""The card-reading shoe: the cards a dealer draws, in the order drawn, for the round to deal.

Events: :class:`~hal.events.CardDrawn`, :class:`~hal.events.CardBurned`,
:class:`~hal.events.ShoeStatus` (empty, cut card), :class:`~hal.events.ShoeDoor`;
:class:`~hal.events.DeviceFault` (misread, state lost) and its clearing.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from firmware.cards.card import Card
from hal.base import Device


class CardShoe(Device):
    """What the cabinet (and :class:`~firmware.cards.source.PhysicalShoeSource`) asks of a shoe."""

    device_class: ClassVar[str] = "shoe"

    @abstractmethod
    def read_card(self, timeout: float | None = None) -> Card:
        """The next card drawn, waiting up to ``timeout`` s (None: forever). A misread, an empty
        shoe or a shoe that lost its state raises ``ShoeExhausted`` (the round is a misdeal)."""

    @property
    @abstractmethod
    def queued(self) -> int:
        """Cards (and read errors) drawn and not yet taken by :meth:`read_card`."""


__all__ = ["CardShoe"]
