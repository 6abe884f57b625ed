"""A card source with a safe point before every card: where a tilt stops play.

The round kernel deals by asking its source for cards; wrapping the source in :class:`GatedSource`
makes *every card* a safe point. Before each card the terminal's ``before_card`` runs: it paces the
deal (the table's card delay), handles the cabinet's inputs (doors, devices, commands), and does
not return while the cabinet cannot continue the round (a tilt, the technician's key). The round
kernel is not told: it simply waits for its next card, so a round interrupted mid-war finishes
exactly as it would have, with the cards it would have had, once the tilt clears.
"""

from __future__ import annotations

from collections.abc import Callable

from firmware.cards.card import Card
from firmware.cards.source import CardSource


class GatedSource:
    """``inner`` with ``before_card()`` called before each card it deals."""

    def __init__(self, inner: CardSource, before_card: Callable[[], None]) -> None:
        self.inner = inner
        self._before_card = before_card

    @property
    def kind(self) -> str:
        return self.inner.kind

    @property
    def dealt(self) -> list[Card]:
        return self.inner.dealt

    @property
    def exhaustion_is_misdeal(self) -> bool:
        return self.inner.exhaustion_is_misdeal

    def new_round(self) -> None:
        self.inner.new_round()

    def next_card(self) -> Card:
        self._before_card()
        return self.inner.next_card()
